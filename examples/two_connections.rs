//! One server value serving two connections at once: stdin/stdout and a Unix socket.
//!
//! `cargo run --example two_connections -- STATE_DIR SOCKET_PATH` serves the environment
//! methods (venv backend) on stdio and on a Unix socket bound at `SOCKET_PATH` (bound before
//! stdio is read, so once stdio answers, the socket takes connections). Each connection is a
//! session of its own: its own `initialize`, `shutdown` and drain. The environments are shared:
//! one created over the socket is listed over stdio. The example ends with the stdio session;
//! the listener, dropped then, removes its socket file. `SOCKET_PATH`'s directory must be
//! writable by its owner only (see `UnixListener::bind`).

use std::path::PathBuf;

use wsp_environments::store::Store;
use wsp_environments::Environments;
use wsp_interpreters::{Inventory, InventoryConfig};
use wsp_server::transport::unix::UnixListener;
use wsp_server::ServerBuilder;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let (Some(state_dir), Some(socket)) = (args.next(), args.next()) else {
        eprintln!("usage: two_connections STATE_DIR SOCKET_PATH");
        std::process::exit(2);
    };
    let store = Store::open(&state_dir).unwrap_or_else(|e| fail(&format!("store: {e}")));
    let backend = wsp_backend_venv::VenvBackend::new(
        Inventory::new(InventoryConfig::from_env()),
        Default::default(),
    );
    let server = ServerBuilder::new()
        .group(Environments::new(store, "venv", backend))
        .build();
    let listener = UnixListener::bind(&socket).unwrap_or_else(|e| fail(&format!("bind: {e}")));
    let status = tokio::select! {
        status = server.clone().serve_stdio() => status,
        failed = server.clone().serve_listener(listener) => {
            eprintln!("two_connections: accepting stopped: {failed:?}");
            1
        }
    };
    server.shutdown().await;
    std::process::exit(status);
}

fn fail(message: &str) -> ! {
    eprintln!("two_connections: {message}");
    std::process::exit(2);
}
