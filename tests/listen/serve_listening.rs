//! Starting `wsp serve --listen ADDRESS` and waiting until it says where it listens (shared
//! by the listen and real-clients test binaries).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

/// What a listening server said before and on its `listening on ...` line.
pub(crate) struct Listening {
    pub(crate) child: Child,
    /// The rest of the line after `prefix` (a port, say).
    pub(crate) rest: String,
    /// Its stderr up to and including that line.
    pub(crate) log: String,
    /// The task reading the rest of its stderr (into `later`), done once stderr ends.
    #[allow(
        dead_code,
        reason = "awaited by the real clients' binary, not by the listen one"
    )]
    pub(crate) stderr_read: JoinHandle<()>,
}

/// Starts `wsp serve --state-dir STATE_DIR --listen ADDRESS EXTRA…` (without any `WSP_TOKEN`
/// of the test's own environment) and reads its stderr until a line starts with
/// `listening on PREFIX`, waiting up to `patience` for each line. The lines after it go to
/// `later`, if given. `Err` holds the stderr of a server that ended first.
pub(crate) async fn serve_listening(
    state_dir: &Path,
    address: &str,
    prefix: &str,
    extra: &[&str],
    env: &[(&str, &str)],
    later: Option<Arc<Mutex<String>>>,
    patience: Duration,
) -> Result<Listening, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("serve")
        .arg("--state-dir")
        .arg(state_dir)
        .args(["--listen", address])
        .args(extra)
        .env_remove("WSP_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("wsp serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let expected = format!("listening on {prefix}");
    let mut log = String::new();
    loop {
        let line = tokio::time::timeout(patience, lines.next_line())
            .await
            .expect("a line in time")
            .expect("stderr");
        let Some(line) = line else { return Err(log) };
        log.push_str(&format!("{line}\n"));
        if let Some(rest) = line.strip_prefix(&expected) {
            let rest = rest.to_owned();
            let stderr_read = tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(later) = &later {
                        let mut later = later.lock().expect("the log");
                        later.push_str(&line);
                        later.push('\n');
                    }
                }
            });
            return Ok(Listening {
                child,
                rest,
                log,
                stderr_read,
            });
        }
    }
}
