//! How a record is spelled in `index.json`, and the rules that decide whether a stored record
//! may be used at all.
//!
//! Paths are stored relative to the store directory (`environments/<id>`,
//! `environments/<id>/bin/python`), so a store copied or moved elsewhere stays self-contained.
//! A stored root must be exactly `environments/<id>` for the record's own id; the only other
//! spelling accepted is the absolute path of that same directory, which older versions wrote
//! and which is rewritten relative on the next change to the index. Any other root (absolute
//! elsewhere, with `..`, another environment's) makes the record *refused*: it is kept in the
//! index as it is, but the store never lists it, hands it out or deletes through it.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::record::{is_environment_id, EnvironmentRecord};
use super::reuse::is_reuse_key;

/// A record as `index.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredRecord {
    pub(crate) id: String,
    name: String,
    python_version: String,
    python_full_version: String,
    backend: String,
    /// `environments/<id>`, relative to the store directory.
    root: PathBuf,
    /// Relative to the store directory when inside the root; absolute otherwise.
    interpreter_path: PathBuf,
    extra: serde_json::Map<String, serde_json::Value>,
    created_at_unix_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reuse_key: Option<String>,
}

impl StoredRecord {
    /// The stored form of a record whose root is `layout.root(record.id)`.
    pub(crate) fn from_record(layout: &Layout, record: &EnvironmentRecord) -> StoredRecord {
        let interpreter_path = match record.interpreter_path.strip_prefix(&layout.dir) {
            Ok(relative)
                if record.interpreter_path.starts_with(&record.root) && only_names(relative) =>
            {
                relative.to_path_buf()
            }
            _ => record.interpreter_path.clone(),
        };
        StoredRecord {
            id: record.id.clone(),
            name: record.name.clone(),
            python_version: record.python_version.clone(),
            python_full_version: record.python_full_version.clone(),
            backend: record.backend.clone(),
            root: Layout::relative_root(&record.id),
            interpreter_path,
            extra: record.extra.clone(),
            created_at_unix_ms: record.created_at_unix_ms,
            reuse_key: record.reuse_key.clone(),
        }
    }

    /// The record with its paths resolved beneath `layout`, or why it is refused.
    pub(crate) fn resolve(&self, layout: &Layout) -> Result<EnvironmentRecord, String> {
        if !is_environment_id(&self.id) {
            return Err(format!("its id {:?} is not an environment id", self.id));
        }
        let root = layout.root(&self.id);
        let relative_root = Layout::relative_root(&self.id);
        if !same_components(&self.root, &relative_root) && !same_components(&self.root, &root) {
            return Err(format!(
                "its root {} is not {} in this state directory",
                self.root.display(),
                relative_root.display()
            ));
        }
        let interpreter_path = if self.interpreter_path.is_absolute() {
            self.interpreter_path.clone()
        } else if only_names(&self.interpreter_path)
            && self.interpreter_path.starts_with(&relative_root)
        {
            layout.dir.join(&self.interpreter_path)
        } else {
            return Err(format!(
                "its interpreter path {} is neither absolute nor inside {}",
                self.interpreter_path.display(),
                relative_root.display()
            ));
        };
        Ok(EnvironmentRecord {
            id: self.id.clone(),
            name: self.name.clone(),
            python_version: self.python_version.clone(),
            python_full_version: self.python_full_version.clone(),
            backend: self.backend.clone(),
            root,
            interpreter_path,
            extra: self.extra.clone(),
            created_at_unix_ms: self.created_at_unix_ms,
            // A key of another shape is never matched: the environment is just not reusable.
            reuse_key: self.reuse_key.clone().filter(|key| is_reuse_key(key)),
        })
    }
}

/// Whether two paths have exactly the same components (no normalisation of `..`).
fn same_components(a: &Path, b: &Path) -> bool {
    a.components().eq(b.components())
}

/// Whether a relative path is made of plain names only (no `.`, `..` or root).
fn only_names(path: &Path) -> bool {
    path.components()
        .all(|component| matches!(component, Component::Normal(_)))
}
