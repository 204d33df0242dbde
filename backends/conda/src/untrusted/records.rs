//! A prefix's package records (`conda-meta/<name>-<version>-<build>.json`) as untrusted input:
//! a package or a command run in the prefix can write one, and uninstalling deletes every path
//! a record lists.

use std::path::Path;

use rattler_conda_types::PrefixRecord;

use super::paths::{check_relative_path, PathViolation};

/// Why a record is refused.
#[derive(Debug, thiserror::Error)]
pub enum RecordViolation {
    /// Not a package record.
    #[error("is not a package record: {0}")]
    NotARecord(#[source] serde_json::Error),
    /// The record's file is not named after the package it describes, so the installer would
    /// read one file and rewrite another.
    #[error("describes {expected}, not itself")]
    Misnamed {
        /// The file name the record's name, version and build give.
        expected: String,
    },
    /// A path the record lists is refused.
    #[error("lists `{path}`, which {violation}")]
    Path {
        /// The path, lossily as text.
        path: String,
        /// What is wrong with it.
        violation: PathViolation,
    },
}

/// Parses the record read from `conda-meta/<file_name>` and checks it: named after the package
/// it describes, and every path it lists (`files`, and each `paths_data` entry's path and
/// original path) passes [`check_relative_path`].
pub fn check_prefix_record(file_name: &str, bytes: &[u8]) -> Result<PrefixRecord, RecordViolation> {
    let record: PrefixRecord =
        serde_json::from_slice(bytes).map_err(RecordViolation::NotARecord)?;
    let expected = record.file_name();
    if expected != file_name {
        return Err(RecordViolation::Misnamed { expected });
    }
    for path in record_paths(&record) {
        check_relative_path(path).map_err(|violation| RecordViolation::Path {
            path: path.to_string_lossy().into_owned(),
            violation,
        })?;
    }
    Ok(record)
}

/// Every path `record` names in the prefix: its `files` and each `paths_data` entry's path and
/// original (clobbered) path.
pub fn record_paths(record: &PrefixRecord) -> impl Iterator<Item = &Path> {
    let entries = record.paths_data.paths.iter().flat_map(|entry| {
        std::iter::once(entry.relative_path.as_path()).chain(entry.original_path.as_deref())
    });
    record
        .files
        .iter()
        .map(|path| path.as_path())
        .chain(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(name: &str, files: &[&str], paths: &[&str]) -> Vec<u8> {
        let paths: Vec<_> = paths
            .iter()
            .map(|path| json!({"_path": path, "path_type": "hardlink"}))
            .collect();
        json!({
            "name": name, "version": "1.0", "build": "0", "build_number": 0,
            "subdir": "noarch", "depends": [], "fn": format!("{name}-1.0-0.tar.bz2"),
            "url": format!("file:///channel/noarch/{name}-1.0-0.tar.bz2"),
            "files": files,
            "paths_data": {"paths_version": 1, "paths": paths},
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn a_record_of_plain_paths_named_after_itself_passes() {
        let bytes = record("zlib", &["lib/libz.so"], &["lib/libz.so"]);
        let parsed = check_prefix_record("zlib-1.0-0.json", &bytes).expect("a valid record");
        assert_eq!(parsed.files, vec![Path::new("lib/libz.so")]);
    }

    #[test]
    fn paths_outside_the_prefix_are_refused_wherever_they_are_listed() {
        for (files, paths) in [
            (&["../../victim"][..], &[][..]),
            (&[], &["/etc/passwd"]),
            (&["lib/x"], &["lib/x", "conda-meta/other-1.0-0.json"]),
        ] {
            let bytes = record("evil", files, paths);
            match check_prefix_record("evil-1.0-0.json", &bytes) {
                Err(RecordViolation::Path { .. }) => {}
                other => panic!("{files:?} {paths:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_record_under_another_name_is_refused() {
        let bytes = record("python", &[], &[]);
        match check_prefix_record("evil.json", &bytes) {
            Err(RecordViolation::Misnamed { expected }) => {
                assert_eq!(expected, "python-1.0-0.json")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            check_prefix_record("x.json", b"{}"),
            Err(RecordViolation::NotARecord(_))
        ));
    }
}
