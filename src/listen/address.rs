//! What `--listen` takes: `unix:PATH`, `ws://HOST:PORT` or `wss://HOST:PORT`.

use std::fmt;
use std::path::PathBuf;

/// One `--listen` address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddress {
    /// A Unix domain socket at this path.
    Unix(PathBuf),
    /// A WebSocket listener (`wss://` when `tls`).
    WebSocket {
        /// `wss://`.
        tls: bool,
        /// The host part, without brackets.
        host: String,
        /// The port (0: any free one).
        port: u16,
    },
}

impl std::str::FromStr for ListenAddress {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err("`unix:` needs a path, as in unix:/run/user/1000/wsp.sock".into());
            }
            return Ok(ListenAddress::Unix(PathBuf::from(path)));
        }
        let (tls, rest) = match (text.strip_prefix("ws://"), text.strip_prefix("wss://")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => {
                return Err(format!(
                    "`{text}` is not unix:PATH, ws://HOST:PORT or wss://HOST:PORT"
                ))
            }
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (host, port) = rest
            .rsplit_once(':')
            .ok_or_else(|| format!("`{text}` has no port"))?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if host.is_empty() {
            return Err(format!("`{text}` has no host"));
        }
        let port = port
            .parse()
            .map_err(|_| format!("`{port}` in `{text}` is not a port"))?;
        Ok(ListenAddress::WebSocket {
            tls,
            host: host.to_owned(),
            port,
        })
    }
}

impl fmt::Display for ListenAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddress::Unix(path) => write!(f, "unix:{}", path.display()),
            ListenAddress::WebSocket { tls, host, port } => {
                let scheme = if *tls { "wss" } else { "ws" };
                if host.contains(':') {
                    write!(f, "{scheme}://[{host}]:{port}")
                } else {
                    write!(f, "{scheme}://{host}:{port}")
                }
            }
        }
    }
}

/// How `wsp serve --listen` listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenConfig {
    /// Where (`--listen`, repeatable); empty: stdio.
    pub addresses: Vec<ListenAddress>,
    /// Users besides the server's own whose Unix connections are served (`--allow-uid`).
    pub allowed_uids: Vec<u32>,
    /// The most connections served at once, over all listeners (`--max-connections`).
    pub max_connections: usize,
    /// Where the WebSocket token is read from (`--token-file`); else `WSP_TOKEN`, else one is
    /// made and written to `<state-dir>/server.token`.
    pub token_file: Option<PathBuf>,
    /// `Origin`s a WebSocket upgrade may come from (`--allow-origin`).
    pub allowed_origins: Vec<String>,
    /// Hosts a WebSocket upgrade may name besides loopback and the listen host
    /// (`--allow-host`).
    pub allowed_hosts: Vec<String>,
    /// The `wss://` certificate chain and private key, PEM (`--tls-cert`, `--tls-key`).
    pub tls: Option<(PathBuf, PathBuf)>,
}

impl Default for ListenConfig {
    fn default() -> Self {
        ListenConfig {
            addresses: Vec::new(),
            allowed_uids: Vec::new(),
            max_connections: 256,
            token_file: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            tls: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_print_back() {
        for text in [
            "unix:/run/wsp.sock",
            "ws://127.0.0.1:0",
            "wss://example.org:443",
            "ws://[::1]:8080",
        ] {
            let address: ListenAddress = text.parse().expect(text);
            assert_eq!(address.to_string(), text);
        }
        for bad in [
            "unix:",
            "tcp://x:1",
            "ws://:1",
            "ws://host",
            "ws://host:99999",
        ] {
            assert!(bad.parse::<ListenAddress>().is_err(), "{bad}");
        }
    }
}
