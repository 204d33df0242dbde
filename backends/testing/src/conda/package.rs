//! Writing one `python` package: staging its files and metadata, then packing them as a
//! `.tar.bz2` archive.

use std::path::{Path, PathBuf};

use rattler_conda_types::{PackageRecord, Subdir};
use rattler_digest::{compute_file_digest, Sha256};
use serde_json::json;

use super::staging::{create_parent, hex, pack, staging_dir, write_info, TIMESTAMP_MS};
use super::{ChannelBuildError, PythonBuild, BUILD_STRING};

/// One file of the package, relative to its root.
enum Entry {
    /// A regular file with these contents.
    File(PathBuf, String),
    /// A symlink to this target.
    Symlink(PathBuf, PathBuf),
}

impl Entry {
    fn path(&self) -> &Path {
        match self {
            Entry::File(path, _) | Entry::Symlink(path, _) => path,
        }
    }
}

/// Writes `python-<version>-0.tar.bz2` for `build` into `subdir_dir` (staging it in a
/// temporary directory under `channel_dir`) and returns its file name and repodata record.
pub(super) fn write_python_package(
    channel_dir: &Path,
    subdir_dir: &Path,
    subdir: Subdir,
    build: &PythonBuild,
) -> Result<(String, PackageRecord), ChannelBuildError> {
    let major_minor = build
        .major_minor()
        .ok_or_else(|| ChannelBuildError::InvalidVersion(build.version.clone()))?;
    let interpreter = std::path::absolute(&build.interpreter).map_err(ChannelBuildError::io(
        format!("resolving {}", build.interpreter.display()),
    ))?;
    let staging = staging_dir(channel_dir)?;
    let root = staging.path();

    let entries = payload(major_minor, &build.version, &interpreter);
    for entry in &entries {
        stage(root, entry)?;
    }
    let index_json = index_json(&build.version, subdir);
    let mut staged = stage_metadata(root, &entries, &index_json)?;
    staged.extend(entries.iter().map(|entry| root.join(entry.path())));
    let file_name = format!("python-{}-{BUILD_STRING}.tar.bz2", build.version);
    pack(subdir_dir, file_name, root, &staged, &index_json)
}

/// The files a `python` package over `interpreter` installs.
fn payload(major_minor: &str, version: &str, interpreter: &Path) -> Vec<Entry> {
    let versioned = format!("python{major_minor}");
    let home = interpreter.parent().unwrap_or(Path::new("/"));
    let pyvenv_cfg = format!(
        "home = {}\ninclude-system-site-packages = false\nversion = {version}\n",
        home.display()
    );
    let readme = "This directory exists so that the prefix has a site-packages directory.\n";
    vec![
        Entry::Symlink(PathBuf::from("bin/python"), PathBuf::from(&versioned)),
        Entry::Symlink(PathBuf::from("bin/python3"), PathBuf::from(&versioned)),
        Entry::Symlink(
            PathBuf::from(format!("bin/{versioned}")),
            interpreter.to_path_buf(),
        ),
        Entry::File(
            PathBuf::from(format!("lib/{versioned}/site-packages/README")),
            readme.to_owned(),
        ),
        Entry::File(PathBuf::from("pyvenv.cfg"), pyvenv_cfg),
    ]
}

/// The package's `info/index.json`.
fn index_json(version: &str, subdir: Subdir) -> serde_json::Value {
    json!({
        "arch": subdir.arch().map(|arch| arch.as_str()),
        "build": BUILD_STRING,
        "build_number": 0,
        "depends": [],
        "license": "PSF-2.0",
        "name": "python",
        "platform": subdir.only_platform(),
        "subdir": subdir.as_str(),
        "timestamp": TIMESTAMP_MS,
        "version": version,
    })
}

/// Writes one payload entry under `root`.
fn stage(root: &Path, entry: &Entry) -> Result<(), ChannelBuildError> {
    let path = root.join(entry.path());
    create_parent(&path)?;
    match entry {
        Entry::File(_, contents) => std::fs::write(&path, contents),
        Entry::Symlink(_, target) => std::os::unix::fs::symlink(target, &path),
    }
    .map_err(ChannelBuildError::io(format!("writing {}", path.display())))
}

/// Writes `info/index.json`, `info/paths.json` and `info/files` for `entries` under `root`;
/// returns their paths.
fn stage_metadata(
    root: &Path,
    entries: &[Entry],
    index_json: &serde_json::Value,
) -> Result<Vec<PathBuf>, ChannelBuildError> {
    let mut paths = Vec::new();
    for entry in entries {
        let relative = entry.path().to_string_lossy().into_owned();
        paths.push(match entry {
            Entry::File(path, contents) => {
                let digest = compute_file_digest::<Sha256>(root.join(path))
                    .map_err(ChannelBuildError::io(format!("hashing {}", path.display())))?;
                json!({
                    "_path": relative,
                    "path_type": "hardlink",
                    "sha256": hex(&digest),
                    "size_in_bytes": contents.len(),
                })
            }
            Entry::Symlink(..) => json!({ "_path": relative, "path_type": "softlink" }),
        });
    }
    let files: String = entries
        .iter()
        .map(|entry| format!("{}\n", entry.path().display()))
        .collect();
    let paths_json = json!({ "paths": paths, "paths_version": 1 });
    write_info(
        root,
        [
            ("index.json", index_json.to_string()),
            ("paths.json", paths_json.to_string()),
            ("files", files),
        ],
    )
}
