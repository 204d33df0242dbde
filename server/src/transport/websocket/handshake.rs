//! The upgrade's checks (see the [module docs](super)): path, `Origin`, `Host`, token, slot.

use std::fmt;

use subtle::ConstantTimeEq;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};

use super::{is_loopback, WebSocketConfig};
use crate::transport::ConnectionSlot;

/// The secret a client presents to connect. Never printed.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl Token {
    /// A token made of `text`, surrounding whitespace trimmed; `None` when nothing is left.
    pub fn new(text: &str) -> Option<Token> {
        let text = text.trim();
        (!text.is_empty()).then(|| Token(text.as_bytes().to_vec()))
    }

    /// Whether `given` is this token, compared in constant time.
    pub fn matches(&self, given: &[u8]) -> bool {
        self.0.ct_eq(given).into()
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(..)")
    }
}

/// What an accepted upgrade leaves behind.
pub(super) struct Admitted {
    pub(super) slot: ConnectionSlot,
}

/// What the upgrade checks decide about one request, before a connection slot is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Upgrade; `select_wsp`: answer with the subprotocol `wsp` (the client offered it).
    Accept {
        /// Whether the response selects the `wsp` subprotocol.
        select_wsp: bool,
    },
    /// No upgrade: answer with this status, giving this reason.
    Refuse {
        /// The HTTP status.
        status: StatusCode,
        /// Why, in a few words (the response's body).
        reason: &'static str,
    },
}

/// The upgrade checks of the [module docs](super) but the connection slot, in their order,
/// on one parsed request: path `/`, `Origin` (every one given must be allowed), `Host`
/// (exactly one, naming a loopback name, the listen host or an allowed host), the token.
/// Pure: it takes nothing and looks only at `request` and `config`'s rules.
pub fn judge_upgrade(config: &WebSocketConfig, request: &Request) -> Verdict {
    let refuse = |status, reason| Verdict::Refuse { status, reason };
    if request.uri().path() != "/" {
        return refuse(StatusCode::NOT_FOUND, "only / is served");
    }
    let headers = request.headers();
    let origin_allowed = |origin: &HeaderValue| {
        origin
            .to_str()
            .is_ok_and(|origin| config.allowed_origins.iter().any(|a| a == origin))
    };
    if !headers.get_all("origin").iter().all(origin_allowed) {
        return refuse(StatusCode::FORBIDDEN, "this origin is not allowed");
    }
    let mut hosts = headers.get_all("host").iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return refuse(StatusCode::BAD_REQUEST, "one Host header is required");
    };
    let Ok(host) = host.to_str() else {
        return refuse(StatusCode::BAD_REQUEST, "the Host header is not text");
    };
    let host = host_part(host);
    let host_allowed = is_loopback(host)
        || host.eq_ignore_ascii_case(&config.host)
        || config
            .allowed_hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(host));
    if !host_allowed {
        return refuse(StatusCode::FORBIDDEN, "this Host is not served");
    }
    let bearer = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|token| config.token.matches(token.trim().as_bytes()));
    let offered: Vec<&str> = headers
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    let offers_wsp = offered.contains(&"wsp");
    let by_subprotocol = offers_wsp
        && offered.iter().any(|protocol| {
            protocol
                .strip_prefix("bearer.")
                .is_some_and(|token| config.token.matches(token.as_bytes()))
        });
    if !bearer && !by_subprotocol {
        return refuse(StatusCode::UNAUTHORIZED, "a valid token is required");
    }
    Verdict::Accept {
        select_wsp: offers_wsp,
    }
}

#[allow(
    clippy::result_large_err,
    reason = "tungstenite's callback answers this type"
)]
/// Checks `request` ([`judge_upgrade`], then a free connection slot); `Ok` is the response to
/// send (with the `wsp` subprotocol selected when the client offered it) and what the
/// connection holds.
pub(super) fn check(
    config: &WebSocketConfig,
    request: &Request,
    mut response: Response,
) -> Result<(Response, Admitted), ErrorResponse> {
    let select_wsp = match judge_upgrade(config, request) {
        Verdict::Accept { select_wsp } => select_wsp,
        Verdict::Refuse { status, reason } => return Err(refusal(status, reason)),
    };
    let Some(slot) = config.slots.take() else {
        return Err(refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections",
        ));
    };
    if select_wsp {
        response
            .headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static("wsp"));
    }
    Ok((response, Admitted { slot }))
}

/// The host part of a `Host` header: without the port, IPv6 without its brackets.
fn host_part(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _port)| name)
}

fn refusal(status: StatusCode, reason: &str) -> ErrorResponse {
    tracing::info!(
        status = status.as_u16(),
        reason,
        "a WebSocket upgrade was refused"
    );
    let mut response = ErrorResponse::new(Some(reason.to_owned()));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole_and_never_print() {
        let token = Token::new("  s3cret\n").expect("a token");
        assert!(token.matches(b"s3cret"));
        assert!(!token.matches(b"s3cre"));
        assert!(!token.matches(b"s3cretx"));
        assert!(Token::new(" \n").is_none());
        assert_eq!(format!("{token:?}"), "Token(..)");
    }

    #[test]
    fn host_parts_drop_the_port() {
        assert_eq!(host_part("localhost:8080"), "localhost");
        assert_eq!(host_part("[::1]:8080"), "::1");
        assert_eq!(host_part("example.org"), "example.org");
    }
}
