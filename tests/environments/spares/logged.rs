//! [`Logged`]: a server whose debug log is read line by line as it is written, for the spares
//! tests to sync on.

use std::path::Path;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::ChildStderr;

use crate::support::Server;

pub(super) const READY: &str = "a spare environment is ready";
const PREPARED: &str = "a spare environment is prepared for installs";

/// A server whose stderr is read line by line as it comes.
pub(super) struct Logged {
    pub(super) server: Server,
    log: Lines<BufReader<ChildStderr>>,
    seen: String,
}

impl Logged {
    pub(super) fn start(state: &Path, extra: &[&str]) -> Logged {
        Logged::start_with_env(state, extra, &[])
    }

    pub(super) fn start_with_env(state: &Path, extra: &[&str], env: &[(&str, &str)]) -> Logged {
        let mut server = Server::start_with_env(state, extra, env);
        let stderr = server.child.stderr.take().expect("stderr");
        Logged {
            server,
            log: BufReader::new(stderr).lines(),
            seen: String::new(),
        }
    }

    /// The id of the next spare on Python `python` (`X.Y`) the server says is ready.
    pub(super) async fn next_spare_of(&mut self, state: &Path, python: &str) -> String {
        loop {
            let spare = self.next_spare().await;
            let cfg = state.join("environments").join(&spare).join("pyvenv.cfg");
            let cfg = std::fs::read_to_string(cfg).unwrap_or_default();
            if cfg.contains(&format!("\nversion = {python}.")) {
                return spare;
            }
        }
    }

    /// The id of the next spare the server says is ready.
    pub(super) async fn next_spare(&mut self) -> String {
        self.next_spare_and_if_prepared().await.0
    }

    /// The id of the next spare the server says is ready, and whether it is to be prepared
    /// for installs (after a create that installed).
    pub(super) async fn next_spare_and_if_prepared(&mut self) -> (String, bool) {
        let line = self.next_line_saying(READY).await;
        let at = line.find("env-").expect("the spare's id");
        let prepare = match () {
            () if line.contains("prepare=true") => true,
            () if line.contains("prepare=false") => false,
            () => panic!("the line says nothing of preparing: {line}"),
        };
        (line[at..at + 16].to_owned(), prepare)
    }

    /// Waits for the server to say that spare `id` is prepared for installs.
    pub(super) async fn prepared(&mut self, id: &str) {
        while !self.next_line_saying(PREPARED).await.contains(id) {}
    }

    /// The next log line that contains `words`.
    pub(super) async fn next_line_saying(&mut self, words: &str) -> String {
        loop {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(60), self.log.next_line())
                    .await
                    .expect("a log line in time")
                    .expect("stderr reads")
                    .unwrap_or_else(|| panic!("the log ended before {words:?}:\n{}", self.seen));
            self.seen.push_str(&line);
            self.seen.push('\n');
            if line.contains(words) {
                return line;
            }
        }
    }

    /// Closes stdin and waits for the exit; the whole log.
    pub(super) async fn finish(mut self) -> String {
        self.server.close();
        while let Some(line) = self.log.next_line().await.expect("stderr reads") {
            self.seen.push_str(&line);
            self.seen.push('\n');
        }
        let status = self.server.child.wait().await.expect("wait");
        assert!(status.success(), "{status}:\n{}", self.seen);
        self.seen
    }

    pub(super) async fn create(&mut self, id: i64, name: &str, python: &str) -> Value {
        let params = json!({"name": name, "python_version": python});
        let created = self.server.call(id, "environment/create", params).await;
        assert!(created.get("result").is_some(), "{created}");
        created["result"].clone()
    }
}
