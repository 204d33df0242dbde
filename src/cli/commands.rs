//! What each client command asks the server and prints.
//!
//! An environment named on the command line (`ID|NAME`) is resolved with `environment/list`: an
//! exact id match first, then an exact name match. When neither matches, the text is sent as the
//! id anyway, so the server's own `-31001` (or `-32602`) answer is what the user sees.

use std::io::{self, Write};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use wsp_protocol::method::{Create, Delete, Gc, Get, Install, List, Method, Uninstall};
use wsp_protocol::packages::PackageSource;
use wsp_protocol::params::DeleteParams;
use wsp_protocol::{
    CreateParams, EnvironmentDetails, ErrorObjectOwned, GcParams, IdParams, InstallParams,
    NoParams, UninstallParams,
};
use wsp_server::client::{Client, ClientError, Peer};

use super::action::Action;
use super::output;
use super::progress::ProgressView;
use super::transport::TransportError;

/// Why a client command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The server answered with a JSON-RPC error (exit status 1).
    #[error("error {}: {}", .0.code(), .0.message())]
    Rpc(ErrorObjectOwned),
    /// Talking to the server failed (exit status 2).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The command line is unusable in a way clap can't see (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// Our own stdout or stderr could not be written (exit status 2).
    #[error("cannot write output")]
    Output(#[source] io::Error),
}

impl From<ClientError> for CliError {
    /// The server's own error answer is the command's failure (exit status 1); anything else
    /// is a failure to talk to it (exit status 2).
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::Rpc(error) => CliError::Rpc(error),
            other => CliError::Transport(other.into()),
        }
    }
}

/// What a server's `initialize` answer tells the commands; absent facts (a server of another
/// kind, say) read as none.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Served {
    /// The extensions it serves.
    #[serde(default)]
    pub features: Vec<String>,
    /// The backend its creates get by default.
    #[serde(default)]
    pub backend: Option<String>,
}

impl Served {
    /// The facts of `initialize`'s `result`.
    pub fn from_initialize(result: Value) -> Served {
        serde_json::from_value(result).unwrap_or_default()
    }

    /// Whether the server serves `feature`.
    pub fn offers(&self, feature: &str) -> bool {
        self.features.iter().any(|offered| offered == feature)
    }
}

/// Runs one action on a session the server initialized with `served` and prints its outcome;
/// returns the exit status.
pub async fn perform<R, W, P>(
    client: &mut Client<R, W, P>,
    action: Action,
    served: &Served,
    json: bool,
) -> Result<i32, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    match action {
        Action::List => {
            let list = client.call::<List>(&NoParams).await?;
            if json {
                return print_json(&list);
            }
            write_stdout(output::summaries(&list).as_bytes())?;
        }
        Action::Create {
            name,
            python,
            packages,
            source,
            lock,
            reuse,
        } => {
            let python = python.ok_or_else(|| CliError::Usage("--python is needed".into()))?;
            let version_request = python
                .parse()
                .map_err(|reason| CliError::Usage(format!("--python `{python}`: {reason}")))?;
            let source = if packages.is_empty() && lock.is_none() {
                PackageSource::default()
            } else {
                source.into()
            };
            let params = CreateParams {
                name,
                python_version: python,
                packages,
                source,
                work_done_token: Some(ProgressView::token()),
                backend: None,
                lock,
                reuse,
                version_request,
            };
            let details = call_with_progress::<Create, _, _, _>(client, &params).await?;
            print_details(&details, json)?;
        }
        Action::Install {
            target,
            packages,
            source,
            upgrade,
        } => {
            let (id, _) = resolve(client, &target).await?;
            let params = InstallParams {
                id,
                packages,
                source: source.into(),
                upgrade,
                work_done_token: Some(ProgressView::token()),
            };
            let details = call_with_progress::<Install, _, _, _>(client, &params).await?;
            print_details(&details, json)?;
        }
        Action::Uninstall { target, packages } => {
            let (id, _) = resolve(client, &target).await?;
            let params = UninstallParams { id, packages };
            let details = client.call::<Uninstall>(&params).await?;
            print_details(&details, json)?;
        }
        Action::Get { target } => {
            let (id, _) = resolve(client, &target).await?;
            let details = client.call::<Get>(&IdParams { id }).await?;
            print_details(&details, json)?;
        }
        Action::Lock { target } => {
            let (id, _) = resolve(client, &target).await?;
            let lock = client
                .call::<wsp_protocol::method::Lock>(&IdParams { id })
                .await?;
            if json {
                return print_json(&lock);
            }
            write_stdout(lock.text.as_bytes())?;
        }
        Action::Delete { target, confirm } => {
            let (id, name) = resolve(client, &target).await?;
            if let (true, Some(name)) = (confirm, &name) {
                if !super::confirm::delete(&id, name).await? {
                    return Ok(super::status::DECLINED);
                }
            }
            let deleted = client
                .call::<Delete>(&DeleteParams { id: id.clone() })
                .await?;
            if json {
                return print_json(&deleted);
            }
            let line = match name {
                Some(name) => format!("deleted {} ({})\n", id, output::printable(&name)),
                None => format!("deleted {}\n", output::printable(&id)),
            };
            write_stdout(line.as_bytes())?;
        }
        Action::Gc { keep_bytes } => {
            let collected = client.call::<Gc>(&GcParams { keep_bytes }).await?;
            if json {
                return print_json(&collected);
            }
            let mut lines: String = collected
                .deleted
                .iter()
                .map(|id| format!("deleted {}\n", output::printable(id)))
                .collect();
            lines.push_str(&format!("{} bytes left\n", collected.disk_bytes));
            write_stdout(lines.as_bytes())?;
        }
        Action::Exec(mut request) => {
            request.id = resolve(client, &request.id).await?.0;
            return super::exec::exec(client, request, json).await;
        }
        Action::PythonList => {
            let listed = super::pythons::listed_by(client, served).await?;
            return print_pythons(&listed, json);
        }
        Action::Call { method, params } => {
            let result = call(client, &method, params).await?;
            if json {
                return print_json(&result);
            }
            let pretty = serde_json::to_string_pretty(&result)
                .map_err(|e| CliError::Output(io::Error::other(e)))?;
            write_stdout(format!("{pretty}\n").as_bytes())?;
        }
    }
    Ok(super::status::OK)
}

/// The exit status a shell would report for a command's `exit_code`: `-N` (killed by signal N)
/// becomes `128 + N`; anything outside 0–255 is clamped into it.
pub fn shell_status(exit_code: i64) -> i32 {
    let status = if exit_code < 0 {
        exit_code.saturating_neg().saturating_add(128)
    } else {
        exit_code
    };
    i32::try_from(status.clamp(0, 255)).unwrap_or(255)
}

/// One untyped request (`wsp call`); a JSON-RPC error becomes [`CliError::Rpc`].
pub async fn call<R, W, P>(
    client: &mut Client<R, W, P>,
    method: &str,
    params: Option<Value>,
) -> Result<Value, CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    client
        .request(method, params)
        .await?
        .outcome
        .map_err(CliError::Rpc)
}

/// The typed method `M` with a `work_done_token`, its `$/progress` shown on stderr as it comes.
async fn call_with_progress<M, R, W, P>(
    client: &mut Client<R, W, P>,
    params: &M::Params,
) -> Result<M::Result, CliError>
where
    M: Method<Params: Serialize, Result: DeserializeOwned>,
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    let mut view = ProgressView::default();
    Ok(client.call_with::<M>(params, |n| view.show(&n)).await?)
}

/// The id `target` stands for, and the environment's name when it was found in the list.
async fn resolve<R, W, P>(
    client: &mut Client<R, W, P>,
    target: &str,
) -> Result<(String, Option<String>), CliError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    let list = client.call::<List>(&NoParams).await?;
    let found = list
        .iter()
        .find(|env| env.id == target)
        .or_else(|| list.iter().find(|env| env.name == target));
    Ok(match found {
        Some(env) => (env.id.clone(), Some(env.name.clone())),
        None => (target.to_owned(), None),
    })
}

fn print_details(details: &EnvironmentDetails, json: bool) -> Result<(), CliError> {
    if json {
        return print_json(details).map(|_| ());
    }
    write_stdout(output::details(details).as_bytes())
}

/// `wsp python list`'s output: the table, or with `--json` the list as one JSON line.
pub(super) fn print_pythons(
    found: &[wsp_protocol::Interpreter],
    json: bool,
) -> Result<i32, CliError> {
    if json {
        return print_json(&found);
    }
    write_stdout(super::pythons::table(found).as_bytes())?;
    Ok(super::status::OK)
}

/// Prints `result` as one JSON line.
pub(super) fn print_json(result: &impl Serialize) -> Result<i32, CliError> {
    let line = serde_json::to_string(result).map_err(|e| CliError::Output(io::Error::other(e)))?;
    write_stdout(format!("{line}\n").as_bytes())?;
    Ok(super::status::OK)
}

pub(super) fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_map_like_a_shell() {
        assert_eq!(shell_status(0), 0);
        assert_eq!(shell_status(7), 7);
        assert_eq!(shell_status(-9), 137);
        assert_eq!(shell_status(-15), 143);
        assert_eq!(shell_status(300), 255);
        assert_eq!(shell_status(i64::MIN), 255);
    }
}
