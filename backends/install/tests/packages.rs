//! Package scanning over real directory layouts, and against pip in a real virtual
//! environment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tempfile::TempDir;
use wsp_install::packages::{installed_packages, normalize_name, scan, site_packages_dirs};
use wsp_protocol::Package;

fn site_packages(root: &Path, lib: &str) -> PathBuf {
    let dir = root.join(lib).join("python3.12").join("site-packages");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dist_info(dir: &Path, entry: &str, metadata: &[u8]) {
    let path = dir.join(entry);
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("METADATA"), metadata).unwrap();
}

fn pairs(packages: &[Package]) -> Vec<(&str, &str)> {
    packages
        .iter()
        .map(|p| (p.name.as_str(), p.version.as_str()))
        .collect()
}

#[test]
fn names_normalize_as_pep_503() {
    assert_eq!(normalize_name("Zope.Interface"), "zope-interface");
    assert_eq!(normalize_name("a__b-._c"), "a-b-c");
    assert_eq!(normalize_name("PyYAML"), "pyyaml");
}

#[test]
fn reads_name_and_version_as_spelled_and_sorts_by_normalized_name() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path(), "lib");
    dist_info(
        &sp,
        "pyyaml-6.0.1.dist-info",
        b"Metadata-Version: 2.1\nName: PyYAML\nVersion: 6.0.1\n\nName: NotThis\n",
    );
    dist_info(
        &sp,
        "zope.interface-6.1.dist-info",
        b"Metadata-Version: 2.1\r\nname: zope.interface\r\nVERSION: 6.1\r\n\r\n",
    );
    dist_info(
        &sp,
        "typing_extensions-4.9.0.dist-info",
        b"Summary: \xff\xfe broken\nName: typing_extensions\nVersion: 4.9.0\n",
    );
    // The body is never read: a Name after the header block does not count.
    dist_info(
        &sp,
        "late-1.0.dist-info",
        b"Summary: x\n\nName: Other\nVersion: 9\n",
    );
    std::fs::write(sp.join("six.py"), "").unwrap();
    std::fs::write(sp.join("distutils-precedence.pth"), "").unwrap();
    std::fs::create_dir(sp.join("yaml")).unwrap();

    let packages = installed_packages(root.path()).unwrap();
    assert_eq!(
        pairs(&packages),
        [
            ("late", "1.0"),
            ("PyYAML", "6.0.1"),
            ("typing_extensions", "4.9.0"),
            ("zope.interface", "6.1"),
        ]
    );
}

#[test]
fn egg_info_directories_and_files() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path(), "lib");
    let egg_dir = sp.join("Legacy_Pkg-2.0-py3.12.egg-info");
    std::fs::create_dir(&egg_dir).unwrap();
    std::fs::write(egg_dir.join("PKG-INFO"), "Name: Legacy-Pkg\nVersion: 2.0\n").unwrap();
    std::fs::write(
        sp.join("single-0.3-py3.12.egg-info"),
        "Name: Single\nVersion: 0.3\n",
    )
    .unwrap();
    // Without PKG-INFO the entry's name decides; without a version there it is skipped.
    std::fs::create_dir(sp.join("bare-1.5-py3.12.egg-info")).unwrap();
    std::fs::create_dir(sp.join("noversion.egg-info")).unwrap();

    let packages = installed_packages(root.path()).unwrap();
    assert_eq!(
        pairs(&packages),
        [("bare", "1.5"), ("Legacy-Pkg", "2.0"), ("Single", "0.3")]
    );
}

#[test]
fn missing_or_unreadable_metadata_falls_back_to_the_entry_name() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path(), "lib");
    std::fs::create_dir(sp.join("no_metadata-1.2.3.dist-info")).unwrap();
    std::fs::create_dir_all(sp.join("dir_metadata-0.1.dist-info/METADATA")).unwrap();
    dist_info(&sp, "half-7.0.dist-info", b"Name: Half\n\n");
    std::fs::create_dir(sp.join("nothing.dist-info")).unwrap();

    let packages = installed_packages(root.path()).unwrap();
    assert_eq!(
        pairs(&packages),
        [
            ("dir_metadata", "0.1"),
            ("Half", "7.0"),
            ("no_metadata", "1.2.3")
        ]
    );
}

#[test]
fn lib64_symlink_is_scanned_once_and_identical_entries_dedupe() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path(), "lib");
    dist_info(&sp, "a-1.dist-info", b"Name: a\nVersion: 1\n");
    std::os::unix::fs::symlink("lib", root.path().join("lib64")).unwrap();
    assert_eq!(site_packages_dirs(root.path()), [sp]);
    assert_eq!(
        pairs(&installed_packages(root.path()).unwrap()),
        [("a", "1")]
    );

    let other = TempDir::new().unwrap();
    let sp64 = site_packages(other.path(), "lib64");
    let sp32 = site_packages(other.path(), "lib");
    dist_info(&sp32, "a-1.dist-info", b"Name: a\nVersion: 1\n");
    dist_info(&sp64, "a-1.dist-info", b"Name: a\nVersion: 1\n");
    dist_info(&sp64, "A-2.dist-info", b"Name: A\nVersion: 2\n");
    assert_eq!(site_packages_dirs(other.path()), [sp32, sp64]);
    let packages = installed_packages(other.path()).unwrap();
    assert_eq!(pairs(&packages), [("a", "1"), ("A", "2")]);
}

#[test]
fn empty_and_missing_layouts() {
    let root = TempDir::new().unwrap();
    assert!(site_packages_dirs(root.path()).is_empty());
    assert!(installed_packages(root.path()).unwrap().is_empty());
    assert!(scan(&[root.path().join("gone")]).unwrap().is_empty());
    site_packages(root.path(), "lib");
    assert!(installed_packages(root.path()).unwrap().is_empty());
}

#[test]
fn hundred_distributions_scan_quickly() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path(), "lib");
    let description = "Description: long text\n".repeat(100);
    for i in 0..100 {
        let metadata = format!(
            "Metadata-Version: 2.1\nName: pkg-{i:03}\nVersion: 1.{i}\nSummary: s\n\n{description}"
        );
        dist_info(
            &sp,
            &format!("pkg_{i:03}-1.{i}.dist-info"),
            metadata.as_bytes(),
        );
    }
    assert_eq!(installed_packages(root.path()).unwrap().len(), 100);
    let rounds = 50;
    let start = Instant::now();
    for _ in 0..rounds {
        installed_packages(root.path()).unwrap();
    }
    let each = start.elapsed() / rounds;
    eprintln!("installed_packages, 100 dist-infos: {each:?} per scan");
    assert!(each < Duration::from_millis(20), "{each:?}");
}

fn python312() -> PathBuf {
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".pyenv"));
    pyenv.join("versions/3.12.1/bin/python3.12")
}

#[derive(serde::Deserialize, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct PipEntry {
    name: String,
    version: String,
}

#[test]
fn matches_pip_list_in_a_real_venv() {
    let dir = TempDir::new().unwrap();
    let venv = dir.path().join("venv");
    let status = std::process::Command::new(python312())
        .args(["-m", "venv"])
        .arg(&venv)
        .env_remove("PYTHONHOME")
        .status()
        .unwrap();
    assert!(status.success());
    let output = std::process::Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "list",
            "--format",
            "json",
            "--disable-pip-version-check",
        ])
        .env("PIP_NO_INDEX", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let from_pip: BTreeSet<PipEntry> = serde_json::from_slice::<Vec<PipEntry>>(&output.stdout)
        .unwrap()
        .into_iter()
        .collect();
    assert!(from_pip.iter().any(|entry| entry.name == "pip"));

    let scanned = installed_packages(&venv).unwrap();
    let mine: BTreeSet<PipEntry> = scanned
        .iter()
        .map(|p| PipEntry {
            name: p.name.clone(),
            version: p.version.clone(),
        })
        .collect();
    assert_eq!(mine, from_pip);
    assert_eq!(scanned.len(), from_pip.len());
}
