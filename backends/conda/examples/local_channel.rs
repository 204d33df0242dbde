//! Builds a local conda channel over pyenv's interpreters and prints its `file://` URL, for
//! trying the conda backend without a network:
//!
//! ```text
//! cargo run -p wsp-backend-conda --example local_channel -- /tmp/channel 3.11.7 3.12.1
//! wsp --backend conda create demo --python 3.12 --channel "$(that URL)"
//! ```
//!
//! Without versions, every `X.Y.Z` version pyenv has is packaged.

use std::path::PathBuf;
use std::process::ExitCode;

use wsp_testing::conda::{build_local_channel, pyenv_root, PythonBuild};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: local_channel <channel dir> [X.Y.Z ...]");
        return ExitCode::from(2);
    };
    let mut versions: Vec<String> = args.collect();
    if versions.is_empty() {
        versions = pyenv_versions();
    }
    let mut builds = Vec::new();
    for version in &versions {
        match PythonBuild::from_pyenv(version) {
            Some(build) if build.major_minor().is_some() => builds.push(build),
            _ => {
                eprintln!("pyenv has no CPython {version}");
                return ExitCode::FAILURE;
            }
        }
    }
    match build_local_channel(&dir, &builds) {
        Ok(url) => {
            println!("{url}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("building the channel in {}: {error}", dir.display());
            ExitCode::FAILURE
        }
    }
}

/// The `X.Y.Z` versions under pyenv's `versions` directory that have a `bin/pythonX.Y`.
fn pyenv_versions() -> Vec<String> {
    let Some(root) = pyenv_root() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(root.join("versions")) else {
        return Vec::new();
    };
    let mut versions: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|version| {
            PythonBuild::from_pyenv(version).is_some_and(|b| b.major_minor().is_some())
        })
        .collect();
    versions.sort();
    versions
}
