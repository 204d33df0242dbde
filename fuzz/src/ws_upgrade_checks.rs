//! The WebSocket upgrade's checks on arbitrary bytes: the bytes are parsed as the server parses
//! an upgrade request (tungstenite's own parser), and `judge_upgrade` must
//! - never panic;
//! - decide what an independent reading of the rules decides (path `/`, every `Origin` allowed,
//!   exactly one `Host` naming a served host, then the token), refusals in that order;
//! - ignore the query: the same request without it gets the same verdict, and a token put in
//!   the query never turns a refusal into an upgrade.
//!
//! The check module names tungstenite `super::tungstenite`: in the fuzz crate that is the
//! crate itself, in `tests/fuzz_corpus.rs` the one tokio-tungstenite re-exports.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::tungstenite::handshake::machine::TryParse;
use super::tungstenite::handshake::server::Request;
use super::tungstenite::http::{HeaderValue, StatusCode, Uri};
use wsp_server::transport::websocket::{judge_upgrade, Token, Verdict, WebSocketConfig};

/// The token the fuzzed server expects (the seeds and the dictionary use it).
pub const TOKEN: &str = "fuzz-token-7f3a";
/// The one `Origin` allowed.
pub const ALLOWED_ORIGIN: &str = "https://app.example";
/// The one extra `Host` allowed.
pub const ALLOWED_HOST: &str = "wsp.example";
/// The host the server listens on (not a loopback one, so that naming it matters).
pub const LISTEN_HOST: &str = "192.0.2.7";

fn config() -> WebSocketConfig {
    let token = Token::new(TOKEN).unwrap_or_else(|| unreachable!("a non-empty token"));
    let mut config = WebSocketConfig::new(LISTEN_HOST, 443, token);
    config.allowed_origins = vec![ALLOWED_ORIGIN.to_owned()];
    config.allowed_hosts = vec![ALLOWED_HOST.to_owned()];
    config
}

/// The server's verdict on `data` taken as an HTTP upgrade request; `None` when the server's
/// parser takes no request from it.
pub fn verdict(data: &[u8]) -> Option<Verdict> {
    let (_, request) = Request::try_parse(data).ok()??;
    Some(judge_upgrade(&config(), &request))
}

/// Runs the checks of the module docs on `data` taken as an HTTP upgrade request.
pub fn check(data: &[u8]) {
    let Ok(Some((_, request))) = Request::try_parse(data) else {
        return;
    };
    let config = config();
    let verdict = judge_upgrade(&config, &request);
    let expected = expected(&request);
    assert_eq!(verdict, expected, "for {request:?}");

    let path = request.uri().path().to_owned();
    if let Some(without_query) = with_target(&request, &path) {
        let again = judge_upgrade(&config, &without_query);
        assert_eq!(again, verdict, "the query mattered");
    }
    if let Verdict::Refuse { status, .. } = verdict {
        let target = format!("{path}?token={TOKEN}&access_token={TOKEN}&bearer.{TOKEN}");
        let Some(with_token_in_query) = with_target(&request, &target) else {
            return;
        };
        assert!(
            matches!(
                judge_upgrade(&config, &with_token_in_query),
                Verdict::Refuse { status: again, .. } if again == status
            ),
            "a token in the query changed a refusal"
        );
    }
}

/// `request` with another request target, its headers unchanged; `None` if `target` is not
/// one.
fn with_target(request: &Request, target: &str) -> Option<Request> {
    let mut copy = Request::new(());
    *copy.uri_mut() = target.parse::<Uri>().ok()?;
    *copy.headers_mut() = request.headers().clone();
    Some(copy)
}

/// The verdict by the rules, read independently of the server's code.
fn expected(request: &Request) -> Verdict {
    let refuse = |status, reason| Verdict::Refuse { status, reason };
    if request.uri().path() != "/" {
        return refuse(StatusCode::NOT_FOUND, "only / is served");
    }
    let headers = request.headers();
    let origins_allowed = headers
        .get_all("origin")
        .iter()
        .all(|origin| origin.as_bytes() == ALLOWED_ORIGIN.as_bytes());
    if !origins_allowed {
        return refuse(StatusCode::FORBIDDEN, "this origin is not allowed");
    }
    let hosts: Vec<&HeaderValue> = headers.get_all("host").iter().collect();
    let [host] = hosts[..] else {
        return refuse(StatusCode::BAD_REQUEST, "one Host header is required");
    };
    if !is_visible_ascii(host) {
        return refuse(StatusCode::BAD_REQUEST, "the Host header is not text");
    }
    let host = String::from_utf8_lossy(host.as_bytes()).into_owned();
    if !is_served(&name_without_port(&host).to_ascii_lowercase()) {
        return refuse(StatusCode::FORBIDDEN, "this Host is not served");
    }
    let bearer = headers.get("authorization").is_some_and(|value| {
        value
            .as_bytes()
            .strip_prefix(b"Bearer ")
            .is_some_and(|rest| is_visible_ascii(value) && trim_blanks(rest) == TOKEN.as_bytes())
    });
    let offered: Vec<String> = headers
        .get_all("sec-websocket-protocol")
        .iter()
        .filter(|value| is_visible_ascii(value))
        .flat_map(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .split(',')
                .map(|p| p.trim_matches([' ', '\t']).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let offers_wsp = offered.iter().any(|p| p == "wsp");
    let subprotocol_token = format!("bearer.{TOKEN}");
    let by_subprotocol = offers_wsp && offered.contains(&subprotocol_token);
    if !bearer && !by_subprotocol {
        return refuse(StatusCode::UNAUTHORIZED, "a valid token is required");
    }
    Verdict::Accept {
        select_wsp: offers_wsp,
    }
}

/// What `HeaderValue::to_str` accepts: tabs and printable ASCII.
fn is_visible_ascii(value: &HeaderValue) -> bool {
    value
        .as_bytes()
        .iter()
        .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b))
}

fn trim_blanks(mut bytes: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = bytes {
        bytes = rest;
    }
    bytes
}

/// A `Host` value without its port: `[v6]:port` gives `v6`, `name:port` gives `name`.
fn name_without_port(host: &str) -> &str {
    if let Some(bracketed) = host.strip_prefix('[') {
        return match bracketed.find(']') {
            Some(end) => &bracketed[..end],
            None => bracketed,
        };
    }
    match host.rfind(':') {
        Some(colon) => &host[..colon],
        None => host,
    }
}

fn is_served(name: &str) -> bool {
    let loopback = name == "localhost"
        || name
            .parse::<Ipv4Addr>()
            .is_ok_and(|ip| ip.octets()[0] == 127)
        || name
            .parse::<Ipv6Addr>()
            .is_ok_and(|ip| ip == Ipv6Addr::LOCALHOST);
    loopback || name == LISTEN_HOST || name == ALLOWED_HOST
}
