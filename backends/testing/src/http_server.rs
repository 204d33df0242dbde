//! A directory served over HTTP on a free loopback port, by Python's `http.server`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};

/// How long the server may take to say where it serves.
const START_DEADLINE: Duration = Duration::from_secs(60);

/// `python -m http.server` serving one directory; killed when dropped.
pub struct StaticHttpServer {
    child: Child,
    // Held open: the server must not write into a closed pipe.
    _stdout: BufReader<ChildStdout>,
    port: u16,
}

impl StaticHttpServer {
    /// Serves `dir` with the interpreter `python`. The port is read from the server's first
    /// line, so the server is accepting once this returns.
    pub async fn start(python: impl AsRef<Path>, dir: &Path) -> StaticHttpServer {
        let mut child = Command::new(python.as_ref())
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .arg("--directory")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python -m http.server starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        tokio::time::timeout(START_DEADLINE, stdout.read_line(&mut line))
            .await
            .expect("http.server says where it serves in time")
            .expect("http.server's stdout");
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|word| *word != "port")
            .nth(1)
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        StaticHttpServer {
            child,
            _stdout: stdout,
            port,
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops serving: the server is killed and reaped, so its port refuses from now on.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

impl Drop for StaticHttpServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
