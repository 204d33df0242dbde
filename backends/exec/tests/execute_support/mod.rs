//! What the execute tests share: a throwaway environment, a runner with options, and waits on
//! processes that end by events (pidfds), not by sleeping.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tempfile::TempDir;
use wsp_backend::BackendError;
use wsp_exec::{
    containment_mode, resolve_cwd, run_with_stack, Activation, ContainmentMode, RunOptions, RunSpec,
};
use wsp_protocol::ExecuteResult;
pub use wsp_testing::write_executable;

pub const ID: &str = "env-0123456789ab";
pub const BOUND: Duration = Duration::from_secs(20);

/// An environment root with a `bin` directory holding the helper scripts.
pub struct Env {
    pub dir: TempDir,
    pub activation: Activation,
}

impl Env {
    pub fn new() -> Self {
        let dir = TempDir::new().unwrap();
        let activation = Activation::venv(dir.path());
        std::fs::create_dir(&activation.bin_dir).unwrap();
        // `record-and-sleep FILE [MARKER]`: appends its own pid (as this test sees it,
        // whatever PID namespace it runs in) to FILE, creates MARKER, then sleeps.
        write_script(
            &activation.bin_dir,
            "record-and-sleep",
            r#"read -r pid rest < /proc/self/stat; echo "$pid" >> "$1"
if [ -n "$2" ]; then : > "$2"; fi
exec sleep 300"#,
        );
        Env { dir, activation }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root().join(name)
    }

    /// Runs `argv` at the root with `options`, bounded by [`BOUND`].
    pub async fn run(
        &self,
        argv: &[&str],
        options: RunOptions,
    ) -> Result<ExecuteResult, BackendError> {
        run_in(&self.activation, ID, self.root(), argv, options).await
    }

    pub async fn sh(&self, script: &str, options: RunOptions) -> ExecuteResult {
        self.run(&["sh", "-c", script], options).await.unwrap()
    }
}

/// Runs `argv` in the environment `environment_id` that `activation` activates, at `root`, with
/// `options` and no extra variables, bounded by [`BOUND`].
pub async fn run_in(
    activation: &Activation,
    environment_id: &str,
    root: &Path,
    argv: &[&str],
    options: RunOptions,
) -> Result<ExecuteResult, BackendError> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let env = BTreeMap::new();
    let cwd = resolve_cwd(root, None).unwrap();
    let spec = RunSpec {
        activation,
        environment_id,
        argv: &argv,
        cwd: &cwd,
        env: &env,
        options,
    };
    tokio::time::timeout(BOUND, run_with_stack(spec, &[]))
        .await
        .expect("run finished in time")
}

pub fn write_script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    write_executable(&path, &format!("#!/bin/sh\n{body}\n"));
    path
}

/// Whether `pid` is a live process (a zombie counts as gone).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits until `pid` has exited (its pidfd turns readable), up to `bound`; whether it did.
pub fn wait_gone(pid: i32, bound: Duration) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return true;
    };
    let pidfd = match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(_) => return true,
    };
    let deadline = Instant::now() + bound;
    loop {
        let mut poll = libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let millis = left.as_millis().max(1) as libc::c_int;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready > 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return !alive(pid.as_raw_nonzero().get());
        }
    }
}

/// A FIFO that children write their pids into, one per line; the test reads them as they
/// arrive.
pub struct PidPipe {
    pub path: PathBuf,
    receiver: tokio::net::unix::pipe::Receiver,
    buffer: Vec<u8>,
}

impl PidPipe {
    /// Creates the FIFO `name` in `dir` and opens it (read-write, so it never sees an end of
    /// file between writers).
    pub fn new(dir: &Path, name: &str) -> Self {
        let path = dir.join(name);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let receiver = tokio::net::unix::pipe::OpenOptions::new()
            .read_write(true)
            .open_receiver(&path)
            .unwrap();
        PidPipe {
            path,
            receiver,
            buffer: Vec::new(),
        }
    }

    pub fn arg(&self) -> &str {
        self.path.to_str().unwrap()
    }

    /// The next `count` pids written, waiting up to [`BOUND`].
    pub async fn pids(&mut self, count: usize) -> Vec<i32> {
        use tokio::io::AsyncReadExt;
        let read = async {
            loop {
                let text = String::from_utf8_lossy(&self.buffer).into_owned();
                let complete = text.rsplit_once('\n').map_or("", |(lines, _)| lines);
                let pids: Vec<i32> = complete
                    .split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect();
                if pids.len() >= count {
                    return pids;
                }
                let mut chunk = [0u8; 256];
                let n = self.receiver.read(&mut chunk).await.unwrap();
                self.buffer.extend_from_slice(&chunk[..n]);
            }
        };
        tokio::time::timeout(BOUND, read)
            .await
            .expect("the pids arrived in time")
    }
}

/// The containing modes to test: every one this machine offers (all three when running as
/// root, which CI does).
pub fn containing_modes() -> Vec<ContainmentMode> {
    let root = rustix::process::geteuid().is_root();
    let best = containment_mode();
    let mut modes = Vec::new();
    if best == ContainmentMode::Cgroup || root {
        modes.push(ContainmentMode::Cgroup);
    }
    if root {
        modes.push(ContainmentMode::PidNamespace {
            user_namespace: false,
        });
    }
    if root
        || best
            == (ContainmentMode::PidNamespace {
                user_namespace: true,
            })
    {
        modes.push(ContainmentMode::PidNamespace {
            user_namespace: true,
        });
    }
    modes
}

/// Options that select `mode`.
pub fn contained(mode: ContainmentMode) -> RunOptions {
    RunOptions {
        containment: Some(mode),
        ..RunOptions::default()
    }
}

/// A real Python 3 interpreter: the newest 3.x under `$PYENV_ROOT/versions`.
pub fn python3() -> PathBuf {
    if let Some(python) = std::env::var_os(TEST_PYTHON_VAR) {
        return PathBuf::from(python);
    }
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")))
        .expect("PYENV_ROOT or HOME");
    let mut versions: Vec<(u32, u32, PathBuf)> = std::fs::read_dir(root.join("versions"))
        .expect("pyenv versions")
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let mut parts = name.split('.');
            let (major, minor) = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
            let python = entry.path().join("bin/python3");
            (major == 3 && python.exists()).then_some((major, minor, python))
        })
        .collect();
    versions.sort();
    versions.pop().expect("a Python 3 under pyenv").2
}

/// Kills `pid` if it is still there (cleanup after a test that expected it to survive).
pub fn kill(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// Set for a test run as another user, who cannot read the pyenv interpreters: the Python to
/// use instead.
pub const TEST_PYTHON_VAR: &str = "WSP_TEST_PYTHON";

/// The uid and gid an unprivileged rerun takes (`nobody`).
const UNPRIVILEGED: u32 = 65534;

/// Under root, runs `tests` of the caller's module (`module_path!()`) of this test binary again
/// as an unprivileged user (with `setpriv`, Python from `/usr/bin/python3`) and asserts they
/// pass; otherwise does nothing, since the run itself is then the unprivileged one.
pub fn rerun_unprivileged(module: &str, tests: &[&str]) {
    if rustix::process::geteuid().as_raw() != 0 || std::env::var_os(TEST_PYTHON_VAR).is_some() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("a home");
    std::fs::set_permissions(home.path(), PermissionsExt::from_mode(0o777))
        .expect("the home is open");
    // A copy the other user can run wherever the checkout lies (a home of mode 0700, say).
    let exe = home.path().join("tests");
    let copied = std::process::Command::new("cp")
        .arg(std::env::current_exe().expect("the test binary"))
        .arg(&exe)
        .status()
        .expect("cp runs");
    // Copied by a child process, for the reason `write_executable` gives; cp keeps the mode.
    assert!(copied.success(), "the test binary is copied");
    let id = UNPRIVILEGED.to_string();
    for test in tests {
        let output = std::process::Command::new("setpriv")
            .args(["--reuid", &id, "--regid", &id, "--clear-groups", "--"])
            .arg(&exe)
            .arg("--exact")
            .arg(test_name(module, test))
            .args(["--test-threads", "1", "--nocapture"])
            .env(TEST_PYTHON_VAR, "/usr/bin/python3")
            .env("HOME", home.path())
            .env("TMPDIR", "/tmp")
            .env_remove("PYENV_ROOT")
            .output()
            .expect("setpriv runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{test} as uid {id}:\n{text}");
        assert!(
            text.contains("1 passed"),
            "{test} did not run as uid {id}:\n{text}"
        );
    }
}

/// The name libtest knows a test by: its path inside the test binary's crate.
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_crate, inside)) => format!("{inside}::{test}"),
        None => test.to_owned(),
    }
}
