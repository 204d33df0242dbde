//! What the sandbox tests share: a state directory with two environments beside a directory
//! outside it, and a Python script that tries file and network operations and reports each
//! one's outcome (`ok` or the errno's name).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tempfile::TempDir;
use wsp_backend::BackendError;
use wsp_exec::{Activation, ContainmentMode, RunOptions, SandboxPolicy};
use wsp_protocol::{ExecuteResult, FailureReason};

#[path = "../execute_support/mod.rs"]
pub mod execute_support;

#[allow(unused_imports)]
pub use execute_support::{containing_modes, python3, BOUND};

pub const ID: &str = "env-aaaaaaaaaaaa";
pub const OTHER_ID: &str = "env-bbbbbbbbbbbb";

/// Tries each `op|path[|path]` argument and prints a JSON object of outcomes. `$VARS` in
/// paths are expanded in the child.
const ATTEMPT: &str = r#"
import errno, json, os, socket, sys

def attempt(op, *args):
    args = [os.path.expandvars(a) for a in args]
    try:
        if op == "append":
            with open(args[0], "a") as f:
                f.write("written from the sandbox\n")
        elif op == "create":
            os.close(os.open(args[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        elif op == "read":
            with open(args[0], "rb") as f:
                f.read(16)
        elif op == "list":
            os.listdir(args[0])
        elif op == "truncate":
            os.truncate(args[0], 0)
        elif op == "mkdir":
            os.mkdir(args[0])
        elif op == "unlink":
            os.unlink(args[0])
        elif op == "rename":
            os.rename(args[0], args[1])
        elif op == "link":
            os.link(args[0], args[1])
        elif op == "tcp":
            socket.create_connection(("127.0.0.1", int(args[0])), timeout=5).close()
        elif op == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(b"from the sandbox", ("127.0.0.1", int(args[0])))
            s.close()
        elif op == "abstract":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("\0" + args[0])
            s.close()
        elif op == "kill":
            os.kill(int(args[0]), 0)
        elif op == "chmod":
            os.chmod(args[0], 0o4777)
        elif op == "fchmod-stdin":
            os.fchmod(0, 0o666)
        elif op == "utime":
            os.utime(args[0], (0, 0))
        elif op == "setxattr":
            os.setxattr(args[0], "user.wsp-escape", b"1")
        elif op == "chmod-mode":
            os.chmod(args[0], int(args[1], 8))
        elif op == "fchmod-mode":
            fd = os.open(args[0], os.O_RDONLY)
            try:
                os.fchmod(fd, int(args[1], 8))
            finally:
                os.close(fd)
        elif op == "create-mode":
            os.close(os.open(args[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, int(args[1], 8)))
        elif op == "mkdir-mode":
            os.mkdir(args[0], int(args[1], 8))
        elif op == "mknod-mode":
            import stat
            os.mknod(args[0], stat.S_IFREG | int(args[1], 8))
        elif op == "file-capability":
            # v2 security.capability: effective, permitting CAP_SETUID (7).
            import struct
            os.setxattr(args[0], "security.capability", struct.pack("<5I", 0x02000001, 1 << 7, 0, 0, 0))
        elif op == "chown":
            os.chown(args[0], os.getuid(), os.getgid())
        elif op == "shm-attach":
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            shmid = libc.shmget(int(args[0]), 0, 0)
            if shmid < 0:
                raise OSError(ctypes.get_errno(), "shmget")
        elif op == "shm-create":
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.shmget(int(args[0]), 4096, 0o1600) < 0:  # IPC_CREAT | 0600
                raise OSError(ctypes.get_errno(), "shmget")
        elif op == "msg-create":
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.msgget(int(args[0]), 0o1600) < 0:
                raise OSError(ctypes.get_errno(), "msgget")
        elif op == "setns":
            import ctypes
            fd = os.open(args[0], os.O_RDONLY)
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
                raise OSError(ctypes.get_errno(), "setns")
        else:
            return "unknown op " + op
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

print(json.dumps({"tmpdir": os.environ.get("TMPDIR"),
                  "results": {a: attempt(*a.split("|")) for a in sys.argv[1:]}}))
"#;

/// `<state>/environments/<ID>` and `<OTHER_ID>` (holding `secret.txt`), `<state>/index.json`,
/// and a directory `outside` (holding `file.txt` and `dir/`) next to the state directory.
pub struct Fixture {
    pub state: TempDir,
    pub outside: TempDir,
    pub root: PathBuf,
    pub other_root: PathBuf,
    pub activation: Activation,
}

impl Fixture {
    pub fn new() -> Self {
        let state = TempDir::new().unwrap();
        let outside = TempDir::new().unwrap();
        let root = state.path().join("environments").join(ID);
        let other_root = state.path().join("environments").join(OTHER_ID);
        let activation = Activation::venv(&root);
        std::fs::create_dir_all(&activation.bin_dir).unwrap();
        std::fs::create_dir_all(&other_root).unwrap();
        std::fs::write(other_root.join("secret.txt"), "the other environment's\n").unwrap();
        std::fs::write(state.path().join("index.json"), "{}\n").unwrap();
        std::fs::write(outside.path().join("file.txt"), "original\n").unwrap();
        std::fs::create_dir(outside.path().join("dir")).unwrap();
        std::fs::write(activation.bin_dir.join("attempt.py"), ATTEMPT).unwrap();
        Fixture {
            state,
            outside,
            root: root.canonicalize().unwrap(),
            other_root: other_root.canonicalize().unwrap(),
            activation,
        }
    }

    pub fn outside(&self, name: &str) -> PathBuf {
        self.outside.path().join(name)
    }

    /// The sandbox of the environment `ID`, hiding the state directory.
    pub fn policy(&self) -> SandboxPolicy {
        SandboxPolicy::offline(self.root.clone(), vec![self.state.path().to_path_buf()])
    }

    /// Sandboxed options in `mode`.
    pub fn sandboxed(&self, mode: ContainmentMode) -> RunOptions {
        RunOptions {
            containment: Some(mode),
            sandbox: Some(self.policy()),
            ..RunOptions::default()
        }
    }

    pub async fn run(
        &self,
        argv: &[&str],
        options: RunOptions,
    ) -> Result<ExecuteResult, BackendError> {
        execute_support::run_in(&self.activation, ID, &self.root, argv, options).await
    }

    /// `ran` at the environment root: [`Self::marking_script`] leaves it there.
    pub fn marker(&self) -> PathBuf {
        self.root.join("ran")
    }

    /// A shell script that leaves [`Self::marker`] behind, showing that it ran.
    pub fn marking_script(&self) -> String {
        format!(": > {}", self.marker().display())
    }

    /// Runs [`Self::marking_script`] sandboxed in `mode`, which must be refused as
    /// `sandbox-unavailable` with nothing run; returns the refusal's detail.
    pub async fn sandbox_refusal(&self, mode: ContainmentMode) -> String {
        let refused = self
            .run(&["sh", "-c", &self.marking_script()], self.sandboxed(mode))
            .await
            .unwrap_err();
        let detail = match refused {
            BackendError::Failed { reason, detail, .. } => {
                assert_eq!(reason, FailureReason::SandboxUnavailable);
                detail
            }
            other => panic!("{other:?}"),
        };
        assert!(!self.marker().exists(), "nothing ran");
        detail
    }

    /// Runs the attempt script with `attempts`; returns the child's `TMPDIR` and each
    /// attempt's outcome.
    pub async fn attempt(
        &self,
        attempts: &[String],
        options: RunOptions,
    ) -> (Option<PathBuf>, BTreeMap<String, String>) {
        let python = python3();
        let script = self.activation.bin_dir.join("attempt.py");
        let mut argv = vec![python.to_str().unwrap(), script.to_str().unwrap()];
        argv.extend(attempts.iter().map(String::as_str));
        let result = self.run(&argv, options).await.unwrap();
        assert_eq!(result.exit_code, 0, "{result:?}");
        let report: serde_json::Value = serde_json::from_str(&result.stdout).unwrap();
        let tmpdir = report["tmpdir"].as_str().map(PathBuf::from);
        let results = report["results"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        println!("TMPDIR {tmpdir:?}: {results:#?}");
        (tmpdir, results)
    }
}

/// `op|path` (and `|path2`) as an attempt argument.
pub fn op(op: &str, paths: &[&Path]) -> String {
    let mut text = op.to_owned();
    for path in paths {
        text.push('|');
        text.push_str(path.to_str().unwrap());
    }
    text
}
