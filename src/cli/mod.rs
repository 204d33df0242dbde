//! The `wsp` command line: `wsp serve`, and a client that spawns a server and talks to it.
//!
//! A client command spawns `<this program> serve` (or `--server-cmd`), sends `initialize` as
//! `wsp-cli`, then the command's requests, then closes the server's stdin — the EOF drain is how
//! the session ends; no `shutdown`/`exit` is sent — and waits for the server to exit. With
//! `--connect ADDR` (or `WSP_CONNECT`) it talks to a running `wsp serve --listen` instead, and
//! closing the connection ends its session: `unix:PATH`, or `ws://`/`wss://` (see
//! [`websocket`]) with the token from `--token-file` or `WSP_TOKEN`.
//!
//! Exit statuses ([`status`]): 0 success; 1 the server answered with a JSON-RPC error (said once
//! on stderr, see [`output::rpc_error`]; with `--json`, the error object as one JSON line) or
//! `wsp delete`'s question was answered no; 2 a usage or transport error (bad arguments, a server that won't start, closes
//! early or sends an undecodable frame, a refused token). `wsp exec` exits with the command's own status, a command
//! killed by signal N giving 128+N; with `--json` it prints the result (which holds `exit_code`)
//! and exits 0.

pub mod action;
pub mod args;
pub mod commands;
pub mod confirm;
pub mod exec;
mod exec_input;
pub mod local_paths;
pub mod output;
pub mod progress;
pub mod pythons;
pub mod requirements;
pub mod serve_args;
pub mod transport;
pub mod websocket;

use std::io::Write;
use wsp_protocol::error_chain::chain_message;

use crate::listen::ListenAddress;
use action::Action;
use args::{Cli, ClientArgs, Command, PythonCommand};
use commands::CliError;
use tokio::io::{AsyncRead, AsyncWrite};
use transport::{ServerCommand, TransportError};
use wsp_server::client::{describe_status, Client, Peer};

/// The exit statuses of client commands.
pub mod status {
    /// Success.
    pub const OK: i32 = 0;
    /// The server answered with a JSON-RPC error.
    pub const RPC_ERROR: i32 = 1;
    /// The user answered no to `wsp delete`'s question.
    pub const DECLINED: i32 = 1;
    /// A usage or transport error.
    pub const FAILURE: i32 = 2;
}

/// Runs a parsed command line; returns the process exit status.
pub fn main(cli: Cli) -> i32 {
    let Cli { client, command } = cli;
    match command {
        Command::Serve(args) => return serve_command(client, args),
        Command::Python(PythonCommand::List(after)) => return python_list(client.merge(after)),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            // Into a buffer first: clap_complete panics on a write error (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "wsp", &mut script);
            return match commands::write_stdout(&script) {
                Ok(()) => status::OK,
                Err(error) => report(&error, false),
            };
        }
        _ => {}
    }
    match Action::from_command(command) {
        Ok((action, after)) => run_client(client.merge(after), action),
        Err(error) => report(&error, client.json),
    }
}

/// `wsp python list`: the interpreters a spawned server would find, found here; with
/// `--connect`, those the server lists.
pub fn python_list(args: ClientArgs) -> i32 {
    if args.connect.is_some() {
        return run_client(args, Action::PythonList);
    }
    let local = match pythons::Interpreters::of(&args.server) {
        Ok(pythons::Interpreters::Here(local)) => local,
        Ok(pythons::Interpreters::Elsewhere(why)) => {
            let usage = format!("`wsp python list` shows this machine's interpreters, but {why}");
            return report(&CliError::Usage(usage), args.json);
        }
        Err(error) => return report(&error, args.json),
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(error) => return report(&error, args.json),
    };
    let found = runtime.block_on(pythons::find(&local));
    match commands::print_pythons(&found, args.json) {
        Ok(code) => code,
        Err(error) => report(&error, args.json),
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
    match serve.into_config_with_file(before.server) {
        Ok(config) => crate::serve::run_reference_server(config),
        Err(error) => {
            eprintln!("wsp: cannot start: the config file {error}");
            status::FAILURE
        }
    }
}

/// Spawns the server (or connects to a running one, `--connect`), runs one client action in
/// a session with it, ends the session.
pub fn run_client(args: ClientArgs, action: Action) -> i32 {
    if let Some(address) = args.connect.clone() {
        return run_connected(&args, address, action);
    }
    // The server spawned here admits this directory: a command runs where the user is.
    let action = match action {
        Action::Exec(mut exec) if exec.cwd.is_none() && args.server_cmd.is_none() => {
            exec.cwd = std::env::current_dir()
                .ok()
                .map(|here| here.display().to_string());
            Action::Exec(exec)
        }
        other => other,
    };
    let server = match ServerCommand::from_args(&args) {
        Ok(server) => server,
        Err(error) => return report(&error.into(), args.json),
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(error) => return report(&error, args.json),
    };
    let verb = action.verb();
    runtime.block_on(async {
        // The server spawned here finds the interpreters found here.
        let mut action = action;
        if let Action::Create {
            python: python @ None,
            ..
        } = &mut action
        {
            match pythons::default_version(&args.server).await {
                Ok(version) => *python = Some(version),
                Err(error) => return report(&error, args.json),
            }
        }
        let (mut client, log) = match server.spawn(args.verbose) {
            Ok(spawned) => spawned,
            Err(error) => return report(&error.into(), args.json),
        };
        let outcome = session(&mut client, action, args.json).await;
        let finished = client.finish().await;
        let (code, transport_failed) = match &outcome {
            Ok(code) => (*code, false),
            Err(error) => (
                report_during(error, args.json, verb),
                matches!(error, CliError::Transport(_)),
            ),
        };
        // A transport error already said how the server ended.
        let server_failed = match finished {
            Ok(exit) if exit.success() => false,
            Ok(_) if transport_failed => true,
            Ok(exit) => {
                eprintln!("wsp: the server ended with {}", describe_status(exit));
                true
            }
            Err(error) => {
                eprintln!("wsp: could not wait for the server: {error}");
                true
            }
        };
        // An error answer is said once, by the client; the log is for a server that failed.
        if server_failed || transport_failed {
            log.show();
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
    let verb = action.verb();
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
                converse(Client::new(reader, writer, ()), action, args.json, verb).await
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
                    Ok(client) => converse(client, action, args.json, verb).await,
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
async fn converse<R, W>(
    mut client: Client<R, W, ()>,
    action: Action,
    json: bool,
    verb: Option<&str>,
) -> i32
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    let outcome = session(&mut client, action, json).await;
    let _ = client.finish().await;
    match outcome {
        Ok(code) => code,
        Err(error) => report_during(&error, json, verb),
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
    let initialized = client
        .initialize("wsp-cli")
        .await?
        .outcome
        .map_err(CliError::Rpc)?;
    let served = commands::Served::from_initialize(initialized);
    // Set already unless the server is elsewhere: then it says which interpreters it has.
    let mut action = action;
    if let Action::Create {
        python: python @ None,
        ..
    } = &mut action
    {
        *python = Some(pythons::server_default(client, &served).await?);
    }
    commands::perform(client, action, &served, json).await
}

/// Prints an error to stderr and returns the exit status it calls for.
pub fn report(error: &CliError, json: bool) -> i32 {
    report_during(error, json, None)
}

/// [`report`] for the command `verb` (`install`, ...), which a failure's text names.
pub fn report_during(error: &CliError, json: bool, verb: Option<&str>) -> i32 {
    let (text, code) = match error {
        CliError::Rpc(rpc) if json => (output::rpc_error_json(rpc), status::RPC_ERROR),
        CliError::Rpc(rpc) => (output::rpc_error(rpc, verb), status::RPC_ERROR),
        other => (format!("wsp: {}\n", chain_message(other)), status::FAILURE),
    };
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
    code
}
