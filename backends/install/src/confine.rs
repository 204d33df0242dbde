//! The sandbox an installer runs in when its environment may hold planted files.
//!
//! An environment that has run sandboxed code may have had its `bin/python`, its
//! `site-packages` (a `.pth` file runs at every interpreter start) or its directories (a
//! symlink to elsewhere) replaced by that code, and installers run the environment's
//! interpreter and write where its layout points. So the installer itself runs in the
//! sandbox: it writes only in the environment's root and a private `TMPDIR`, reads the rest of
//! the system but the state directory, and reaches over TCP only the ports of the index, the
//! find-links URLs and the proxies it is configured with. It uses no cache shared with other
//! environments (a cache it may write could be poisoned for them): uv gets `--no-cache`, pip
//! `--no-cache-dir`. Builds of sdists and local projects happen inside the same sandbox.

use std::path::PathBuf;

use url::Url;

use super::InstallSource;
use wsp_exec::{SandboxNetwork, SandboxPolicy};

/// The port of the default index (PyPI, over HTTPS).
const DEFAULT_INDEX_PORT: u16 = 443;

/// Variables of the server's environment that may name an index or a proxy for the
/// installer (pip runs `--isolated` and reads none of its own).
const URL_VARIABLES: &[&str] = &[
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_DEFAULT_INDEX",
    "UV_FIND_LINKS",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The sandbox of an install into the environment at `root` from `source`, hiding `hidden`.
pub fn install_sandbox(
    root: PathBuf,
    hidden: Vec<PathBuf>,
    source: &InstallSource,
) -> SandboxPolicy {
    SandboxPolicy {
        network: SandboxNetwork::TcpConnect(ports(source, |name| std::env::var(name).ok())),
        ..SandboxPolicy::offline(root, hidden)
    }
}

/// The sandbox of an uninstall: no network at all.
pub fn uninstall_sandbox(root: PathBuf, hidden: Vec<PathBuf>) -> SandboxPolicy {
    SandboxPolicy::offline(root, hidden)
}

/// The TCP ports an install from `source` needs, sorted, with `variable` reading the server's
/// environment.
fn ports(source: &InstallSource, variable: impl Fn(&str) -> Option<String>) -> Vec<u16> {
    let mut ports = Vec::new();
    match &source.index_url {
        Some(index) => ports.extend(port_of(index)),
        None if !source.no_index => ports.push(DEFAULT_INDEX_PORT),
        None => {}
    }
    ports.extend(source.find_links.iter().filter_map(|link| port_of(link)));
    for name in URL_VARIABLES {
        if let Some(value) = variable(name) {
            ports.extend(value.split([' ', ',']).filter_map(port_of));
        }
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The port a URL connects to; none for a path or a `file:` URL.
fn port_of(text: &str) -> Option<u16> {
    let url = Url::parse(text.trim()).ok()?;
    if url.scheme() == "file" {
        return None;
    }
    url.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_find_links_and_proxies_give_the_ports() {
        let source = InstallSource {
            find_links: vec![
                "/wheels".into(),
                "file:///more".into(),
                "http://127.0.0.1:8080/links/".into(),
            ],
            index_url: Some("https://mirror.example:8443/simple".into()),
            no_index: false,
        };
        let env = |name: &str| (name == "HTTPS_PROXY").then(|| "http://proxy:3128".to_owned());
        assert_eq!(ports(&source, env), [3128, 8080, 8443]);
        assert_eq!(ports(&InstallSource::default(), |_| None), [443]);
        let offline = InstallSource {
            find_links: vec!["/wheels".into()],
            index_url: None,
            no_index: true,
        };
        assert!(ports(&offline, |_| None).is_empty());
    }
}
