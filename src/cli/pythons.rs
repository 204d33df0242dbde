//! `wsp python list` and `wsp create`'s default `--python`: the interpreters a spawned server
//! would find, found here the same way (the same locators, the interpreter paths of the command
//! line or else of the state directory's `wsp.toml`, and, when the state directory exists, its
//! cache of interpreter queries); with `--connect`, those the server lists (`interpreter/list`).

use std::path::PathBuf;

use tokio::io::{AsyncRead, AsyncWrite};
use wsp_interpreters::{Inventory, InventoryConfig};
use wsp_protocol::method::InterpreterList;
use wsp_protocol::{Interpreter, NoParams, PythonVersion};
use wsp_server::client::{Client, Peer};

use super::args::ServerOptions;
use super::commands::{CliError, Served};
use crate::config::BackendKind;
use crate::config_file::ConfigFile;

/// Every interpreter `local` finds, newest first; among equal versions the one the server
/// prefers first (the list `interpreter/list` answers). Versions that no file tells are asked
/// of the interpreter (once; the answer is cached); one that doesn't answer is left out, as the
/// server leaves it out.
pub async fn find(local: &Local) -> Vec<Interpreter> {
    let mut config = InventoryConfig::from_env();
    config.extra_interpreters = local.interpreters.clone();
    config.cache_file = local.cache_file.clone();
    let available = Inventory::new(config).available().await;
    available.into_iter().map(Interpreter::from).collect()
}

/// The interpreters the server lists, newest first; an error if it has no `interpreter/list`.
pub async fn listed_by<R, W, P>(
    client: &mut Client<R, W, P>,
    served: &Served,
) -> Result<Vec<Interpreter>, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    if let Some(why) = unlisted(served) {
        return Err(CliError::Usage(format!("cannot list its Pythons: {why}")));
    }
    Ok(client
        .call::<InterpreterList>(&NoParams)
        .await?
        .interpreters)
}

/// Why the server can't say which interpreters it has, if it can't.
fn unlisted(served: &Served) -> Option<String> {
    let feature = "interpreter.list";
    (!served.offers(feature))
        .then(|| format!("the server does not offer interpreter/list (feature `{feature}`)"))
}

/// Where a server the CLI spawns would look for interpreters, found here: the command line's
/// interpreter paths, else those of the state directory's `wsp.toml`, and the state
/// directory's cache of interpreter queries when it exists.
pub struct Local {
    interpreters: Vec<PathBuf>,
    cache_file: Option<PathBuf>,
}

/// Whether this machine's interpreters are what the server spawned here creates with.
pub enum Interpreters {
    /// They are: look here.
    Here(Local),
    /// They aren't, for this reason.
    Elsewhere(&'static str),
}

impl Interpreters {
    /// For the server `options` spawn: its backend and interpreter paths given on the command
    /// line, else in the state directory's `wsp.toml`.
    pub fn of(options: &ServerOptions) -> Result<Interpreters, CliError> {
        let state_dir = crate::serve::state_dir(options.state_dir.clone());
        let file = ConfigFile::config_in(state_dir.as_deref())
            .map_err(|error| CliError::Usage(error.to_string()))?;
        if options.backend.map_or(file.backend, BackendKind::from) == BackendKind::Conda {
            return Ok(Interpreters::Elsewhere(CONDA));
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

/// Why the interpreters found don't tell a conda server's default.
const CONDA: &str = "the conda backend installs Python from its channels";

/// `wsp python list`'s table: VERSION, SOURCE, PATH.
pub fn table(found: &[Interpreter]) -> String {
    if found.is_empty() {
        return "no Python interpreters found\n".into();
    }
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|python| {
            vec![
                python.version.clone(),
                python.source.clone(),
                super::output::printable(&python.path),
            ]
        })
        .collect();
    super::output::table(&["VERSION", "SOURCE", "PATH"], &rows)
}

/// The `--python` of a `wsp create` that gave none, for the server `options` spawn: `X.Y` of
/// the newest interpreter found here, said on stderr.
pub async fn default_version(options: &ServerOptions) -> Result<String, CliError> {
    let local = match Interpreters::of(options)? {
        Interpreters::Here(local) => local,
        Interpreters::Elsewhere(why) => {
            return Err(CliError::Usage(format!("--python X.Y is needed: {why}")));
        }
    };
    let found = find(&local).await;
    let newest = found.first().ok_or_else(|| {
        CliError::Usage(
            "no Python interpreter found; install one (pyenv, uv python install, ...) or pass \
             --interpreter PATH"
                .into(),
        )
    })?;
    chosen(newest, "the newest found")
}

/// The `--python` of a `wsp create` that gave none, for a server reached with `--connect`:
/// `X.Y` of the newest interpreter it lists, said on stderr.
pub async fn server_default<R, W, P>(
    client: &mut Client<R, W, P>,
    served: &Served,
) -> Result<String, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    let needed = |why: &str| CliError::Usage(format!("--python X.Y is needed: {why}"));
    if served.backend.as_deref() == Some(BackendKind::Conda.name()) {
        return Err(needed(CONDA));
    }
    if let Some(why) = unlisted(served) {
        return Err(needed(&why));
    }
    let listed = listed_by(client, served).await?;
    let newest = listed
        .first()
        .ok_or_else(|| needed("the server lists no Python interpreter"))?;
    chosen(newest, "the newest the server lists")
}

/// `X.Y` of `newest`, said on stderr.
fn chosen(newest: &Interpreter, which: &str) -> Result<String, CliError> {
    let version: PythonVersion = newest.version.parse().map_err(|reason| {
        CliError::Usage(format!(
            "the interpreter version `{}`: {reason}",
            newest.version
        ))
    })?;
    let chosen = format!("{}.{}", version.major, version.minor);
    eprintln!(
        "wsp: no --python given: using {chosen}, {which} ({} at {})",
        newest.version,
        super::output::printable(&newest.path)
    );
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_without_interpreter_list_is_told_apart_by_its_features() {
        let why = unlisted(&Served::default()).expect("no features: no list");
        assert!(why.contains("`interpreter.list`"), "{why}");
        let served = Served {
            features: vec!["interpreter.list".into()],
            backend: None,
        };
        assert_eq!(unlisted(&served), None);
    }
}
