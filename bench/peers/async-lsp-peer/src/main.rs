//! A minimal async-lsp 0.2 server for the peer benchmark.
//!
//! It answers `initialize` and `shutdown`, accepts `initialized` and `exit`, and leaves every
//! other request to the router's default (`-32601`). The stack is the one async-lsp's own
//! examples use: tracing, lifecycle, catch-unwind and concurrency layers over a `Router`, driven
//! by `MainLoop::run_buffered` on non-blocking stdin/stdout.

use std::ops::ControlFlow;

use async_lsp::concurrency::ConcurrencyLayer;
use async_lsp::panic::CatchUnwindLayer;
use async_lsp::router::Router;
use async_lsp::server::LifecycleLayer;
use async_lsp::tracing::TracingLayer;
use async_lsp::MainLoop;
use lsp_types::{notification, request, InitializeResult, ServerCapabilities, ServerInfo};
use tower::ServiceBuilder;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (main_loop, _client) = MainLoop::new_server(|_client| {
        let mut router = Router::new(());
        router
            .request::<request::Initialize, _>(|_, _| async move {
                Ok(InitializeResult {
                    capabilities: ServerCapabilities::default(),
                    server_info: Some(ServerInfo {
                        name: "async-lsp-peer".into(),
                        version: None,
                    }),
                })
            })
            .request::<request::Shutdown, _>(|_, _| async move { Ok(()) })
            .notification::<notification::Initialized>(|_, _| ControlFlow::Continue(()))
            .notification::<notification::Exit>(|_, _| ControlFlow::Continue(()));
        ServiceBuilder::new()
            .layer(TracingLayer::default())
            .layer(LifecycleLayer::default())
            .layer(CatchUnwindLayer::default())
            .layer(ConcurrencyLayer::default())
            .service(router)
    });

    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .init();

    let stdin = match async_lsp::stdio::PipeStdin::lock_tokio() {
        Ok(stdin) => stdin,
        Err(err) => {
            eprintln!("async-lsp-peer: stdin is not a pipe: {err}");
            std::process::exit(2);
        }
    };
    let stdout = match async_lsp::stdio::PipeStdout::lock_tokio() {
        Ok(stdout) => stdout,
        Err(err) => {
            eprintln!("async-lsp-peer: stdout is not a pipe: {err}");
            std::process::exit(2);
        }
    };
    if let Err(err) = main_loop.run_buffered(stdin, stdout).await {
        eprintln!("async-lsp-peer: {err}");
        std::process::exit(1);
    }
}
