//! `wsp serve` on a full file system: `environment/create` fails naming the cause, while
//! `environment/delete` answers a result and frees the environment's space.
//!
//! The state directory lives on a small tmpfs the test mounts (as root, which CI is);
//! elsewhere the test skips, except when `CI` is set.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{error_code, Server};
use serde_json::json;

/// A tmpfs mounted on a fresh temporary directory, unmounted when dropped.
struct SmallFs {
    _temp: tempfile::TempDir,
    mount_point: PathBuf,
}

impl SmallFs {
    /// A tmpfs of `size` bytes, or `None` (after saying why) where the test cannot mount one.
    fn tmpfs(size: u64) -> Option<SmallFs> {
        let temp = tempfile::tempdir().unwrap();
        let mount_point = temp.path().join("mnt");
        std::fs::create_dir(&mount_point).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount_point)
            .stderr(Stdio::piped())
            .output();
        match mounted {
            Ok(output) if output.status.success() => Some(SmallFs {
                _temp: temp,
                mount_point,
            }),
            other => {
                let why = format!("cannot mount a tmpfs (run as root): {other:?}");
                assert!(std::env::var_os("CI").is_none(), "{why}; CI must");
                eprintln!("skipping: {why}");
                None
            }
        }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

/// Bytes free on the file system holding `path`.
fn free_bytes(path: &Path) -> u64 {
    let stat = rustix::fs::statvfs(path).unwrap();
    stat.f_bfree * stat.f_frsize
}

const ENOSPC: i32 = 28;

/// Appends to `path` until the file system is full, and checks that it is.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    for chunk in [64 << 10, 1] {
        let bytes = vec![7u8; chunk];
        loop {
            match file.write_all(&bytes) {
                Ok(()) => {}
                Err(error) if error.raw_os_error() == Some(ENOSPC) => break,
                Err(error) => panic!("filling {}: {error}", path.display()),
            }
        }
    }
    let probe = path.with_extension("probe");
    let error = std::fs::write(&probe, b"x").unwrap_err();
    assert_eq!(error.raw_os_error(), Some(ENOSPC), "the disk is not full");
    let _ = std::fs::remove_file(probe);
}

#[tokio::test]
async fn on_a_full_disk_delete_answers_and_frees_the_space_while_create_names_the_cause() {
    let Some(fs) = SmallFs::tmpfs(16 << 20) else {
        return;
    };
    let mut server = Server::start_in(&fs.mount_point.join("state"), &[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "big", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let root = PathBuf::from(created["result"]["extra"]["path"].as_str().unwrap());
    // What an install would have put there: 4 MiB of files.
    let lib = root.join("lib").join("payload");
    std::fs::create_dir_all(&lib).unwrap();
    for n in 0..128 {
        std::fs::write(lib.join(format!("f{n}")), vec![1u8; 32 << 10]).unwrap();
    }
    fill(&fs.mount_point.join("filler"));
    let before = free_bytes(&fs.mount_point);

    let refused = server
        .call(
            2,
            "environment/create",
            json!({"name": "no-room", "python_version": "3.12"}),
        )
        .await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(
        refused["error"]["data"]["reason"], "state-store",
        "{refused}"
    );
    assert!(
        refused.to_string().contains("No space left on device"),
        "{refused}"
    );

    let deleted = server
        .call(3, "environment/delete", json!({"id": id}))
        .await;
    assert_eq!(deleted["result"]["id"], id, "{deleted}");
    // A create waits for the deletions still running, so once it answers the space is back;
    // and it succeeds on the disk that was full.
    let after = server
        .call(
            4,
            "environment/create",
            json!({"name": "after", "python_version": "3.12"}),
        )
        .await;
    assert!(after.get("result").is_some(), "{after}");
    assert!(!root.exists(), "the environment's files are still there");
    let freed = free_bytes(&fs.mount_point).saturating_sub(before);
    // The 4 MiB, less the new environment and the refilled space reserve.
    assert!(freed >= 3 << 20, "only {freed} bytes freed");
    let listed = server.call(5, "environment/list", json!({})).await;
    let names: Vec<&str> = listed["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|summary| summary["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["after"], "{listed}");
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
}
