//! Untrusted conda metadata: an `info/paths.json` and a `conda-meta/*.json` record, as text, or
//! (when the input is not JSON) built from its lines as paths. The backend's checks never panic,
//! accept exactly the inputs whose every path is plain (an independent rule below), and what they
//! accept maps to plain paths in the prefix.

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use serde_json::{json, Value};
use wsp_backend_conda::untrusted::{
    check_paths_json, check_prefix_record, link_targets, record_paths, PackageViolation,
    PythonInfo, RecordViolation, INSTALL_LOCK_FILE, MAX_PART_BYTES, MAX_PATH_BYTES,
};

/// An `info/paths.json`: parsed and checked, then mapped as a plain package and as a
/// `noarch: python` one (for a Python whose site-packages directory comes from the input, as a
/// channel's `python` record would say it).
pub fn check_paths_json_input(data: &[u8]) {
    let bytes = json_or_built(data, |paths| {
        let entries: Vec<Value> = paths
            .iter()
            .map(|path| json!({"_path": path, "path_type": "hardlink"}))
            .collect();
        json!({"paths": entries, "paths_version": 1})
    });
    match check_paths_json(&bytes) {
        Ok(paths) => {
            for entry in &paths.paths {
                assert_plain(&entry.relative_path);
            }
            let targets = link_targets(&paths, None).expect("accepted paths link as they are");
            let listed: Vec<&Path> = paths
                .paths
                .iter()
                .map(|e| e.relative_path.as_path())
                .collect();
            assert_eq!(
                targets.iter().map(|t| t.as_path()).collect::<Vec<_>>(),
                listed
            );
            let site_packages = data
                .split(|&b| b == b'\n')
                .next()
                .map(String::from_utf8_lossy);
            for python in [python_info(None), python_info(site_packages.as_deref())] {
                let Some(python) = python else { continue };
                match link_targets(&paths, Some((&python, None))) {
                    Ok(targets) => targets.iter().for_each(|t| assert_plain(t)),
                    Err(PackageViolation::Path { path, .. }) => assert!(!plain(Path::new(&path))),
                    Err(other) => panic!("mapping failed with {other}"),
                }
            }
        }
        Err(PackageViolation::Path { path, .. }) => {
            assert!(!plain(Path::new(&path)), "`{path}` is plain, and refused")
        }
        Err(PackageViolation::Unusable { .. }) => {}
        Err(other) => panic!("paths.json refused with {other}"),
    }
}

/// A `conda-meta/*.json` record: checked under the file name it asks for (learnt from a first
/// check under an empty name), and under another.
pub fn check_conda_meta_input(data: &[u8]) {
    let bytes = json_or_built(data, |paths| {
        let entries: Vec<Value> = paths
            .iter()
            .map(|path| json!({"_path": path, "path_type": "hardlink"}))
            .collect();
        json!({
            "name": "fuzz", "version": "1.0", "build": "0", "build_number": 0,
            "subdir": "noarch", "depends": [], "fn": "fuzz-1.0-0.tar.bz2",
            "url": "file:///channel/noarch/fuzz-1.0-0.tar.bz2",
            "files": paths, "paths_data": {"paths_version": 1, "paths": entries},
        })
    });
    let expected = match check_prefix_record("", &bytes) {
        Err(RecordViolation::Misnamed { expected }) => expected,
        Err(RecordViolation::NotARecord(_)) => return,
        Ok(record) => panic!("a record accepted under no name: {record:?}"),
        Err(other) => panic!("checked before its name: {other}"),
    };
    match check_prefix_record(&expected, &bytes) {
        Ok(record) => {
            assert_eq!(record.file_name(), expected);
            record_paths(&record).for_each(assert_plain);
        }
        Err(RecordViolation::Path { path, .. }) => {
            assert!(!plain(Path::new(&path)), "`{path}` is plain, and refused")
        }
        Err(other) => panic!("refused under its own name with {other}"),
    }
    let misnamed = format!("{expected}.other.json");
    assert!(matches!(
        check_prefix_record(&misnamed, &bytes),
        Err(RecordViolation::Misnamed { .. })
    ));
}

/// The input if it is JSON, else the JSON `build` makes of its lines.
fn json_or_built(data: &[u8], build: impl FnOnce(&[String]) -> Value) -> Vec<u8> {
    if serde_json::from_slice::<Value>(data).is_ok() {
        return data.to_vec();
    }
    let lines: Vec<String> = data
        .split(|&b| b == b'\n')
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect();
    build(&lines).to_string().into_bytes()
}

/// Python 3.12 on linux-64, its site-packages where `site_packages` says if given.
fn python_info(site_packages: Option<&str>) -> Option<PythonInfo> {
    let version = "3.12.1".parse().ok()?;
    PythonInfo::from_version(&version, site_packages, "linux-64".parse().ok()?).ok()
}

fn assert_plain(path: &Path) {
    assert!(plain(path), "{path:?} was accepted");
}

/// The rule, said another way: a relative path whose parts are all normal ones, none lost to
/// `Path`'s own normalising (`a//b`, `a/./b`, `a/`), within Linux's lengths, no NUL, and not under
/// `conda-meta` nor the install lock, in any case.
fn plain(path: &Path) -> bool {
    let bytes = path.as_os_str().as_bytes();
    let parts = path.components().count();
    !bytes.is_empty()
        && bytes.len() <= MAX_PATH_BYTES
        && !bytes.contains(&0)
        && path.is_relative()
        && parts == bytes.split(|&b| b == b'/').count()
        && path.components().all(|component| match component {
            Component::Normal(part) => part.len() <= MAX_PART_BYTES,
            _ => false,
        })
        && !path.components().next().is_some_and(|first| {
            let first = first.as_os_str();
            first.eq_ignore_ascii_case("conda-meta")
                || first.eq_ignore_ascii_case(INSTALL_LOCK_FILE)
        })
}
