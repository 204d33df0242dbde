//! The backends one server serves environments with. Each environment is served by the backend
//! that made it (the `backend` of its record), whatever the server's default for new ones is;
//! an environment whose backend this server doesn't have is refused, its files untouched.

use std::collections::BTreeMap;

use serde_json::json;
use wsp_backend::BoxBackend;
use wsp_protocol::{error, ErrorObjectOwned, FailureReason};

/// The backends by name, the default for new environments among them.
#[derive(Clone)]
pub(crate) struct Backends {
    default: String,
    available: BTreeMap<String, BoxBackend>,
    /// Backends this server knows of but can't run, with the reason.
    unavailable: BTreeMap<String, String>,
}

impl Backends {
    pub(crate) fn new(default: String, backend: BoxBackend) -> Self {
        let available = BTreeMap::from([(default.clone(), backend)]);
        Backends {
            default,
            available,
            unavailable: BTreeMap::new(),
        }
    }

    pub(crate) fn add(&mut self, name: String, backend: BoxBackend) {
        self.unavailable.remove(&name);
        self.available.insert(name, backend);
    }

    pub(crate) fn add_unavailable(&mut self, name: String, reason: String) {
        if !self.available.contains_key(&name) {
            self.unavailable.insert(name, reason);
        }
    }

    /// The backend new environments get unless their create names another.
    pub(crate) fn default_name(&self) -> &str {
        &self.default
    }

    /// The backends this server can run, by name.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.available.keys().map(String::as_str)
    }

    /// The backend called `name`: `-31004` with reason `backend-unavailable` (and the name in
    /// `data.backend`) when this server can't run it.
    pub(crate) fn get(&self, name: &str) -> Result<&BoxBackend, ErrorObjectOwned> {
        if let Some(backend) = self.available.get(name) {
            return Ok(backend);
        }
        let detail = match self.unavailable.get(name) {
            Some(reason) => format!("the {name} backend is unavailable on this server: {reason}"),
            None => {
                let served: Vec<&str> = self.names().collect();
                format!(
                    "this server has no {name} backend (it serves {})",
                    served.join(", ")
                )
            }
        };
        Err(error::execution_failed(
            &FailureReason::BackendUnavailable,
            &detail,
            Some(json!({ "backend": name })),
        ))
    }
}
