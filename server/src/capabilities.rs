//! What `initialize` answers: the framework's own facts, the method groups' and the tool
//! author's, and the `initialize` and `shutdown` methods that go with them.
//!
//! The framework knows the server's name, version and methods (and the protocol's version,
//! the platform and the schema fingerprint). WSP also requires `wsp_home`, `session_durability`,
//! `sandbox_availability`, `backend` and `features`; until a [`MethodGroup`] or the tool
//! author says otherwise they have the values of a server that runs no commands. Facts are set
//! in that order: the framework's, then each group's, then the tool author's
//! ([`ServerBuilder::fact`](crate::ServerBuilder::fact)), so nothing the tool author sets is
//! overwritten.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::SerializeMap;
use serde::Serialize;
use serde_json::Value;
use wsp_protocol::results::{SchemaInfo, ServerInfo};
use wsp_protocol::{methods, Capabilities, InitializeParams, NoParams, PROTOCOL_VERSION};

use wsp_middleware::router::Router;
use wsp_middleware::{handler_fn, Context};
use wsp_protocol::results::TransportName;

/// The facts `initialize` answers, in order: the keys WSP defines keep WSP's order, any other
/// key follows in the order it was first set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// `None`: a key whose place is kept but that is not sent.
    entries: Vec<(String, Option<Value>)>,
}

impl Facts {
    /// Sets `key` to `value` (in the key's place if it has one, else last). A value that does
    /// not serialize to JSON is sent as `null`.
    pub fn set(&mut self, key: &str, value: impl Serialize) -> &mut Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => *slot = Some(value),
            None => self.entries.push((key.to_owned(), Some(value))),
        }
        self
    }

    /// Stops sending `key` (its place is kept for a later [`Facts::set`]).
    pub fn remove(&mut self, key: &str) -> &mut Self {
        if let Some((_, slot)) = self.entries.iter_mut().find(|(k, _)| k == key) {
            *slot = None;
        }
        self
    }

    /// The value `key` is sent with, if it is sent.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, value)| value.as_ref())
    }

    /// Adds `features` to the `features` list (sent sorted, each once).
    pub fn add_features<S: Into<String>>(
        &mut self,
        features: impl IntoIterator<Item = S>,
    ) -> &mut Self {
        let mut list = self.string_list("features");
        list.extend(features.into_iter().map(Into::into));
        list.sort();
        list.dedup();
        self.set("features", list)
    }

    /// The bound request methods, as `methods` lists them.
    pub fn methods(&self) -> Vec<String> {
        self.string_list("methods")
    }

    fn string_list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Applies `other` on top of these facts.
    fn extend(&mut self, other: &Facts) {
        for (key, value) in &other.entries {
            match value {
                Some(value) => self.set(key, value),
                None => self.remove(key),
            };
        }
    }
}

impl Serialize for Facts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let sent = self
            .entries
            .iter()
            .filter_map(|(k, v)| Some((k, v.as_ref()?)));
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in sent {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Described by WSP's `initialize` result: the schema (and so the fingerprint) is the
/// protocol's, whatever facts are added.
impl JsonSchema for Facts {
    fn schema_name() -> Cow<'static, str> {
        Capabilities::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        Capabilities::schema_id()
    }

    fn inline_schema() -> bool {
        Capabilities::inline_schema()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Capabilities::json_schema(generator)
    }
}

/// A group of methods bound together, which knows what it adds to `initialize` and what is
/// left to end once the server stops (the environment methods are one).
pub trait MethodGroup: Send + Sync + 'static {
    /// Binds the group's methods, once; every connection's session serves them (a handler
    /// reaches its own connection through its [`Context`](wsp_middleware::Context)).
    fn bind(&self, router: Router) -> Router;

    /// Sets the group's facts, `features` among them (see [`Facts::add_features`]), computed
    /// from what [`MethodGroup::bind`] binds.
    fn facts(&self, facts: &mut Facts) {
        let _ = facts;
    }

    /// Starts what the group runs beside its handlers (a watcher, say), once the server starts
    /// serving, inside its runtime (called by [`Server::run_stdio`](crate::Server::run_stdio)
    /// and [`Server::serve_listeners`](crate::Server::serve_listeners)).
    fn start(&self) {}

    /// Ends, inside the runtime, whatever the group keeps or left running beside its requests
    /// (environments made ahead, commands a drain gave up on) once the server has stopped
    /// serving, after the drain (called by [`Server::run_stdio`](crate::Server::run_stdio) and
    /// [`Server::run_listeners`](crate::Server::run_listeners); a server run another way calls
    /// [`Server::shutdown`](crate::Server::shutdown) itself). It must not wait for long.
    fn shutdown(&self) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// The framework's facts: its own, and WSP's required ones as a server that runs no commands
/// has them.
fn framework_facts(info: &ServerInfo, methods: Vec<String>, fingerprint: String) -> Facts {
    let mut facts = Facts::default();
    facts
        .set("methods", methods)
        .set("protocol_version", PROTOCOL_VERSION)
        .set("server_info", info)
        .set("platform_family", std::env::consts::FAMILY)
        .set("platform_os", std::env::consts::OS)
        .set("wsp_home", "")
        .set("session_durability", "ephemeral")
        .set("sandbox_availability", "unavailable")
        .set("sandbox_unavailable_reason", "this server runs no commands")
        .set("process_limit", ())
        .remove("process_limit")
        .set(
            "schema",
            SchemaInfo {
                version: PROTOCOL_VERSION.to_owned(),
                fingerprint,
            },
        )
        .set("backend", "none")
        .set("features", Vec::<String>::new());
    facts
}

/// Binds `initialize` (answering the facts) and `shutdown` (answering `null`) on `router`,
/// unless the tool author or a group bound them already. Returns the router and the facts.
pub(crate) fn bind_lifecycle_methods(
    router: Router,
    info: &ServerInfo,
    groups: &[std::sync::Arc<dyn MethodGroup>],
    own: &Facts,
) -> (Router, Facts) {
    let listed = router.clone();
    let bound = listed.methods();
    let is_free = |method: &str| !bound.iter().any(|m| m == method);
    let (bind_initialize, bind_shutdown) =
        (is_free(methods::INITIALIZE), is_free(methods::SHUTDOWN));
    // Bound only to list the methods and compute the schema document: the same types as the
    // real handlers below, so the fingerprint describes what runs.
    let placeholder = |_: InitializeParams| async {
        Err::<Facts, _>(wsp_protocol::error::internal_error("not bound yet"))
    };
    let mut listed = listed;
    if bind_initialize {
        listed = listed.route(methods::INITIALIZE, tower::service_fn(placeholder));
    }
    if bind_shutdown {
        listed = listed.route(methods::SHUTDOWN, tower::service_fn(shutdown));
    }
    let mut facts = framework_facts(info, listed.methods(), listed.fingerprint());
    for group in groups {
        group.facts(&mut facts);
    }
    facts.extend(own);
    let mut router = router;
    if bind_initialize {
        let answer = facts.clone();
        let initialize = move |_: InitializeParams, cx: Context| {
            let mut answer = answer.clone();
            if let Some(transport) = cx.facts().get::<TransportName>() {
                answer.set("transport", transport);
            }
            async move { Ok::<_, wsp_protocol::ErrorObjectOwned>(answer) }
        };
        router = router.route(methods::INITIALIZE, handler_fn(initialize));
    }
    if bind_shutdown {
        router = router.route(methods::SHUTDOWN, tower::service_fn(shutdown));
    }
    (router, facts)
}

async fn shutdown(_: NoParams) -> Result<(), wsp_protocol::ErrorObjectOwned> {
    Ok(())
}
