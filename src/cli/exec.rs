//! `wsp exec`: the command's output shown live (from `environment/output` notifications), this
//! program's stdin passed on as it arrives (`environment/input`; `-n` gives the command none),
//! `-i`'s pseudo-terminal, and `--timeout`.

use std::io::Write;
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;

use tokio::io::{AsyncRead, AsyncWrite};
use wsp_protocol::method::Execute;
use wsp_protocol::method::Method;
use wsp_protocol::results::{ExecuteResult, OutputParams};
use wsp_protocol::Response;
use wsp_protocol::{methods, ExecuteParams};
use wsp_server::client::{Client, ClientError, Peer, ServerNotification};

use super::commands::{print_json, shell_status, CliError};
use super::exec_input::{all_terminals, stdin_chunks, terminal_size, RawTerminal};

/// The exit status of a command that `--timeout` killed, as `timeout(1)` has it.
pub const TIMED_OUT_STATUS: i32 = 124;

/// The exit status after Ctrl-C, as a shell gives a command that SIGINT ended.
pub const INTERRUPTED_STATUS: i32 = 128 + 2;

/// How long an interrupted `wsp exec` waits for the server to say the command is gone.
const CANCEL_PATIENCE: Duration = Duration::from_secs(5);

/// How long an interrupted `wsp exec` tries to send the cancel.
const CANCEL_SEND_PATIENCE: Duration = Duration::from_secs(1);

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
    /// `-n`, `--no-stdin`.
    pub no_stdin: bool,
    /// `-i`, `--interactive`.
    pub interactive: bool,
    /// `--max-output-bytes`.
    pub max_output_bytes: Option<u64>,
    /// `--strict-output`.
    pub strict_output: bool,
}

/// Runs the command; returns the exit status `wsp exec` ends with.
pub async fn exec<R, W, P>(
    client: &mut Client<R, W, P>,
    request: ExecRequest,
    json: bool,
) -> Result<i32, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    if request.interactive && json {
        return Err(CliError::Usage(
            "-i runs the command on a terminal, whose output --json can't hold".into(),
        ));
    }
    let pty = (request.interactive || (!request.no_stdin && !json && all_terminals()))
        .then(terminal_size);
    let stdin_stream = pty.is_some() || !request.no_stdin;
    let params = ExecuteParams {
        id: request.id,
        argv: request.argv,
        cwd: request.cwd,
        env: request.env.into_iter().collect(),
        stdin: None,
        timeout_ms: request.timeout.map(|timeout| {
            u64::try_from(timeout.as_millis())
                .unwrap_or(u64::MAX)
                .max(1)
        }),
        max_output_bytes: request.max_output_bytes,
        stream: !json,
        limits: Default::default(),
        sandbox: None,
        stdin_stream,
        pty,
    };
    let mut streamed = Streamed::default();
    let input = stdin_stream.then(stdin_chunks);
    // Restored when this returns, whatever it returns.
    let raw = pty.and_then(|_| RawTerminal::enter());
    let result = run_until_interrupted(client, &params, &mut streamed, input).await;
    drop(raw);
    streamed.failed.map_or(Ok(()), Err)?;
    let Some(result) = result? else {
        return Ok(INTERRUPTED_STATUS);
    };
    if json {
        print_json(&result)?;
    } else {
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
    }
    let cut = say_what_was_cut(&result, request.max_output_bytes)?;
    if result.timed_out {
        let after = request
            .timeout
            .map(|t| format!(" after {t:?}"))
            .unwrap_or_default();
        let line = format!("wsp: the command timed out{after} and was killed\n");
        write(&mut std::io::stderr(), &line)?;
        return Ok(TIMED_OUT_STATUS);
    }
    match shell_status(result.exit_code) {
        0 if cut && request.strict_output => Ok(1),
        status => Ok(status),
    }
}

/// Says on stderr which streams the server cut; whether it cut any.
fn say_what_was_cut(result: &ExecuteResult, cap: Option<u64>) -> Result<bool, CliError> {
    let cut: Vec<&str> = [
        ("stdout", result.stdout_truncated),
        ("stderr", result.stderr_truncated),
    ]
    .into_iter()
    .filter_map(|(name, truncated)| truncated.then_some(name))
    .collect();
    if cut.is_empty() {
        return Ok(false);
    }
    let at = cap.map_or("the server's cap".to_owned(), |bytes| {
        format!("{bytes} bytes")
    });
    let line = format!(
        "wsp: the command's {} was cut at {at}; --max-output-bytes raises the cap\n",
        cut.join(" and ")
    );
    write(&mut std::io::stderr(), &line)?;
    Ok(true)
}

/// Sends the execute and waits for its result, showing its output as it comes. Ctrl-C (SIGINT)
/// cancels it, which kills the command at once; then `None`, once the server has answered.
async fn run_until_interrupted<R, W, P>(
    client: &mut Client<R, W, P>,
    params: &ExecuteParams,
    streamed: &mut Streamed,
    mut input: Option<mpsc::Receiver<String>>,
) -> Result<Option<ExecuteResult>, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    let shape = |part, source| ClientError::WrongShape {
        method: Execute::NAME,
        part,
        source,
    };
    let params = serde_json::to_value(params).map_err(|e| shape("params", e))?;
    let pty = params.get("pty").is_some_and(|pty| !pty.is_null());
    let id = client.send_request(Execute::NAME, Some(params)).await?;
    let mut resized = pty
        .then(|| tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change()).ok())
        .flatten();
    let interrupted = loop {
        tokio::select! {
            response = client.response_to(id, |n| streamed.show(&n)) => break Some(response?),
            chunk = next_chunk(&mut input) => {
                let params = match chunk {
                    Some(data) => json!({"request_id": id, "data": data}),
                    None => {
                        input = None;
                        json!({"request_id": id, "data": "", "eof": true})
                    }
                };
                // A command that doesn't read holds the input back; Ctrl-C still ends the wait.
                tokio::select! {
                    sent = client.notify_reading(methods::INPUT, params, |n| streamed.show(&n)) => sent?,
                    _ = tokio::signal::ctrl_c() => break None,
                }
            }
            Some(()) = next_resize(&mut resized) => {
                let size = terminal_size();
                let params = json!({"request_id": id, "rows": size.rows, "cols": size.cols});
                client.notify(methods::RESIZE, Some(params)).await?;
            }
            // With `-i` on a terminal, Ctrl-C is a key for the command, not a signal.
            _ = tokio::signal::ctrl_c() => break None,
        }
    };
    let Some(response) = interrupted else {
        // A server held back by input the command doesn't read may not take the cancel; a
        // spawned one is then stopped, and its drain kills the command.
        match tokio::time::timeout(CANCEL_SEND_PATIENCE, client.cancel(id)).await {
            Ok(Ok(())) => {
                let _ = tokio::time::timeout(CANCEL_PATIENCE, client.response_to(id, |_| {})).await;
            }
            _ => {
                let _ = client.terminate();
            }
        }
        return Ok(None);
    };
    let response = Response::from_value(response).map_err(ClientError::NotAResponse)?;
    let result = response.outcome.map_err(CliError::Rpc)?;
    Ok(Some(
        serde_json::from_value(result).map_err(|e| shape("result", e))?,
    ))
}

/// The next chunk of stdin (`None`: its end); never, once it ended or with no stdin.
async fn next_chunk(input: &mut Option<mpsc::Receiver<String>>) -> Option<String> {
    match input {
        Some(chunks) => chunks.recv().await,
        None => std::future::pending().await,
    }
}

/// The next change of this program's terminal size; never without a terminal.
async fn next_resize(resized: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match resized {
        Some(signal) => signal.recv().await,
        None => std::future::pending().await,
    }
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
