//! The files an index offers for the exact versions of an environment's index-sourced
//! distributions, with their hashes, for `environment/lock`, asked of the backend's installer
//! for `name==version` pins against that index:
//! - uv: `uv pip compile --no-deps --format pylock.toml`, every file of each version. uv takes
//!   each hash from the index page, or downloads the file to compute it. With `--no-deps` and
//!   exact pins it reads no distribution's metadata, so it builds nothing.
//! - pip: `pip install --dry-run --report`, the one wheel pip would install for the
//!   environment's interpreter (`--only-binary :all:`, so that no package's build runs; pip
//!   computes a hash the index page does not give).
//!
//! A pin the installer can't report (the index is unreachable, the version is gone from it, it
//! has no wheel for pip) leaves that distribution without files: its lock entry names the
//! index and the version alone. uv is asked again pin by pin when an index's run fails; pip,
//! a second or more per run, is not.

use std::collections::BTreeMap;
use std::path::Path;

use tokio::process::Command;

use serde::Deserialize;

use crate::helper::{requirements_file, succeeded};
use crate::output::INSTALLER_ENV;
use crate::pylock::{check_name_and_version, index_files_in, is_plain_url};
use crate::pylock::{IndexFiles, KnownIndexFiles};
use crate::Installer;

/// One index-sourced distribution, as its environment records it.
#[derive(Debug, Clone)]
pub(crate) struct IndexSourced {
    pub name: String,
    pub version: String,
    pub index: String,
}

/// The files known for `distributions`, asked of `installer` for the interpreter `python`: one
/// run per index, and with uv one per distribution of an index whose run failed.
pub(crate) async fn index_files(
    installer: &Installer,
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
        match ask(installer, python, &index, &group).await {
            Ok(files) => known.extend(files),
            Err(reason) if group.len() == 1 || !matches!(installer, Installer::Uv(_)) => {
                group.iter().for_each(|one| warn(one, &reason))
            }
            Err(_) => {
                for one in &group {
                    match ask(installer, python, &index, std::slice::from_ref(one)).await {
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
    check_name_and_version(&distribution.name, &distribution.version).is_ok()
        && is_plain_url(&distribution.index)
}

fn warn(distribution: &IndexSourced, reason: &str) {
    tracing::warn!(
        name = %distribution.name,
        version = %distribution.version,
        index = %distribution.index,
        "the lock lists no files for this distribution: {reason}"
    );
}

async fn ask(
    installer: &Installer,
    python: &Path,
    index: &str,
    group: &[IndexSourced],
) -> Result<KnownIndexFiles, String> {
    let pins = group.iter().map(|d| format!("{}=={}", d.name, d.version));
    let requirements = requirements_file(pins).map_err(|e| format!("writing the pins: {e}"))?;
    let (argv, report) = installer
        .index_report(python, index, requirements.path())
        .map_err(|e| format!("making the report's file: {e}"))?;
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).envs(INSTALLER_ENV);
    let output = succeeded(&mut command, usize::MAX).await?;
    match report {
        None => index_files_in(&String::from_utf8_lossy(&output.stdout)),
        Some(report) => {
            let text =
                std::fs::read(report.path()).map_err(|e| format!("reading pip's report: {e}"))?;
            pip_report_files(&text)
        }
    }
}

/// pip's installation report (`--report`), as far as the lock needs it.
#[derive(Deserialize)]
struct PipReport {
    #[serde(default)]
    install: Vec<PipReportItem>,
}

#[derive(Deserialize)]
struct PipReportItem {
    download_info: PipDownloadInfo,
    metadata: PipMetadata,
}

#[derive(Deserialize)]
struct PipDownloadInfo {
    url: String,
    #[serde(default)]
    archive_info: Option<PipArchiveInfo>,
}

#[derive(Deserialize)]
struct PipArchiveInfo {
    #[serde(default)]
    hashes: BTreeMap<String, String>,
    /// `sha256=<hex>`, what pip before 23 wrote instead of `hashes`.
    #[serde(default)]
    hash: Option<String>,
}

#[derive(Deserialize)]
struct PipMetadata {
    name: String,
    version: String,
}

/// The wheels a pip report names, each with its URL and SHA-256, by normalized name and version.
fn pip_report_files(text: &[u8]) -> Result<KnownIndexFiles, String> {
    let report: PipReport =
        serde_json::from_slice(text).map_err(|e| format!("pip's report does not read: {e}"))?;
    Ok(report
        .install
        .into_iter()
        .filter_map(|item| {
            let archive = item.download_info.archive_info?;
            let legacy = archive
                .hash
                .as_deref()
                .and_then(|h| h.strip_prefix("sha256="));
            let sha256 = archive
                .hashes
                .get("sha256")
                .map(String::as_str)
                .or(legacy)?;
            let files = IndexFiles::one_wheel(item.download_info.url, sha256)?;
            let name = crate::packages::normalize_name(&item.metadata.name);
            Some(((name, item.metadata.version), files))
        })
        .collect())
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
    fn a_pip_report_gives_each_wheel_with_its_hash() {
        let hash = "ab".repeat(32);
        let report = format!(
            r#"{{"version": "1", "install": [
                {{"download_info": {{"url": "https://files.example.org/demo-1.0-py3-none-any.whl",
                  "archive_info": {{"hash": "sha256={hash}", "hashes": {{"sha256": "{hash}"}}}}}},
                  "metadata": {{"name": "Demo", "version": "1.0"}}}},
                {{"download_info": {{"url": "https://files.example.org/old-2.0-py3-none-any.whl",
                  "archive_info": {{"hash": "sha256={hash}"}}}},
                  "metadata": {{"name": "old", "version": "2.0"}}}},
                {{"download_info": {{"url": "https://files.example.org/other-1.0.tar.gz",
                  "archive_info": {{}}}},
                  "metadata": {{"name": "other", "version": "1.0"}}}}
            ]}}"#
        );
        let files = pip_report_files(report.as_bytes()).expect("the report reads");
        assert_eq!(files.len(), 2, "{files:?}");
        assert!(files.contains_key(&("demo".to_owned(), "1.0".to_owned())));
        assert!(files.contains_key(&("old".to_owned(), "2.0".to_owned())));
        assert!(pip_report_files(b"not json").is_err());
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
