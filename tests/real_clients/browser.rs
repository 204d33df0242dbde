//! Headless Chromium (Debian's `chromium`, driven by playwright-core) opens a page served from
//! another origin (Python's `http.server` on another loopback port), whose script opens
//! `new WebSocket("ws://127.0.0.1:PORT/", ["wsp", "bearer." + token])`: without
//! `--allow-origin` the server refuses it with 403 and the page sees the error and the close;
//! with `--allow-origin <the page's origin>` it completes initialize, environment/list,
//! shutdown and exit. The script `tests/clients/node/browser_session.js` bounds Chromium's
//! work in time and checks what the page saw.

use std::path::PathBuf;
use std::process::Output;

use wsp_testing::StaticHttpServer;

use crate::sockets::{run_node, Listening};
use crate::{clients_dir, installed, node_packages_installed};

/// Where the browser is: `WSP_CHROMIUM`, else Debian's.
fn chromium() -> PathBuf {
    std::env::var_os("WSP_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

fn chromium_installed() -> bool {
    installed(chromium().is_file(), "chromium (Debian's chromium package)")
        && node_packages_installed(&["playwright-core"])
}

/// `python3 -m http.server` serving `tests/clients/browser` on a free loopback port.
async fn page_server() -> StaticHttpServer {
    StaticHttpServer::start("python3", &clients_dir().join("browser")).await
}

/// Runs the page's session in Chromium; `expected` is `refused` or `served`.
async fn browser_session(page: &StaticHttpServer, server: &Listening, expected: &str) -> Output {
    let page_url = format!("{}/", page.origin());
    let ws_url = format!("{}/", server.address);
    let token_file = server.token_file().display().to_string();
    run_node(
        "browser_session.js",
        &[&page_url, &ws_url, &token_file, expected],
    )
    .await
}

#[tokio::test]
async fn chromium_on_another_origin_is_refused_without_allow_origin() {
    if !chromium_installed() {
        return;
    }
    let page = page_server().await;
    let server = Listening::websocket(&[]).await;
    let output = browser_session(&page, &server, "refused").await;
    server.finish(&output, "browser_session.js refused").await;
}

#[tokio::test]
async fn chromium_on_an_allowed_origin_completes_a_session() {
    if !chromium_installed() {
        return;
    }
    let page = page_server().await;
    let server = Listening::websocket(&["--allow-origin", &page.origin()]).await;
    let output = browser_session(&page, &server, "served").await;
    server.finish(&output, "browser_session.js served").await;
}
