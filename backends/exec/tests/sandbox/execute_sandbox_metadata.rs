//! Sandboxed commands try what Landlock alone does not confine, in every containment mode:
//! changing the metadata of files outside the environment (mode, times, extended attributes,
//! owner; the state directory and its index included; the null device through stdin), and
//! SysV IPC shared with the host or kept between runs. Each check runs unsandboxed too, to
//! show it can fail.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use crate::execute_sandbox_support::{containing_modes, op, Fixture};

fn refused(outcome: &str) -> bool {
    matches!(outcome, "EROFS" | "EPERM" | "EACCES")
}

/// A file's mode, modification time and extended attribute names.
fn metadata(path: &Path) -> (u32, i64, Vec<String>) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let mut names = vec![0u8; 4096];
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: `names` is a valid buffer of its length.
    let len = unsafe { libc::listxattr(c_path.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    let names = names[..len.max(0) as usize]
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    (meta.mode(), meta.mtime(), names)
}

#[tokio::test]
async fn metadata_outside_the_root_cannot_change() {
    for mode in containing_modes() {
        let fixture = Fixture::new();
        let file = fixture.outside("file.txt");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let state = fixture.state.path().to_path_buf();
        let index = state.join("index.json");
        let watched = [file.clone(), state.clone(), index.clone()];
        let before: Vec<_> = watched.iter().map(|p| metadata(p)).collect();
        let null_before = metadata(Path::new("/dev/null"));
        let inside = fixture.root.join("own.txt");
        std::fs::write(&inside, "mine\n").unwrap();

        let escapes = [
            op("chmod", &[&file]),
            op("utime", &[&file]),
            op("setxattr", &[&file]),
            op("chown", &[&file]),
            op("chmod", &[&state]),
            op("chmod", &[&index]),
            op("utime", &[&index]),
            op("fchmod-stdin", &[]),
        ];
        // Inside the root, but without a setuid bit (which the sandbox never sets).
        let allowed = [
            format!("chmod-mode|{}|0777", inside.display()),
            op("utime", &[&inside]),
        ];
        let attempts: Vec<String> = escapes.iter().chain(&allowed).cloned().collect();
        let (_, results) = fixture.attempt(&attempts, fixture.sandboxed(mode)).await;
        for attempt in &escapes {
            assert!(
                refused(&results[attempt]),
                "{mode:?}: {attempt} -> {}",
                results[attempt]
            );
        }
        for attempt in &allowed {
            assert_eq!(results[attempt], "ok", "{mode:?}: {attempt}");
        }
        let after: Vec<_> = watched.iter().map(|p| metadata(p)).collect();
        assert_eq!(before, after, "{mode:?}");
        assert_eq!(null_before, metadata(Path::new("/dev/null")), "{mode:?}");

        // Unsandboxed, the same change succeeds: the check above can fail.
        let (_, unconfined) = fixture
            .attempt(
                &escapes[..2],
                crate::execute_sandbox_support::execute_support::contained(mode),
            )
            .await;
        assert!(
            unconfined.values().all(|outcome| outcome == "ok"),
            "{unconfined:?}"
        );
    }
}

/// A SysV IPC key no other test uses.
fn key(salt: i32) -> i32 {
    0x5750_0000 | ((std::process::id() as i32 & 0xfff) << 4) | salt
}

fn host_segment(key: i32) -> Option<i32> {
    // SAFETY: plain system call.
    let id = unsafe { libc::shmget(key, 0, 0) };
    (id >= 0).then_some(id)
}

fn host_queue(key: i32) -> Option<i32> {
    // SAFETY: plain system call.
    let id = unsafe { libc::msgget(key, 0) };
    (id >= 0).then_some(id)
}

#[tokio::test]
async fn sysv_ipc_is_not_shared_with_the_host_or_between_runs() {
    for (n, mode) in containing_modes().into_iter().enumerate() {
        let fixture = Fixture::new();
        let salt = (n as i32) * 3;
        let (outside, made, queue) = (key(salt), key(salt + 1), key(salt + 2));
        // SAFETY: plain system call; the segment is removed below.
        let segment = unsafe { libc::shmget(outside, 4096, libc::IPC_CREAT | 0o600) };
        assert!(segment >= 0, "{}", std::io::Error::last_os_error());

        let first = [
            format!("shm-attach|{outside}"),
            format!("shm-create|{made}"),
            format!("msg-create|{queue}"),
        ];
        let (_, results) = fixture.attempt(&first, fixture.sandboxed(mode)).await;
        assert_eq!(results[&first[0]], "ENOENT", "{mode:?}: {results:?}");
        assert_eq!(results[&first[1]], "ok", "{mode:?}");
        assert_eq!(results[&first[2]], "ok", "{mode:?}");
        assert_eq!(
            host_segment(made),
            None,
            "{mode:?}: the segment reached the host"
        );
        assert_eq!(
            host_queue(queue),
            None,
            "{mode:?}: the queue reached the host"
        );

        // A later run does not find what the first one made.
        let second = [format!("shm-attach|{made}")];
        let (_, results) = fixture.attempt(&second, fixture.sandboxed(mode)).await;
        assert_eq!(results[&second[0]], "ENOENT", "{mode:?}");

        // Unsandboxed, the host's segment is there: the check above can fail.
        let (_, unconfined) = fixture
            .attempt(
                &first[..1],
                crate::execute_sandbox_support::execute_support::contained(mode),
            )
            .await;
        assert_eq!(unconfined[&first[0]], "ok", "{mode:?}");
        // SAFETY: removing the segment this test made.
        unsafe { libc::shmctl(segment, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

#[test]
fn as_an_unprivileged_user_too() {
    crate::execute_sandbox_support::execute_support::rerun_unprivileged(
        module_path!(),
        &[
            "metadata_outside_the_root_cannot_change",
            "sysv_ipc_is_not_shared_with_the_host_or_between_runs",
        ],
    );
}
