//! A minimal jsonrpsee 0.26 WebSocket server for the transports benchmark.
//!
//! It answers `initialize` and `shutdown` and leaves every other request to jsonrpsee's
//! default (`-32601`), so `bench/nonexistent` costs what it costs the stdio peers. Notifications
//! (`exit`) are ignored. It serves WebSockets only, with jsonrpsee's defaults but a connection
//! limit of 2000, until SIGTERM or SIGINT.
//!
//! `jsonrpsee-ws-peer [--listen HOST:PORT] [--multi-thread]`: port 0 (the default) picks a free
//! one; the bound address goes to stderr as `listening on ws://HOST:PORT`, as `wsp serve
//! --listen` says it. The runtime is current-thread, as `wsp serve`'s, unless `--multi-thread`.

use std::process::ExitCode;

use jsonrpsee::server::{RpcModule, Server, ServerConfig};
use serde_json::json;

fn main() -> ExitCode {
    let mut listen = "127.0.0.1:0".to_string();
    let mut multi_thread = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.len()) {
            ("--listen", 1..) => listen = args.next().unwrap_or_default(),
            ("--multi-thread", _) => multi_thread = true,
            _ => {
                eprintln!("usage: jsonrpsee-ws-peer [--listen HOST:PORT] [--multi-thread]");
                return ExitCode::from(2);
            }
        }
    }
    let runtime = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    }
    .enable_all()
    .build();
    let result = match runtime {
        Ok(runtime) => runtime.block_on(serve(&listen)),
        Err(err) => Err(err.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("jsonrpsee-ws-peer: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(listen: &str) -> Result<(), String> {
    let config = ServerConfig::builder()
        .ws_only()
        .max_connections(2000)
        .build();
    let server = Server::builder()
        .set_config(config)
        .build(listen)
        .await
        .map_err(|err| format!("cannot listen on {listen}: {err}"))?;
    let address = server.local_addr().map_err(|err| err.to_string())?;
    let mut module = RpcModule::new(());
    module
        .register_method("initialize", |_, _, _| {
            json!({"server_name": "jsonrpsee-ws-peer", "server_protocol_version": "0.1.0"})
        })
        .map_err(|err| err.to_string())?;
    module
        .register_method("shutdown", |_, _, _| serde_json::Value::Null)
        .map_err(|err| err.to_string())?;
    let handle = server.start(module);
    eprintln!("listening on ws://{address}");
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|err| err.to_string())?;
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    let _ = handle.stop();
    handle.stopped().await;
    Ok(())
}
