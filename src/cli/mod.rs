//! The `wsp` command line: `wsp serve`, and a client that spawns a server and talks to it.
//!
//! A client command spawns `<this program> serve` (or `--server-cmd`), sends `initialize` as
//! `wsp-cli`, then the command's requests, then closes the server's stdin — the EOF drain is how
//! the session ends; no `shutdown`/`exit` is sent — and waits for the server to exit.
//!
//! Exit statuses ([`status`]): 0 success; 1 the server answered with a JSON-RPC error (printed to
//! stderr as `error CODE: MESSAGE` and the data pretty-printed; with `--json`, the error object as
//! one JSON line); 2 a usage or transport error (bad arguments, a server that won't start, closes
//! early or sends an undecodable frame). `wsp exec` exits with the command's own status, a command
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

use std::io::Write;
use wsp_protocol::error_chain::chain_message;

use args::{Cli, ClientArgs, Command};
use commands::{Action, CliError};
use transport::{ServerCommand, TransportError};
use wsp_server::client::{describe_status, ProcessClient};

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
    if before.json || before.server_cmd.is_some() {
        eprintln!(
            "wsp: --json and --server-cmd are client options; `wsp serve` does not take them"
        );
        return status::FAILURE;
    }
    crate::serve::run_reference_server(serve.into_config(before.server))
}

/// Spawns the server, runs one client action in a session with it, ends the session.
pub fn run_client(args: ClientArgs, action: Action) -> i32 {
    let server = match ServerCommand::from_args(&args) {
        Ok(server) => server,
        Err(error) => return report(&error.into(), args.json),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return report(&TransportError::Runtime(error).into(), args.json),
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

async fn session(client: &mut ProcessClient, action: Action, json: bool) -> Result<i32, CliError> {
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
