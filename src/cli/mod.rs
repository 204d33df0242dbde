//! The `wsp` command line: `wsp serve`, and a client that spawns a server and talks to it.
//!
//! A client command spawns `<this program> serve` (or `--server-cmd`), sends `initialize` as
//! `wsp-cli`, then the command's requests, then closes the server's stdin — the EOF drain is how
//! the session ends; no `shutdown`/`exit` is sent — and waits for the server to exit. With
//! `--connect ADDR` (or `WSP_CONNECT`) it talks to a running `wsp serve --listen` instead, and
//! closing the connection ends its session: `unix:PATH`, or `ws://`/`wss://` (see
//! [`websocket`]) with the token from `--token-file` or `WSP_TOKEN`.
//!
//! Exit statuses ([`status`]): 0 success; 1 the server answered with a JSON-RPC error (printed to
//! stderr as `error CODE: MESSAGE` and the data pretty-printed; with `--json`, the error object as
//! one JSON line); 2 a usage or transport error (bad arguments, a server that won't start, closes
//! early or sends an undecodable frame, a refused token). `wsp exec` exits with the command's own status, a command
//! killed by signal N giving 128+N; with `--json` it prints the result (which holds `exit_code`)
//! and exits 0.

pub mod args;
pub mod commands;
pub mod exec;
pub mod local_paths;
pub mod output;
pub mod progress;
pub mod serve_args;
pub mod transport;
pub mod websocket;

use std::io::Write;
use wsp_protocol::error_chain::chain_message;

use crate::listen::ListenAddress;
use args::{Cli, ClientArgs, Command};
use commands::{Action, CliError};
use tokio::io::{AsyncRead, AsyncWrite};
use transport::{ServerCommand, TransportError};
use wsp_server::client::{describe_status, Client, Peer};

/// The exit statuses of client commands.
pub mod status {
    /// Success.
    pub const OK: i32 = 0;
    /// The server answered with a JSON-RPC error.
    pub const RPC_ERROR: i32 = 1;
    /// A usage or transport error.
    pub const FAILURE: i32 = 2;
}

/// Runs a parsed command line; returns the process exit status.
pub fn main(cli: Cli) -> i32 {
    let Cli { client, command } = cli;
    if let Command::Serve(args) = command {
        return serve_command(client, args);
    }
    match Action::from_command(command) {
        Ok((action, after)) => run_client(client.merge(after), action),
        Err(error) => report(&error, client.json),
    }
}

/// `wsp serve`: checks that only server options were given, then runs the server.
pub fn serve_command(before: ClientArgs, serve: args::ServeArgs) -> i32 {
    let client_only = before.json
        || before.server_cmd.is_some()
        || before.token_file.is_some()
        || before.ca_cert.is_some();
    if client_only {
        eprintln!(
            "wsp: --json, --server-cmd, --ca-cert and (before `serve`) --token-file are client \
             options; `wsp serve` does not take them"
        );
        return status::FAILURE;
    }
    crate::serve::run_reference_server(serve.into_config(before.server))
}

/// Spawns the server (or connects to a running one, `--connect`), runs one client action in
/// a session with it, ends the session.
pub fn run_client(args: ClientArgs, action: Action) -> i32 {
    if let Some(address) = args.connect.clone() {
        return run_connected(&args, address, action);
    }
    let server = match ServerCommand::from_args(&args) {
        Ok(server) => server,
        Err(error) => return report(&error.into(), args.json),
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(error) => return report(&error, args.json),
    };
    runtime.block_on(async {
        let mut client = match server.spawn() {
            Ok(client) => client,
            Err(error) => return report(&error.into(), args.json),
        };
        let outcome = session(&mut client, action, args.json).await;
        let finished = client.finish().await;
        let (code, transport_failed) = match &outcome {
            Ok(code) => (*code, false),
            Err(error) => (
                report(error, args.json),
                matches!(error, CliError::Transport(_)),
            ),
        };
        // A transport error already said how the server ended.
        match finished {
            Ok(exit) if exit.success() || transport_failed => {}
            Ok(exit) => eprintln!("wsp: the server ended with {}", describe_status(exit)),
            Err(error) => eprintln!("wsp: could not wait for the server: {error}"),
        }
        code
    })
}

/// One client action over a connection to a running server: no server options apply, and
/// closing the connection ends the session.
fn run_connected(args: &ClientArgs, address: ListenAddress, action: Action) -> i32 {
    if args.server_cmd.is_some() || !args.server.to_serve_flags().is_empty() {
        let usage = "--connect talks to a running server: --server-cmd and server options \
                     (--state-dir, --backend, ...) don't apply";
        return report(&CliError::Usage(usage.into()), args.json);
    }
    let tls = matches!(address, ListenAddress::WebSocket { tls: true, .. });
    let misplaced = match &address {
        ListenAddress::Unix(_) if args.token_file.is_some() => Some("--token-file"),
        _ if args.ca_cert.is_some() && !tls => Some("--ca-cert"),
        _ => None,
    };
    if let Some(option) = misplaced {
        let usage = format!("{option} does not apply to --connect {address}");
        return report(&CliError::Usage(usage), args.json);
    }
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(error) => return report(&error, args.json),
    };
    runtime.block_on(async {
        match address {
            ListenAddress::Unix(path) => {
                let stream = match tokio::net::UnixStream::connect(&path).await {
                    Ok(stream) => stream,
                    Err(source) => {
                        let error = TransportError::Connect {
                            address: format!("unix:{}", path.display()),
                            source,
                        };
                        return report(&error.into(), args.json);
                    }
                };
                let (reader, writer) = stream.into_split();
                converse(Client::new(reader, writer, ()), action, args.json).await
            }
            ListenAddress::WebSocket {
                tls,
                ref host,
                port,
            } => {
                let target = websocket::Target {
                    address: address.to_string(),
                    tls,
                    host,
                    port,
                };
                let connected = match token(args, &target.address) {
                    Ok(token) => websocket::connect(&target, &token, args.ca_cert.as_deref()).await,
                    Err(error) => Err(error),
                };
                match connected {
                    Ok(client) => converse(client, action, args.json).await,
                    Err(error) => report(&error.into(), args.json),
                }
            }
        }
    })
}

/// The token for a WebSocket server: `--token-file`'s content, else `WSP_TOKEN`, trimmed.
fn token(args: &ClientArgs, address: &str) -> Result<String, TransportError> {
    if let Some(path) = &args.token_file {
        let unusable = |reason: String| TransportError::TokenFile {
            path: path.clone(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| unusable(e.to_string()))?;
        let token = text.trim();
        if token.is_empty() {
            return Err(unusable("the file is empty".into()));
        }
        return Ok(token.to_owned());
    }
    std::env::var("WSP_TOKEN")
        .ok()
        .map(|token| token.trim().to_owned())
        .filter(|token| !token.is_empty())
        .ok_or_else(|| TransportError::NoToken {
            address: address.to_owned(),
        })
}

/// One session over a connection; the connection is closed at its end.
async fn converse<R, W>(mut client: Client<R, W, ()>, action: Action, json: bool) -> i32
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    let outcome = session(&mut client, action, json).await;
    let _ = client.finish().await;
    match outcome {
        Ok(code) => code,
        Err(error) => report(&error, json),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| TransportError::Runtime(error).into())
}

async fn session<R, W, P>(
    client: &mut Client<R, W, P>,
    action: Action,
    json: bool,
) -> Result<i32, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    client
        .initialize("wsp-cli")
        .await?
        .outcome
        .map_err(CliError::Rpc)?;
    commands::perform(client, action, json).await
}

/// Prints an error to stderr and returns the exit status it calls for.
pub fn report(error: &CliError, json: bool) -> i32 {
    let (text, code) = match error {
        CliError::Rpc(rpc) if json => (output::rpc_error_json(rpc), status::RPC_ERROR),
        CliError::Rpc(rpc) => (output::rpc_error(rpc), status::RPC_ERROR),
        other => (format!("wsp: {}\n", chain_message(other)), status::FAILURE),
    };
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
    code
}
