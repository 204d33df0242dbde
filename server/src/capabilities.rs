//! The `initialize` and `shutdown` methods, and the capabilities `initialize` reports.

use wsp_protocol::results::{SchemaInfo, ServerInfo};
use wsp_protocol::{methods, Capabilities, InitializeParams, NoParams, PROTOCOL_VERSION};

use wsp_middleware::router::Router;

/// Connect-time facts a server reports besides its methods.
#[derive(Debug, Clone)]
pub struct ServerFacts {
    /// The server's name.
    pub name: String,
    /// The server's version.
    pub version: String,
    /// The state directory.
    pub wsp_home: String,
    /// `durable` or `ephemeral`.
    pub session_durability: String,
    /// The environment backend's name.
    pub backend: String,
    /// The extensions beyond WSP 0.1.0 the server supports (`initialize` lists them sorted,
    /// each once).
    pub features: Vec<String>,
    /// Why `sandbox: true` cannot be enforced here, or `None` where it can (`initialize`'s
    /// `sandbox_availability`; the reference server probes the kernel once at startup).
    pub sandbox_unavailable_reason: Option<String>,
    /// How `limits.processes` is enforced (`cgroup`, `rlimit` or `unavailable`;
    /// `initialize`'s `process_limit`), or `None` for a server that runs no commands.
    pub process_limit: Option<String>,
}

impl Default for ServerFacts {
    fn default() -> Self {
        ServerFacts {
            name: "wsp".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            wsp_home: String::new(),
            session_durability: "ephemeral".to_owned(),
            backend: "none".to_owned(),
            features: Vec::new(),
            sandbox_unavailable_reason: Some("this server runs no commands".to_owned()),
            process_limit: None,
        }
    }
}

/// Binds `initialize` (answering the capabilities) and `shutdown` (answering `null`).
pub(crate) fn bind_lifecycle_methods(
    router: Router,
    facts: &ServerFacts,
) -> (Router, Capabilities) {
    // Bound only to list the methods and compute the schema document: the same types as the
    // real handlers below, so the fingerprint describes what runs.
    let placeholder = |_: InitializeParams| async {
        Err::<Capabilities, _>(wsp_protocol::error::internal_error("not bound yet"))
    };
    let shutdown = |_: NoParams| async { Ok::<(), wsp_protocol::ErrorObjectOwned>(()) };
    let listed = router
        .clone()
        .route(methods::INITIALIZE, tower::service_fn(placeholder))
        .route(methods::SHUTDOWN, tower::service_fn(shutdown));
    let capabilities = Capabilities {
        methods: listed.methods(),
        protocol_version: PROTOCOL_VERSION.to_owned(),
        server_info: ServerInfo {
            name: facts.name.clone(),
            version: facts.version.clone(),
        },
        platform_family: std::env::consts::FAMILY.to_owned(),
        platform_os: std::env::consts::OS.to_owned(),
        wsp_home: facts.wsp_home.clone(),
        session_durability: facts.session_durability.clone(),
        sandbox_availability: match facts.sandbox_unavailable_reason {
            None => "available",
            Some(_) => "unavailable",
        }
        .to_owned(),
        sandbox_unavailable_reason: facts.sandbox_unavailable_reason.clone(),
        process_limit: facts.process_limit.clone(),
        schema: SchemaInfo {
            version: PROTOCOL_VERSION.to_owned(),
            fingerprint: listed.fingerprint(),
        },
        backend: facts.backend.clone(),
        features: sorted_once(&facts.features),
    };
    let answer = capabilities.clone();
    let initialize = move |_: InitializeParams| {
        let answer = answer.clone();
        async move { Ok::<_, wsp_protocol::ErrorObjectOwned>(answer) }
    };
    let router = router
        .route(methods::INITIALIZE, tower::service_fn(initialize))
        .route(methods::SHUTDOWN, tower::service_fn(shutdown));
    (router, capabilities)
}

/// `items` sorted ascending, each once.
fn sorted_once(items: &[String]) -> Vec<String> {
    let mut items = items.to_vec();
    items.sort();
    items.dedup();
    items
}
