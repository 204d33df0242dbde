//! Describing a prefix: its conda packages (`conda-meta/*.json`) and the Python distributions
//! in its `site-packages` (`*.dist-info`, `*.egg-info`), merged by normalized name.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use wsp_protocol::FailureReason;

use wsp_backend::{BackendError, Description};
use wsp_install::packages::{normalize_name, scan, site_packages_dirs};
use wsp_protocol::Package;

/// The fields of a `conda-meta/*.json` record that a description needs.
#[derive(serde::Deserialize)]
struct CondaMetaRecord {
    name: String,
    version: String,
}

/// Describes the prefix at `root`.
pub(crate) async fn describe(root: &Path) -> Result<Description, BackendError> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || describe_blocking(&root))
        .await
        .map_err(|error| {
            BackendError::caused_by(
                FailureReason::DescribeFailed,
                "describing the prefix",
                error,
            )
        })?
}

fn describe_blocking(root: &Path) -> Result<Description, BackendError> {
    let failed = |what: &str, error: io::Error| {
        BackendError::caused_by(
            FailureReason::DescribeFailed,
            format!("reading {what}"),
            error,
        )
    };
    let conda = conda_packages(root).map_err(|error| failed("conda-meta", error))?;
    let python = scan(&site_packages_dirs(root)).map_err(|error| failed("site-packages", error))?;
    Ok(Description {
        interpreter_path: root.join("bin").join("python"),
        installed_packages: merge(conda, python),
    })
}

/// The `(name, version)` of every package record in `<root>/conda-meta`. A prefix without
/// that directory, or whose `conda-meta` is a symlink, has none; a record that is not valid
/// JSON is skipped with a warning.
pub(crate) fn conda_packages(root: &Path) -> io::Result<Vec<Package>> {
    let dir = root.join("conda-meta");
    // A `conda-meta` that is a symlink (a command may plant one) is not followed.
    if std::fs::symlink_metadata(&dir).is_ok_and(|metadata| metadata.is_symlink()) {
        tracing::warn!("{} is a symlink; it is not followed", dir.display());
        return Ok(Vec::new());
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            paths.push(path);
        }
    }
    let mut packages = Vec::new();
    for path in paths {
        // An environment's files are untrusted: regular files only, never followed, bounded.
        let text = match wsp_install::packages::read_untrusted_file(&path, CONDA_META_LIMIT) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
                tracing::warn!("skipping {}: {error}", path.display());
                continue;
            }
            Err(error) => return Err(error),
        };
        match serde_json::from_slice::<CondaMetaRecord>(&text) {
            Ok(record) => packages.push(Package {
                name: record.name,
                version: record.version,
            }),
            Err(error) => tracing::warn!("skipping {}: {error}", path.display()),
        }
    }
    Ok(packages)
}

/// The largest `conda-meta/*.json` read; a record is a few KiB, its `files` list rarely more
/// than a few MiB.
const CONDA_META_LIMIT: u64 = 64 << 20;

/// One list sorted by normalized name: a distribution whose normalized name is also a conda
/// package's appears once, as its Python metadata spells it.
pub(crate) fn merge(conda: Vec<Package>, python: Vec<Package>) -> Vec<Package> {
    let mut by_name: BTreeMap<String, Vec<Package>> = BTreeMap::new();
    for package in conda {
        by_name
            .entry(normalize_name(&package.name))
            .or_default()
            .push(package);
    }
    let mut python_by_name: BTreeMap<String, Vec<Package>> = BTreeMap::new();
    for package in python {
        python_by_name
            .entry(normalize_name(&package.name))
            .or_default()
            .push(package);
    }
    by_name.extend(python_by_name);
    by_name
        .into_values()
        .flat_map(|mut packages| {
            packages.sort_by(|a, b| a.version.cmp(&b.version));
            packages.dedup();
            packages
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(name: &str, version: &str) -> Package {
        Package {
            name: name.into(),
            version: version.into(),
        }
    }

    #[test]
    fn hostile_conda_meta_files_are_skipped_without_reading_them() {
        let root = tempfile::tempdir().expect("temp dir");
        let meta = root.path().join("conda-meta");
        std::fs::create_dir(&meta).expect("conda-meta");
        let good = r#"{"name": "zlib", "version": "1.3"}"#;
        std::fs::write(meta.join("zlib-1.3-0.json"), good).expect("record");
        std::os::unix::fs::symlink("/dev/zero", meta.join("zero.json")).expect("symlink");
        let made = std::process::Command::new("mkfifo")
            .arg(meta.join("fifo.json"))
            .status()
            .expect("mkfifo");
        assert!(made.success());
        std::fs::create_dir(meta.join("dir.json")).expect("a directory");
        // Before the reads were bounded, the symlink to /dev/zero allocated until abort and
        // the FIFO blocked forever.
        let packages = conda_packages(root.path()).expect("the readable records");
        assert_eq!(packages, vec![package("zlib", "1.3")]);
    }

    #[test]
    fn a_distribution_shadows_the_conda_package_of_its_name() {
        let merged = merge(
            vec![
                package("python", "3.12.1"),
                package("typing_extensions", "4.9.0"),
                package("zlib", "1.3"),
            ],
            vec![
                package("Typing-Extensions", "4.9.0"),
                package("pip", "24.0"),
            ],
        );
        assert_eq!(
            merged,
            vec![
                package("pip", "24.0"),
                package("python", "3.12.1"),
                package("Typing-Extensions", "4.9.0"),
                package("zlib", "1.3"),
            ]
        );
    }

    #[test]
    fn records_are_read_and_broken_ones_skipped() {
        let root = tempfile::tempdir().unwrap();
        let meta = root.path().join("conda-meta");
        std::fs::create_dir(&meta).unwrap();
        std::fs::write(
            meta.join("zlib-1.3-0.json"),
            r#"{"name": "zlib", "version": "1.3", "build": "0"}"#,
        )
        .unwrap();
        std::fs::write(meta.join("broken.json"), "{").unwrap();
        std::fs::write(meta.join("history"), "").unwrap();
        assert_eq!(
            conda_packages(root.path()).unwrap(),
            vec![package("zlib", "1.3")]
        );
        let linked = root.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&meta, linked.join("conda-meta")).unwrap();
        assert!(conda_packages(&linked).unwrap().is_empty(), "not followed");
        assert!(conda_packages(&root.path().join("missing"))
            .unwrap()
            .is_empty());
    }
}
