//! An environment's own files are untrusted input: metadata that is a symlink to `/dev/zero`,
//! a FIFO, a sparse gigabyte, binary garbage, a directory, a symlink elsewhere. Scanning answers
//! at once with what can be read and the entry names for the rest.
//!
//! Each scan runs in a child process (this test binary, role in an environment variable) with
//! its address space capped, so a scanner that reads without bound fails the test instead of
//! exhausting the machine's memory, and one that blocks is killed at a deadline.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tempfile::TempDir;
use wsp_install::packages::{installed_packages, read_untrusted_file};

const ROLE: &str = "WSP_PACKAGES_TEST_SCAN_ROOT";
const ADDRESS_SPACE_LIMIT: u64 = 512 << 20;
const DEADLINE: Duration = Duration::from_secs(20);

/// Not a test by itself: the body of the child process, which scans and prints the result.
#[test]
fn child_process_entry() {
    let Some(root) = std::env::var_os(ROLE) else {
        return;
    };
    let packages = installed_packages(Path::new(&root)).unwrap();
    let pairs: Vec<(String, String)> = packages.into_iter().map(|p| (p.name, p.version)).collect();
    println!("{}", serde_json::to_string(&pairs).unwrap());
}

/// Scans `root` in a capped child process; `Err` says how the child failed.
fn scan_in_child(root: &Path) -> Result<Vec<(String, String)>, String> {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["child_process_entry", "--exact", "--nocapture", "--quiet"])
        .env(ROLE, root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            let limit = rustix::process::Rlimit {
                current: Some(ADDRESS_SPACE_LIMIT),
                maximum: Some(ADDRESS_SPACE_LIMIT),
            };
            rustix::process::setrlimit(rustix::process::Resource::As, limit)?;
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let mut err = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = stderr.read_to_string(&mut err);
        let _ = sender.send((out, err));
    });
    let Ok((out, err)) = receiver.recv_timeout(DEADLINE) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("the scan was still running after {DEADLINE:?}"));
    };
    let status = child.wait().unwrap();
    let line = out
        .lines()
        .find(|line| line.starts_with('['))
        .ok_or_else(|| format!("the scan failed ({status}): {err}"))?;
    Ok(serde_json::from_str(line).unwrap())
}

fn site_packages(root: &Path) -> PathBuf {
    let dir = root.join("lib").join("python3.12").join("site-packages");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(name, version)| (name.to_string(), version.to_string()))
        .collect()
}

#[test]
fn metadata_from_dev_zero_is_not_read_without_bound() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path());
    std::fs::create_dir(sp.join("zero-1.0.dist-info")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", sp.join("zero-1.0.dist-info/METADATA")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", sp.join("zeroegg-2.0.egg-info")).unwrap();
    std::fs::create_dir(sp.join("good-3.0.dist-info")).unwrap();
    std::fs::write(
        sp.join("good-3.0.dist-info/METADATA"),
        "Name: Good\nVersion: 3.0\n",
    )
    .unwrap();
    assert_eq!(
        scan_in_child(root.path()),
        Ok(pairs(&[
            ("Good", "3.0"),
            ("zero", "1.0"),
            ("zeroegg", "2.0")
        ]))
    );
}

#[test]
fn metadata_that_is_a_fifo_never_blocks() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path());
    std::fs::create_dir(sp.join("fifo-1.0.dist-info")).unwrap();
    mkfifo(&sp.join("fifo-1.0.dist-info/METADATA"));
    std::fs::create_dir(sp.join("fifoegg-2.0.egg-info")).unwrap();
    mkfifo(&sp.join("fifoegg-2.0.egg-info/PKG-INFO"));
    mkfifo(&sp.join("bare-4.0.egg-info"));
    assert_eq!(
        scan_in_child(root.path()),
        Ok(pairs(&[
            ("bare", "4.0"),
            ("fifo", "1.0"),
            ("fifoegg", "2.0")
        ]))
    );
}

#[test]
fn huge_garbage_and_directory_metadata_fall_back_to_the_entry_name() {
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path());
    // Eight sparse gigabytes: one header line that never ends.
    std::fs::create_dir(sp.join("huge-1.0.dist-info")).unwrap();
    let huge = sp.join("huge-1.0.dist-info/METADATA");
    std::fs::write(&huge, "Metadata-Version: 2.1\nSummary: ").unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&huge)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    // Headers that go on for ever, each line short: the Name comes too late to be read.
    std::fs::create_dir(sp.join("endless-2.0.dist-info")).unwrap();
    let mut endless = "X-Padding: p\n".repeat(20_000);
    endless.push_str("Name: TooLate\nVersion: 9\n");
    std::fs::write(sp.join("endless-2.0.dist-info/METADATA"), endless).unwrap();
    std::fs::create_dir(sp.join("garbage-3.0.dist-info")).unwrap();
    let garbage: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .filter(|byte| *byte != b'\n')
        .collect();
    std::fs::write(sp.join("garbage-3.0.dist-info/METADATA"), garbage).unwrap();
    std::fs::create_dir_all(sp.join("dir-4.0.dist-info/METADATA")).unwrap();
    std::fs::create_dir(sp.join("dir-5.0.egg-info")).unwrap();
    std::fs::create_dir(sp.join("dir-5.0.egg-info/PKG-INFO")).unwrap();
    assert_eq!(
        scan_in_child(root.path()),
        Ok(pairs(&[
            ("dir", "4.0"),
            ("dir", "5.0"),
            ("endless", "2.0"),
            ("garbage", "3.0"),
            ("huge", "1.0"),
        ]))
    );
}

#[test]
fn symlinks_are_not_followed_and_outside_site_packages_are_not_scanned() {
    let outside = TempDir::new().unwrap();
    std::fs::create_dir(outside.path().join("secret-9.9.dist-info")).unwrap();
    std::fs::write(
        outside.path().join("secret-9.9.dist-info/METADATA"),
        "Name: Secret\nVersion: 9.9\n",
    )
    .unwrap();
    std::fs::write(
        outside.path().join("METADATA"),
        "Name: Leaked\nVersion: 6.6\n",
    )
    .unwrap();
    let root = TempDir::new().unwrap();
    let sp = site_packages(root.path());
    // METADATA that is a symlink, even to a regular file: read from the entry name instead.
    std::fs::create_dir(sp.join("linked-1.0.dist-info")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("METADATA"),
        sp.join("linked-1.0.dist-info/METADATA"),
    )
    .unwrap();
    // A dist-info directory that is a symlink elsewhere.
    std::os::unix::fs::symlink(
        outside.path().join("secret-9.9.dist-info"),
        sp.join("elsewhere-2.0.dist-info"),
    )
    .unwrap();
    // A whole site-packages that lies outside the environment is not scanned.
    std::fs::create_dir_all(root.path().join("lib/python3.11")).unwrap();
    std::os::unix::fs::symlink(
        outside.path(),
        root.path().join("lib/python3.11/site-packages"),
    )
    .unwrap();
    assert_eq!(
        scan_in_child(root.path()),
        Ok(pairs(&[("elsewhere", "2.0"), ("linked", "1.0")]))
    );
}

#[test]
fn untrusted_files_are_read_only_when_regular_and_small() {
    let dir = TempDir::new().unwrap();
    let regular = dir.path().join("zlib-1.3-0.json");
    std::fs::write(&regular, r#"{"name": "zlib"}"#).unwrap();
    assert_eq!(
        read_untrusted_file(&regular, 1024).unwrap(),
        br#"{"name": "zlib"}"#
    );
    let invalid = |path: &Path, limit: u64| {
        let error = read_untrusted_file(path, limit).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData, "{error}");
        error.to_string()
    };
    assert!(invalid(&regular, 4).contains("larger than 4 bytes"));
    let zero = dir.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    assert!(invalid(&zero, 1024).contains("symlink"));
    let fifo = dir.path().join("fifo.json");
    mkfifo(&fifo);
    assert!(invalid(&fifo, 1024).contains("not a regular file"));
    assert!(invalid(dir.path(), 1024).contains("not a regular file"));
    let missing = read_untrusted_file(&dir.path().join("missing"), 1024).unwrap_err();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
}
