//! Sandboxed commands try to break out, in every containment mode this machine offers:
//! writes outside the environment (directly, through planted symlinks and hard links, through
//! `/proc/self/root`), reads of the other environments, connections to listeners on
//! loopback. Each check runs the same attempts unsandboxed too, to show it can fail.

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;

use crate::execute_sandbox_support::{containing_modes, op, Fixture, BOUND};
use wsp_exec::{containment_mode, sandbox_availability, ContainmentMode, RunOptions};

/// A refusal as the kernel spells it for each kind of attempt.
fn refused(outcome: &str) -> bool {
    matches!(outcome, "EACCES" | "EPERM" | "EXDEV" | "EROFS")
}

#[test]
fn the_sandbox_is_available_here() {
    // CI runs on a kernel with Landlock ABI 7 and user namespaces.
    assert_eq!(sandbox_availability(), Ok(()));
}

#[tokio::test]
async fn writes_outside_the_root_and_tmpdir_are_refused() {
    for mode in containing_modes() {
        let fixture = Fixture::new();
        let root = &fixture.root;
        let file = fixture.outside("file.txt");
        let dir = fixture.outside("dir");
        std::os::unix::fs::symlink(&dir, root.join("to-outside-dir")).unwrap();
        std::os::unix::fs::symlink(&file, root.join("to-outside-file")).unwrap();
        let via_proc = format!("/proc/self/root{}", file.display());
        let via_proc_new = format!("/proc/self/root{}", fixture.outside("via-proc").display());
        // Unique names, so that a failed run leaves nothing that passes the next one.
        let shared_tmp = std::env::temp_dir().join(format!(
            "wsp-escape-{}-{}",
            std::process::id(),
            fixture.state.path().file_name().unwrap().to_str().unwrap()
        ));
        let shm = std::path::PathBuf::from(format!(
            "/dev/shm/{}",
            shared_tmp.file_name().unwrap().to_str().unwrap()
        ));
        let state = fixture.state.path();
        let escapes = [
            op("append", &[&file]),
            op("truncate", &[&file]),
            op("create", &[&fixture.outside("new")]),
            op("mkdir", &[&fixture.outside("newdir")]),
            op("unlink", &[&file]),
            op("rename", &[&file, &root.join("stolen")]),
            op("link", &[&file, &root.join("hard-link")]),
            op("create", &[&root.join("to-outside-dir/through-symlink")]),
            op("append", &[&root.join("to-outside-file")]),
            op("append", &[std::path::Path::new(&via_proc)]),
            op("create", &[std::path::Path::new(&via_proc_new)]),
            op("create", &[&shared_tmp]),
            op("create", &[&shm]),
            op("append", &[&fixture.other_root.join("secret.txt")]),
            op("create", &[&fixture.other_root.join("new")]),
            op("create", &[&state.join("new")]),
            op("append", &[&state.join("index.json")]),
        ];
        let inside = [
            op("create", &[&root.join("inside.txt")]),
            op("append", &[&root.join("inside.txt")]),
            op("mkdir", &[&root.join("made")]),
            op(
                "rename",
                &[&root.join("inside.txt"), &root.join("made/moved.txt")],
            ),
            op("create", &[std::path::Path::new("$TMPDIR/scratch")]),
            op("mkdir", &[std::path::Path::new("$TMPDIR/sub")]),
            op("append", &[std::path::Path::new("/dev/null")]),
            op("read", &[std::path::Path::new("/dev/urandom")]),
            op("read", &[&file]),
            op("read", &[std::path::Path::new("/etc/passwd")]),
            op("list", &[root]),
        ];
        let attempts: Vec<String> = escapes.iter().chain(&inside).cloned().collect();
        let (tmpdir, results) = fixture.attempt(&attempts, fixture.sandboxed(mode)).await;
        for attempt in &escapes {
            assert!(
                refused(&results[attempt]),
                "{mode:?}: {attempt} -> {}",
                results[attempt]
            );
        }
        for attempt in &inside {
            assert_eq!(results[attempt], "ok", "{mode:?}: {attempt}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "original\n");
        for path in [
            fixture.outside("new"),
            fixture.outside("newdir"),
            dir.join("through-symlink"),
            shared_tmp.clone(),
            shm.clone(),
            fixture.other_root.join("new"),
            state.join("new"),
        ] {
            assert!(!path.exists(), "{mode:?}: {} exists", path.display());
        }
        assert_eq!(
            std::fs::read_to_string(state.join("index.json")).unwrap(),
            "{}\n"
        );
        assert!(root.join("made/moved.txt").exists());
        let tmpdir = tmpdir.expect("TMPDIR is set");
        assert!(!tmpdir.starts_with(state), "{}", tmpdir.display());
        assert!(
            !tmpdir.exists(),
            "{mode:?}: {} was not removed",
            tmpdir.display()
        );

        // The same escapes, unsandboxed, succeed: the checks above can fail.
        let (_, unconfined) = fixture
            .attempt(
                &escapes[..3],
                crate::execute_sandbox_support::execute_support::contained(mode),
            )
            .await;
        assert!(
            unconfined.values().all(|outcome| outcome == "ok"),
            "{unconfined:?}"
        );
    }
}

#[tokio::test]
async fn the_other_environments_and_the_state_directory_cannot_be_read() {
    let fixture = Fixture::new();
    let state = fixture.state.path();
    let reads = [
        op("read", &[&fixture.other_root.join("secret.txt")]),
        op("list", &[&fixture.other_root]),
        op("list", &[&state.join("environments")]),
        op("list", &[state]),
        op("read", &[&state.join("index.json")]),
        op(
            "read",
            &[std::path::Path::new(&format!(
                "/proc/self/root{}",
                fixture.other_root.join("secret.txt").display()
            ))],
        ),
        op("list", &[std::path::Path::new("/dev")]),
        op("read", &[std::path::Path::new("/dev/vda")]),
    ];
    let (_, results) = fixture
        .attempt(&reads, fixture.sandboxed(containment_mode()))
        .await;
    for attempt in &reads {
        let outcome = &results[attempt];
        assert!(
            refused(outcome) || (attempt.contains("/dev/vda") && outcome == "ENOENT"),
            "{attempt} -> {outcome}"
        );
    }
    let (_, unconfined) = fixture.attempt(&reads[..5], RunOptions::default()).await;
    assert!(
        unconfined.values().all(|outcome| outcome == "ok"),
        "{unconfined:?}"
    );
}

#[tokio::test]
async fn processes_outside_cannot_be_signalled_or_inspected() {
    let fixture = Fixture::new();
    let me = std::process::id().to_string();
    // A descriptor this process holds on another environment's file.
    let secret = std::fs::File::open(fixture.other_root.join("secret.txt")).unwrap();
    let secret_fd = std::os::fd::AsRawFd::as_raw_fd(&secret);
    let attempts = [
        format!("kill|{me}"),
        format!("read|/proc/{me}/environ"),
        format!("read|/proc/{me}/fd/{secret_fd}"),
        format!("list|/proc/{me}/cwd"),
        format!("setns|/proc/{me}/ns/net"),
        "setns|/proc/1/ns/net".to_owned(),
    ];
    let (_, results) = fixture
        .attempt(&attempts, fixture.sandboxed(containment_mode()))
        .await;
    for attempt in &attempts {
        let outcome = &results[attempt];
        // In a PID namespace of its own, the process cannot even name this one.
        let invisible = attempt.starts_with("kill") && outcome == "ESRCH";
        assert!(refused(outcome) || invisible, "{attempt} -> {outcome}");
    }
    // Unconfined and in the same PID and user namespaces (so not in a `pid-namespace`
    // containment, whose user namespace alone already hides this process), they succeed.
    let same_namespaces =
        crate::execute_sandbox_support::execute_support::contained(ContainmentMode::ProcessGroup);
    let (_, unconfined) = fixture.attempt(&attempts[..4], same_namespaces).await;
    assert!(
        unconfined.values().all(|outcome| outcome == "ok"),
        "{unconfined:?}"
    );
}

#[tokio::test]
async fn there_is_no_network() {
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let name = format!("wsp-sandbox-test-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        UnixListener::bind_addr(&address).unwrap()
    };
    abstract_listener.set_nonblocking(true).unwrap();
    let attempts = [
        format!("tcp|{}", tcp.local_addr().unwrap().port()),
        format!("udp|{}", udp.local_addr().unwrap().port()),
        format!("abstract|{name}"),
    ];
    for mode in containing_modes() {
        let fixture = Fixture::new();
        let (_, results) = fixture.attempt(&attempts, fixture.sandboxed(mode)).await;
        for attempt in &attempts {
            let outcome = &results[attempt];
            assert!(
                matches!(
                    outcome.as_str(),
                    "ENETUNREACH" | "ECONNREFUSED" | "EACCES" | "EPERM"
                ),
                "{mode:?}: {attempt} -> {outcome}"
            );
        }
        assert_eq!(
            tcp.accept().map(|_| ()).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        let mut buffer = [0u8; 64];
        assert_eq!(
            udp.recv(&mut buffer).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        assert_eq!(
            abstract_listener.accept().map(|_| ()).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
    }

    // Unsandboxed, every one of them gets through.
    let fixture = Fixture::new();
    let (_, results) = fixture.attempt(&attempts, RunOptions::default()).await;
    assert!(
        results.values().all(|outcome| outcome == "ok"),
        "{results:?}"
    );
    assert!(tcp.accept().is_ok());
    assert!(udp.recv(&mut [0u8; 64]).is_ok());
    assert!(abstract_listener.accept().is_ok());
}

#[tokio::test]
async fn a_shell_pipeline_and_its_children_work_inside() {
    for mode in containing_modes() {
        let fixture = Fixture::new();
        let script = "echo hello | tr a-z A-Z > made.txt && cat made.txt > /dev/null && \
                      (sleep 0.01 & wait) && cat made.txt && echo \"$TMPDIR\" && ls -d \"$TMPDIR\"";
        let result = fixture
            .run(&["sh", "-c", script], fixture.sandboxed(mode))
            .await
            .unwrap();
        assert_eq!(result.exit_code, 0, "{mode:?}: {result:?}");
        let mut lines = result.stdout.lines();
        assert_eq!(lines.next(), Some("HELLO"));
        let tmpdir = lines.next().unwrap();
        assert_eq!(lines.next(), Some(tmpdir));
        assert!(!std::path::Path::new(tmpdir).exists(), "{mode:?}");
    }
}

#[tokio::test]
async fn the_process_group_containment_is_refused() {
    let fixture = Fixture::new();
    let detail = fixture.sandbox_refusal(ContainmentMode::ProcessGroup).await;
    assert!(detail.contains("process-group"), "{detail}");
}

#[tokio::test]
async fn a_tmpdir_made_unremovable_is_still_removed() {
    let fixture = Fixture::new();
    let script = "mkdir -p \"$TMPDIR/locked/inner\" && : > \"$TMPDIR/locked/inner/file\" && \
                  chmod 000 \"$TMPDIR/locked/inner\" \"$TMPDIR/locked\" && echo \"$TMPDIR\"";
    let result = fixture
        .run(&["sh", "-c", script], fixture.sandboxed(containment_mode()))
        .await
        .unwrap();
    assert_eq!(result.exit_code, 0, "{result:?}");
    let tmpdir = std::path::PathBuf::from(result.stdout.trim_end());
    assert!(tmpdir.is_absolute(), "{result:?}");
    assert!(!tmpdir.exists(), "{} was not removed", tmpdir.display());
}

#[tokio::test]
async fn a_cancelled_run_removes_its_tmpdir() {
    for mode in containing_modes() {
        let fixture = Fixture::new();
        let (sink, mut chunks) = tokio::sync::mpsc::channel(16);
        let options = RunOptions {
            output: Some(sink),
            ..fixture.sandboxed(mode)
        };
        let script = "echo \"$TMPDIR\"; : > \"$TMPDIR/file\"; exec sleep 300";
        let argv = ["sh", "-c", script];
        let mut run = Box::pin(fixture.run(&argv, options));
        let chunk = tokio::select! {
            chunk = chunks.recv() => chunk.expect("the TMPDIR line"),
            ended = &mut run => panic!("{mode:?}: the run ended first: {ended:?}"),
        };
        let tmpdir = std::path::PathBuf::from(chunk.data.trim_end());
        let removal = Removal::watch(&tmpdir);
        drop(run);
        assert!(
            removal.wait(BOUND),
            "{mode:?}: {} was not removed",
            tmpdir.display()
        );
    }
}

/// Waits for a directory's removal with inotify (on its parent), not by polling.
struct Removal {
    inotify: std::os::fd::OwnedFd,
    path: std::path::PathBuf,
}

impl Removal {
    fn watch(path: &std::path::Path) -> Self {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain system calls on a descriptor this function owns.
        unsafe {
            let fd = libc::inotify_init1(libc::IN_CLOEXEC);
            assert!(fd >= 0);
            let parent =
                std::ffi::CString::new(path.parent().unwrap().as_os_str().as_bytes()).unwrap();
            assert!(libc::inotify_add_watch(fd, parent.as_ptr(), libc::IN_DELETE) >= 0);
            Removal {
                inotify: std::os::fd::OwnedFd::from_raw_fd(fd),
                path: path.to_owned(),
            }
        }
    }

    /// Whether the directory is gone within `bound`.
    fn wait(&self, bound: std::time::Duration) -> bool {
        use std::os::fd::AsRawFd;
        let deadline = std::time::Instant::now() + bound;
        while self.path.exists() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            let mut poll = libc::pollfd {
                fd: self.inotify.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; the buffer is large enough for several events.
            unsafe {
                if libc::poll(&mut poll, 1, left.as_millis().max(1) as libc::c_int) > 0 {
                    let mut events = [0u8; 4096];
                    libc::read(
                        self.inotify.as_raw_fd(),
                        events.as_mut_ptr().cast(),
                        events.len(),
                    );
                }
            }
        }
        true
    }
}

#[test]
fn as_an_unprivileged_user_too() {
    crate::execute_sandbox_support::execute_support::rerun_unprivileged(
        module_path!(),
        &[
            "writes_outside_the_root_and_tmpdir_are_refused",
            "the_other_environments_and_the_state_directory_cannot_be_read",
            "processes_outside_cannot_be_signalled_or_inspected",
            "there_is_no_network",
        ],
    );
}
