//! A minimal tower-lsp 0.20 server for the peer benchmark.
//!
//! It implements only the two required `LanguageServer` methods; tower-lsp answers every other
//! request with `-32601` and handles the lifecycle (`initialized`, `shutdown`, `exit`) itself.
//! Served over `tokio::io::stdin()`/`stdout()` as tower-lsp's documentation shows.

use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::{InitializeParams, InitializeResult, ServerCapabilities, ServerInfo};
use tower_lsp::{Client, LanguageServer, LspService, Server};

struct Peer {
    _client: Client,
}

#[tower_lsp::async_trait]
impl LanguageServer for Peer {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: ServerCapabilities::default(),
            server_info: Some(ServerInfo {
                name: "tower-lsp-peer".into(),
                version: None,
            }),
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }
}

#[tokio::main]
async fn main() {
    let (service, socket) = LspService::new(|client| Peer { _client: client });
    Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}
