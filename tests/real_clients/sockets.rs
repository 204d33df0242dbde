//! The clients that connect to a running `wsp serve --listen`: vscode-jsonrpc's socket
//! transport over a Unix socket, vscode-ws-jsonrpc (with `ws`) over a WebSocket with the
//! token the server made (after an upgrade with a wrong token is refused with 401), each
//! through one full session that ends its connection only; the server then stops on SIGTERM
//! with status 0 and no environment left.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};

use rustix::process::{kill_process, Pid, Signal};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use crate::serve_listening::serve_listening;
use crate::{
    assert_every_answer_right, client_output, clients_dir, environments_left,
    node_packages_installed, CLIENT_DEADLINE,
};

/// A running `wsp serve --listen ADDR` on a state directory of its own.
pub(crate) struct Listening {
    child: Child,
    /// Where it listens, as its `listening on` line says: `unix:PATH` or `ws://HOST:PORT`.
    pub(crate) address: String,
    pub(crate) state_dir: PathBuf,
    /// Its stderr up to its `listening on` line, and (`later`) what it wrote after, read to
    /// the end once `stderr_read` is done.
    log: String,
    later: Arc<Mutex<String>>,
    stderr_read: JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Listening {
    /// `wsp serve --listen unix:<private dir>/wsp.sock`.
    pub(crate) async fn unix() -> Listening {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        let listen = format!("unix:{}", dir.path().join("wsp.sock").display());
        Listening::start(dir, &listen, &[]).await
    }

    /// `wsp serve --listen ws://127.0.0.1:0 EXTRA...`, with the token it makes.
    pub(crate) async fn websocket(extra: &[&str]) -> Listening {
        let dir = tempfile::tempdir().expect("a temp dir");
        Listening::start(dir, "ws://127.0.0.1:0", extra).await
    }

    async fn start(dir: tempfile::TempDir, listen: &str, extra: &[&str]) -> Listening {
        let state_dir = dir.path().join("state");
        let later = Arc::new(Mutex::new(String::new()));
        let started = serve_listening(
            &state_dir,
            listen,
            "",
            extra,
            &[],
            Some(Arc::clone(&later)),
            CLIENT_DEADLINE,
        )
        .await
        .unwrap_or_else(|log| panic!("the server exited before listening:\n{log}"));
        Listening {
            child: started.child,
            address: started.rest,
            state_dir,
            log: started.log,
            later,
            stderr_read: started.stderr_read,
            _dir: dir,
        }
    }

    /// The token file the server made (mode 0600).
    pub(crate) fn token_file(&self) -> PathBuf {
        self.state_dir.join("server.token")
    }

    /// Stops the server with SIGTERM; asserts that `output` is a right session, that the
    /// server exited 0 and that no environment is left.
    pub(crate) async fn finish(mut self, output: &Output, what: &str) {
        let pid = self.child.id().expect("the server still runs") as i32;
        kill_process(Pid::from_raw(pid).expect("a pid"), Signal::TERM).expect("SIGTERM");
        let status = tokio::time::timeout(CLIENT_DEADLINE, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("wait");
        let _ = self.stderr_read.await;
        let later = self
            .later
            .lock()
            .map(|later| later.clone())
            .unwrap_or_default();
        let context = format!("\nserver log:\n{}{later}", self.log);
        assert_every_answer_right(output, what, &context);
        assert!(status.success(), "the server exited {status}{context}");
        let left = environments_left(&self.state_dir);
        assert!(left.is_empty(), "environments left on disk: {left:?}");
    }
}

/// Runs `node tests/clients/node/SCRIPT ARGS...` to its end.
pub(crate) async fn run_node(script: &str, args: &[&str]) -> Output {
    let mut command = Command::new("node");
    command
        .arg(clients_dir().join("node").join(script))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    client_output(command, script).await
}

#[tokio::test]
async fn vscode_jsonrpc_completes_a_session_over_a_unix_socket() {
    if !node_packages_installed(&["vscode-jsonrpc"]) {
        return;
    }
    let server = Listening::unix().await;
    let socket = server
        .address
        .strip_prefix("unix:")
        .expect("a unix: address");
    let output = run_node("socket_session.js", &[socket]).await;
    server.finish(&output, "socket_session.js").await;
}

#[tokio::test]
async fn vscode_ws_jsonrpc_completes_a_session_over_a_websocket() {
    if !node_packages_installed(&["vscode-ws-jsonrpc", "ws"]) {
        return;
    }
    let server = Listening::websocket(&[]).await;
    let url = format!("{}/", server.address);
    let token_file = server.token_file().display().to_string();
    let output = run_node("ws_session.mjs", &[&url, &token_file]).await;
    server.finish(&output, "ws_session.mjs").await;
}
