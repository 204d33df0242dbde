//! `environment/create` with `reuse`: the content key, and the answer naming an environment
//! that already has that content.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use wsp_backend::{BoxBackend, ResolveRequest, ResolvedInterpreter};
use wsp_protocol::{CreateParams, EnvironmentDetails};

use super::failure::{backend_error, store_error};
use super::handlers::{details, Answer};
use super::Environments;
use crate::store::{ReuseTurn, StoreError};

/// The key of `extra` that says whether an answer of `environment/create` was reused.
pub(crate) const REUSED: &str = "reused";

/// What a create with `reuse` found: an environment to answer with, or the turn to build one
/// on the interpreter its key names (when the backend named one).
pub(crate) enum Reuse {
    Found(Box<EnvironmentDetails>),
    Build {
        key: String,
        turn: ReuseTurn,
        interpreter: Option<ResolvedInterpreter>,
    },
}

impl Environments {
    /// For a create with `reuse`: waits for the turn of its content key (identical creates in
    /// any process on this store take turns), then answers with the environment made with that
    /// key if one is live, else keeps the turn for building it.
    pub(crate) async fn reuse(
        &self,
        backend: &BoxBackend,
        backend_name: &str,
        params: &CreateParams,
    ) -> Answer<Reuse> {
        let (key, interpreter) = self.content_key(backend, backend_name, params).await?;
        let store = &self.inner.store;
        let turn = store.reuse_turn(&key).await.map_err(store_error)?;
        let Some(record) = store.reusable(&key).await.map_err(store_error)? else {
            return Ok(Reuse::Build {
                key,
                turn,
                interpreter,
            });
        };
        let listing = store.listing(None).await.map_err(store_error)?;
        if listing
            .iter()
            .any(|other| other.name == params.name && other.id != record.id)
        {
            let name = params.name.clone();
            return Err(store_error(StoreError::NameConflict { name }));
        }
        // Being deleted: it is not there to reuse.
        let guard = match store.acquire_use(&record.id).await {
            Ok(guard) => guard,
            Err(StoreError::NotFound { .. }) => {
                return Ok(Reuse::Build {
                    key,
                    turn,
                    interpreter,
                })
            }
            Err(e) => return Err(store_error(e)),
        };
        let record = guard.record().clone();
        let description = self.describe(backend, &record.root).await?;
        let mut details = details(record, description);
        details.extra.insert(REUSED.into(), Value::Bool(true));
        Ok(Reuse::Found(Box::new(details)))
    }

    /// The SHA-256, in hex, of what the environment `params` asks for would hold: the backend,
    /// the interpreter it would be built on (its version and path; the version as asked when
    /// the backend only knows while provisioning), the sorted packages (and the lock, when it is
    /// created from one) and where they come from (the server's defaults applied); with the
    /// interpreter it names.
    async fn content_key(
        &self,
        backend: &BoxBackend,
        backend_name: &str,
        params: &CreateParams,
    ) -> Answer<(String, Option<ResolvedInterpreter>)> {
        let resolved = backend
            .call(ResolveRequest {
                python_version: params.version_request,
            })
            .await
            .map_err(backend_error)?;
        let interpreter = match &resolved {
            Some(found) => json!({
                "version": found.full_version.to_string(),
                "path": found.path.to_string_lossy(),
            }),
            None => json!({ "requested": params.python_version }),
        };
        let mut packages = params.packages.clone();
        packages.sort();
        let source = self.source(&params.source);
        let mut content = json!({
            "backend": backend_name,
            "interpreter": interpreter,
            "packages": packages,
            "find_links": source.find_links,
            "index_url": source.index_url,
            "no_index": source.no_index,
        });
        if let (Some(lock), Value::Object(content)) = (&params.lock, &mut content) {
            content.insert("lock".into(), json!(lock));
        }
        let digest = Sha256::digest(content.to_string().as_bytes());
        Ok((format!("{digest:x}"), resolved))
    }
}
