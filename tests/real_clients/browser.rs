//! Headless Chromium (Debian's `chromium`, driven by playwright-core) opens a page served from
//! another origin (Python's `http.server` on another loopback port), whose script opens
//! `new WebSocket("ws://127.0.0.1:PORT/", ["wsp", "bearer." + token])`: without
//! `--allow-origin` the server refuses it with 403 and the page sees the error and the close;
//! with `--allow-origin <the page's origin>` it completes initialize, environment/list,
//! shutdown and exit. The script `tests/clients/node/browser_session.js` bounds Chromium's
//! work in time and checks what the page saw.

use std::path::PathBuf;
use std::process::{Output, Stdio};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::sockets::{run_node, Listening};
use crate::{clients_dir, installed, node_packages_installed, CLIENT_DEADLINE};

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
struct PageServer {
    _child: Child,
    /// `http://127.0.0.1:PORT`.
    origin: String,
}

impl PageServer {
    async fn start() -> PageServer {
        let mut child = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .arg("--directory")
            .arg(clients_dir().join("browser"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 -m http.server starts");
        let stdout = child.stdout.take().expect("stdout");
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let line =
            tokio::time::timeout(CLIENT_DEADLINE, BufReader::new(stdout).lines().next_line())
                .await
                .expect("http.server says where it serves in time")
                .expect("stdout")
                .expect("http.server says where it serves");
        let port: u16 = line
            .split_whitespace()
            .skip_while(|word| *word != "port")
            .nth(1)
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        PageServer {
            _child: child,
            origin: format!("http://127.0.0.1:{port}"),
        }
    }
}

/// Runs the page's session in Chromium; `expected` is `refused` or `served`.
async fn browser_session(page: &PageServer, server: &Listening, expected: &str) -> Output {
    let page_url = format!("{}/", page.origin);
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
    let page = PageServer::start().await;
    let server = Listening::websocket(&[]).await;
    let output = browser_session(&page, &server, "refused").await;
    server.finish(&output, "browser_session.js refused").await;
}

#[tokio::test]
async fn chromium_on_an_allowed_origin_completes_a_session() {
    if !chromium_installed() {
        return;
    }
    let page = PageServer::start().await;
    let server = Listening::websocket(&["--allow-origin", &page.origin]).await;
    let output = browser_session(&page, &server, "served").await;
    server.finish(&output, "browser_session.js served").await;
}
