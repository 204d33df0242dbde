//! The files an index offers for the exact versions of an environment's index-sourced
//! distributions, with their hashes, for `environment/lock`: what
//! `uv pip compile --no-deps --format pylock.toml` reports for `name==version` pins against
//! that index. uv takes each hash from the index page, or downloads the file to compute it.
//!
//! With `--no-deps` and exact pins uv reads no distribution's metadata, so it builds nothing
//! and runs nothing from the index. A pin uv can't report (the index is unreachable, the
//! version is gone from it) leaves that distribution without files: its lock entry names the
//! index and the version alone, as when no uv is available.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use tokio::process::Command;

use crate::helper::captured_output;
use crate::pylock::{check_name_and_version, index_files_in, KnownIndexFiles};

/// One index-sourced distribution, as its environment records it.
#[derive(Debug, Clone)]
pub(crate) struct IndexSourced {
    pub name: String,
    pub version: String,
    pub index: String,
}

/// The files known for `distributions`, asked of `uv` for the interpreter `python`: one uv run
/// per index, and one per distribution of an index whose run failed.
pub(crate) async fn index_files(
    uv: &Path,
    python: &Path,
    distributions: Vec<IndexSourced>,
) -> KnownIndexFiles {
    let mut by_index: BTreeMap<String, Vec<IndexSourced>> = BTreeMap::new();
    for distribution in distributions.into_iter().filter(is_plain) {
        by_index
            .entry(distribution.index.clone())
            .or_default()
            .push(distribution);
    }
    let mut known = KnownIndexFiles::new();
    for (index, group) in by_index {
        match compile(uv, python, &index, &group).await {
            Ok(files) => known.extend(files),
            Err(reason) if group.len() == 1 => warn(&group[0], &reason),
            Err(_) => {
                for one in &group {
                    match compile(uv, python, &index, std::slice::from_ref(one)).await {
                        Ok(files) => known.extend(files),
                        Err(reason) => warn(one, &reason),
                    }
                }
            }
        }
    }
    known
}

/// A name, version and index URL that go into a requirement line and an argument as they
/// are. They come from the environment's own files, which are untrusted.
fn is_plain(distribution: &IndexSourced) -> bool {
    let url = &distribution.index;
    check_name_and_version(&distribution.name, &distribution.version).is_ok()
        && ["http://", "https://", "file://"]
            .iter()
            .any(|scheme| url.starts_with(scheme))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn warn(distribution: &IndexSourced, reason: &str) {
    tracing::warn!(
        name = %distribution.name,
        version = %distribution.version,
        index = %distribution.index,
        "the lock lists no files for this distribution: {reason}"
    );
}

async fn compile(
    uv: &Path,
    python: &Path,
    index: &str,
    group: &[IndexSourced],
) -> Result<KnownIndexFiles, String> {
    let requirements = requirements_file(group).map_err(|e| format!("writing the pins: {e}"))?;
    let mut command = Command::new(uv);
    command
        .args(["pip", "compile", "--no-config", "--no-deps", "--quiet"])
        .args(["--format", "pylock.toml", "--python"])
        .arg(python)
        .arg(format!("--index-url={index}"))
        .arg(requirements.path())
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_PROGRESS", "1");
    let output = captured_output(&mut command)
        .await
        .map_err(|e| format!("running {}: {e}", uv.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(stderr.trim().to_owned());
    }
    index_files_in(&String::from_utf8_lossy(&output.stdout))
}

fn requirements_file(group: &[IndexSourced]) -> std::io::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new()
        .prefix("wsp-lock-pins-")
        .suffix(".txt")
        .tempfile()?;
    for distribution in group {
        writeln!(file, "{}=={}", distribution.name, distribution.version)?;
    }
    file.flush()?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sourced(name: &str, version: &str, index: &str) -> IndexSourced {
        IndexSourced {
            name: name.into(),
            version: version.into(),
            index: index.into(),
        }
    }

    #[test]
    fn only_plain_names_versions_and_index_urls_reach_uv() {
        let index = "https://pypi.org/simple";
        assert!(is_plain(&sourced("Demo.pkg_2", "1!2.0+local", index)));
        assert!(is_plain(&sourced("demo", "1.0", "file:///srv/simple")));
        for bad in [
            sourced("demo\n--index-url", "1.0", index),
            sourced("-r", "1.0", index),
            sourced("demo", "1.0;python_version>'3'", index),
            sourced("demo", "", index),
            sourced("demo", "1.0", "--index-url=http://elsewhere"),
            sourced("demo", "1.0", "https://pypi.org/simple\n-r x"),
            sourced("demo", "1.0", "ftp://example.org"),
        ] {
            assert!(!is_plain(&bad), "{bad:?}");
        }
    }
}
