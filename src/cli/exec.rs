//! `wsp exec`: the command's output shown live (from `environment/output` notifications), this
//! program's stdin passed on when it is a pipe or a file, and `--timeout`.

use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

use serde_json::{Map, Value};
use wsp_protocol::results::OutputParams;
use wsp_protocol::{methods, ExecuteResult};
use wsp_server::client::{ProcessClient, ServerNotification};

use super::commands::{parse, print_json, shell_status, CliError};

/// The most bytes of stdin passed on (the request must fit in a frame).
pub const MAX_STDIN_BYTES: u64 = 32 * 1024 * 1024;

/// The exit status of a command that `--timeout` killed, as `timeout(1)` has it.
pub const TIMED_OUT_STATUS: i32 = 124;

/// What `wsp exec` runs, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The environment's id.
    pub id: String,
    /// The working directory.
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The command.
    pub argv: Vec<String>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--no-stdin`.
    pub no_stdin: bool,
}

/// Runs the command; returns the exit status `wsp exec` ends with.
pub async fn exec(
    client: &mut ProcessClient,
    request: ExecRequest,
    json: bool,
) -> Result<i32, CliError> {
    let mut params = Map::new();
    params.insert("id".into(), request.id.into());
    params.insert("argv".into(), request.argv.into());
    if let Some(cwd) = request.cwd {
        params.insert("cwd".into(), cwd.into());
    }
    if !request.env.is_empty() {
        let env: Map<String, Value> = request
            .env
            .into_iter()
            .map(|(k, v)| (k, v.into()))
            .collect();
        params.insert("env".into(), env.into());
    }
    if let Some(timeout) = request.timeout {
        let ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        params.insert("timeout_ms".into(), ms.into());
    }
    if !request.no_stdin {
        if let Some(stdin) = read_stdin().await? {
            params.insert("stdin".into(), stdin.into());
        }
    }
    if !json {
        params.insert("stream".into(), true.into());
    }
    let mut streamed = Streamed::default();
    let response = client
        .request_with(methods::EXECUTE, Some(params.into()), |n| streamed.show(&n))
        .await?;
    streamed.failed.map_or(Ok(()), Err)?;
    let result = response.outcome.map_err(CliError::Rpc)?;
    if json {
        return print_json(&result);
    }
    let result: ExecuteResult = parse(methods::EXECUTE, result)?;
    // Whatever the notifications did not carry (a server that does not stream) comes from
    // the result.
    write(
        &mut std::io::stdout(),
        rest(&result.stdout, &streamed.stdout),
    )?;
    write(
        &mut std::io::stderr(),
        rest(&result.stderr, &streamed.stderr),
    )?;
    if result.timed_out {
        let after = request
            .timeout
            .map(|t| format!(" after {t:?}"))
            .unwrap_or_default();
        let line = format!("wsp: the command timed out{after} and was killed\n");
        write(&mut std::io::stderr(), &line)?;
        return Ok(TIMED_OUT_STATUS);
    }
    Ok(shell_status(result.exit_code))
}

/// What was already shown of each stream.
#[derive(Default)]
struct Streamed {
    stdout: String,
    stderr: String,
    failed: Option<CliError>,
}

impl Streamed {
    fn show(&mut self, notification: &ServerNotification) {
        if notification.method != methods::OUTPUT || self.failed.is_some() {
            return;
        }
        let Ok(output) = serde_json::from_value::<OutputParams>(notification.params.clone()) else {
            return;
        };
        let written = match output.stream {
            wsp_protocol::results::OutputStream::Stdout => {
                self.stdout.push_str(&output.data);
                write(&mut std::io::stdout(), &output.data)
            }
            wsp_protocol::results::OutputStream::Stderr => {
                self.stderr.push_str(&output.data);
                write(&mut std::io::stderr(), &output.data)
            }
        };
        self.failed = written.err();
    }
}

/// The part of `all` after `shown`, when `all` begins with it; else nothing more.
fn rest<'a>(all: &'a str, shown: &str) -> &'a str {
    all.strip_prefix(shown).unwrap_or("")
}

fn write(out: &mut impl Write, text: &str) -> Result<(), CliError> {
    if text.is_empty() {
        return Ok(());
    }
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::Output)
}

/// This program's stdin, read to its end, unless it is a terminal.
async fn read_stdin() -> Result<Option<String>, CliError> {
    if std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let read = tokio::task::spawn_blocking(|| {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_STDIN_BYTES + 1)
            .read_to_end(&mut bytes)
            .map(|_| bytes)
    })
    .await
    .map_err(|e| CliError::Usage(format!("reading stdin: {e}")))?;
    let bytes = read.map_err(|e| CliError::Usage(format!("reading stdin: {e}")))?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(CliError::Usage(format!(
            "stdin holds more than {MAX_STDIN_BYTES} bytes; pass --no-stdin or a smaller input"
        )));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| {
        CliError::Usage("stdin is not UTF-8 text, which is all WSP can pass on".into())
    })
}
