//! Starting `wsp serve --listen ADDRESS` and waiting until it says where it listens.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::PATIENCE;

/// What a listening server said before and on its `listening on ...` line.
pub(crate) struct Listening {
    pub(crate) child: Child,
    /// The rest of the line after `prefix` (a port, say).
    pub(crate) rest: String,
    /// Its stderr up to and including that line.
    pub(crate) log: String,
}

/// Starts `wsp serve --state-dir STATE_DIR --listen ADDRESS EXTRA…` (without any `WSP_TOKEN`
/// of the test's own environment) and reads its stderr until a line starts with
/// `listening on PREFIX`. The lines after it go to `later`, if given. `Err` holds the stderr of
/// a server that ended first.
pub(crate) async fn serve_listening(
    state_dir: &Path,
    address: &str,
    prefix: &str,
    extra: &[&str],
    env: &[(&str, &str)],
    later: Option<Arc<Mutex<String>>>,
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
        let line = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("a line in time")
            .expect("stderr");
        let Some(line) = line else { return Err(log) };
        log.push_str(&format!("{line}\n"));
        if let Some(rest) = line.strip_prefix(&expected) {
            let rest = rest.to_owned();
            tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(later) = &later {
                        let mut later = later.lock().expect("the log");
                        later.push_str(&line);
                        later.push('\n');
                    }
                }
            });
            return Ok(Listening { child, rest, log });
        }
    }
}
