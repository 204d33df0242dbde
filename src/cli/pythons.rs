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
use crate::config::{BackendKind, ServeConfig};
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

/// Every interpreter found, newest first; among equal versions the one the server prefers
/// first. Versions that no file tells are asked of the interpreter (once; the answer is
/// cached); one that doesn't answer is left out, as the server leaves it out.
pub async fn find(options: &ServerOptions) -> Result<Vec<FoundPython>, CliError> {
    let local = Local::of(options)?;
    let mut config = InventoryConfig::from_env();
    config.extra_interpreters = local.interpreters;
    config.cache_file = crate::serve::state_dir(options.state_dir.clone())
        .filter(|dir| dir.is_dir())
        .map(|dir| dir.join("interpreters.json"));
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
    Ok(found)
}

/// What a server the CLI spawns would be given: the command line's backend and interpreter
/// paths, else those of the state directory's `wsp.toml`.
struct Local {
    backend: BackendKind,
    interpreters: Vec<PathBuf>,
}

impl Local {
    fn of(options: &ServerOptions) -> Result<Local, CliError> {
        let file = match crate::serve::state_dir(options.state_dir.clone()) {
            Some(dir) => ConfigFile::load(&dir)
                .map_err(|error| CliError::Usage(error.to_string()))?
                .over_defaults(),
            None => ServeConfig::default(),
        };
        Ok(Local {
            backend: options.backend.map_or(file.backend, BackendKind::from),
            interpreters: if options.interpreter.is_empty() {
                file.interpreters
            } else {
                options.interpreter.clone()
            },
        })
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

/// Why the machine's interpreters can't stand for the server's.
pub fn not_local(
    options: &ServerOptions,
    connected: bool,
) -> Result<Option<&'static str>, CliError> {
    if connected {
        return Ok(Some(
            "the interpreters of a server reached with --connect are not known here",
        ));
    }
    let conda = Local::of(options)?.backend == BackendKind::Conda;
    Ok(conda.then_some("the conda backend installs Python from its channels"))
}

/// The `--python` of a `wsp create` that gave none: `X.Y` of the newest interpreter found,
/// said on stderr.
pub async fn default_version(options: &ServerOptions, connected: bool) -> Result<String, CliError> {
    if let Some(why) = not_local(options, connected)? {
        return Err(CliError::Usage(format!("--python X.Y is needed: {why}")));
    }
    let Some(newest) = find(options).await?.into_iter().next() else {
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
