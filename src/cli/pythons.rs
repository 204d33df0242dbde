//! `wsp python list` and `wsp create`'s default `--python`: the interpreters a spawned server
//! would find, found here the same way (the same locators, the interpreter paths of the command
//! line or else of the state directory's `wsp.toml`, and, when the state directory exists, its
//! cache of interpreter queries).

use std::cmp::Reverse;
use std::path::PathBuf;

use serde::Serialize;
use wsp_interpreters::{Inventory, InventoryConfig};
use wsp_protocol::PythonVersion;

use super::args::ServerOptions;
use super::commands::CliError;
use crate::config::BackendKind;
use crate::config_file::ConfigFile;

/// One interpreter found.
#[derive(Debug, Clone, Serialize)]
pub struct FoundPython {
    /// `X.Y.Z`.
    pub version: String,
    /// Where it was found: `pyenv`, `uv`, `mise`, `asdf`, `configured`, `system`, `PATH`.
    pub source: String,
    /// The executable as found.
    pub path: PathBuf,
    #[serde(skip)]
    sort_key: (Reverse<PythonVersion>, usize),
}

/// Every interpreter `local` finds, newest first; among equal versions the one the server
/// prefers first. Versions that no file tells are asked of the interpreter (once; the answer is
/// cached); one that doesn't answer is left out, as the server leaves it out.
pub async fn find(local: &Local) -> Vec<FoundPython> {
    let mut config = InventoryConfig::from_env();
    config.extra_interpreters = local.interpreters.clone();
    config.cache_file = local.cache_file.clone();
    let inventory = Inventory::new(config);
    let mut found = Vec::new();
    for (order, candidate) in inventory.candidates().await.into_iter().enumerate() {
        let version = match candidate.version {
            Some(version) => version,
            None => match inventory.query(&candidate.executable).await {
                Ok(info) => info.version,
                Err(_) => continue,
            },
        };
        found.push(FoundPython {
            version: version.to_string(),
            source: candidate.source.to_string(),
            path: candidate.executable,
            sort_key: (Reverse(version), order),
        });
    }
    found.sort_by_key(|python| python.sort_key);
    found
}

/// Where a server the CLI spawns would look for interpreters, found here: the command line's
/// interpreter paths, else those of the state directory's `wsp.toml`, and the state
/// directory's cache of interpreter queries when it exists.
pub struct Local {
    interpreters: Vec<PathBuf>,
    cache_file: Option<PathBuf>,
}

/// Whether this machine's interpreters are the server's.
pub enum Interpreters {
    /// They are: look here.
    Here(Local),
    /// They aren't, for this reason.
    Elsewhere(&'static str),
}

impl Interpreters {
    /// For the server `options` spawn (or the one `connected` to): its backend and interpreter
    /// paths given on the command line, else in the state directory's `wsp.toml`.
    pub fn of(options: &ServerOptions, connected: bool) -> Result<Interpreters, CliError> {
        if connected {
            return Ok(Interpreters::Elsewhere(
                "the interpreters of a server reached with --connect are not known here",
            ));
        }
        let state_dir = crate::serve::state_dir(options.state_dir.clone());
        let file = ConfigFile::config_in(state_dir.as_deref())
            .map_err(|error| CliError::Usage(error.to_string()))?;
        if options.backend.map_or(file.backend, BackendKind::from) == BackendKind::Conda {
            return Ok(Interpreters::Elsewhere(
                "the conda backend installs Python from its channels",
            ));
        }
        let interpreters = if options.interpreter.is_empty() {
            file.interpreters
        } else {
            options.interpreter.clone()
        };
        let cache_file = state_dir
            .filter(|dir| dir.is_dir())
            .map(|dir| dir.join("interpreters.json"));
        Ok(Interpreters::Here(Local {
            interpreters,
            cache_file,
        }))
    }
}

/// `wsp python list`'s table: VERSION, SOURCE, PATH.
pub fn table(found: &[FoundPython]) -> String {
    if found.is_empty() {
        return "no Python interpreters found\n".into();
    }
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|python| {
            vec![
                python.version.clone(),
                python.source.clone(),
                super::output::printable(&python.path.to_string_lossy()),
            ]
        })
        .collect();
    super::output::table(&["VERSION", "SOURCE", "PATH"], &rows)
}

/// The `--python` of a `wsp create` that gave none: `X.Y` of the newest interpreter found,
/// said on stderr.
pub async fn default_version(options: &ServerOptions, connected: bool) -> Result<String, CliError> {
    let local = match Interpreters::of(options, connected)? {
        Interpreters::Here(local) => local,
        Interpreters::Elsewhere(why) => {
            return Err(CliError::Usage(format!("--python X.Y is needed: {why}")));
        }
    };
    let Some(newest) = find(&local).await.into_iter().next() else {
        return Err(CliError::Usage(
            "no Python interpreter found; install one (pyenv, uv python install, ...) or pass \
             --interpreter PATH"
                .into(),
        ));
    };
    let version = newest.sort_key.0 .0;
    let chosen = format!("{}.{}", version.major, version.minor);
    eprintln!(
        "wsp: no --python given: using {chosen}, the newest found ({} at {})",
        newest.version,
        newest.path.display()
    );
    Ok(chosen)
}
