//! Ranking candidates and choosing one for a request, over a source of what each interpreter
//! says about itself: queries (see [`Inventory::answer`]), or only what the cache already
//! holds, which a resolve tries first, on the blocking pool, together with discovery.

use std::cmp::Reverse;
use std::path::Path;

use futures::StreamExt;

use super::discovery::Found;
use super::inventory::{Inventory, Resolved};
use super::query::{Queried, QueryError};
use super::{Candidate, PythonVersion, Source, VersionRequest};

/// How many interpreters are queried at once when several must be.
const PARALLEL_QUERIES: usize = 4;

/// Where the ranking gets an interpreter's answer from.
#[derive(Clone, Copy)]
pub(crate) enum Answers<'a> {
    /// The cache, else a query (which runs the interpreter).
    Queried(&'a Inventory),
    /// The cache alone, for the file as it is now. Blocking (it stats the file).
    Cached(&'a Inventory),
}

/// A cached-only source that has no answer: the choice needs a query.
pub(crate) struct NeedsQuery;

impl Answers<'_> {
    async fn answer(self, executable: &Path) -> Result<Result<Queried, QueryError>, NeedsQuery> {
        match self {
            Answers::Queried(inventory) => Ok(inventory.answer(executable).await),
            Answers::Cached(inventory) => inventory.cached_answer(executable).ok_or(NeedsQuery),
        }
    }
}

/// A candidate whose version is known, from files or from a query.
pub(crate) struct Ranked {
    pub(crate) found: Found,
    pub(crate) version: PythonVersion,
    order: usize,
}

/// The candidates with a known version: those whose files tell it, and those that pass
/// `worth_querying` and answer as a final release. Newest first; among equal versions the
/// preferred source, then discovery order.
pub(crate) async fn rank(
    found: Vec<Found>,
    worth_querying: impl Fn(&Found) -> bool,
    answers: Answers<'_>,
) -> Result<Vec<Ranked>, NeedsQuery> {
    let candidates = found
        .into_iter()
        .enumerate()
        .filter(|(_, f)| f.candidate.version.is_some() || worth_querying(f));
    let ranked: Vec<Result<Option<Ranked>, NeedsQuery>> = futures::stream::iter(candidates)
        .map(|(order, found)| async move {
            if let Some(version) = found.candidate.version {
                return Ok(Some(Ranked {
                    found,
                    version,
                    order,
                }));
            }
            Ok(match answers.answer(&found.candidate.executable).await? {
                Ok(answer) if answer.is_final() => Some(Ranked {
                    version: answer.info.version,
                    found,
                    order,
                }),
                Ok(_) => None,
                Err(error) => {
                    report_failure(&found.candidate, &error);
                    None
                }
            })
        })
        .buffered(PARALLEL_QUERIES)
        .collect()
        .await;
    let mut ranked: Vec<Ranked> = ranked
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    ranked.sort_by_key(|r| {
        (
            Reverse(r.version),
            r.found.candidate.source.preference(),
            r.order,
        )
    });
    Ok(ranked)
}

/// The newest version matching `request` among `found` (`X.Y`: newest `X.Y.*`; `X.Y.Z`:
/// exactly that), among equal versions the preferred [`Source`]; the chosen interpreter's
/// answer must agree, else the next one is tried. `None` if none matches.
pub(crate) async fn choose(
    found: Vec<Found>,
    request: &VersionRequest,
    answers: Answers<'_>,
) -> Result<Option<Resolved>, NeedsQuery> {
    let best_known_source = found
        .iter()
        .filter(|f| f.candidate.version.is_some_and(|v| request.matches(&v)))
        .map(|f| f.candidate.source.preference())
        .min();
    let worth_querying = |f: &Found| match request {
        // Another interpreter of the same exact version only matters if its source is
        // preferred.
        VersionRequest::Exact(_) => {
            best_known_source.is_none_or(|best| f.candidate.source.preference() < best)
        }
        // It could be a newer patch.
        VersionRequest::MajorMinor { .. } => true,
    } && f.hint.admits(request);
    let ranked = rank(found, worth_querying, answers).await?;
    for Ranked { found, version, .. } in ranked {
        if !request.matches(&version) {
            continue;
        }
        let candidate = found.candidate;
        match answers.answer(&candidate.executable).await? {
            Ok(answer) if answer.is_final() && request.matches(&answer.info.version) => {
                return Ok(Some(Resolved {
                    candidate,
                    info: answer.info,
                }));
            }
            Ok(answer) => tracing::debug!(
                executable = %candidate.executable.display(),
                expected = %version,
                answered = %answer.info.version,
                release_level = %answer.release_level,
                "interpreter is not the version its files suggest; skipped"
            ),
            Err(error) => report_failure(&candidate, &error),
        }
    }
    Ok(None)
}

/// A candidate that can't be queried is skipped: loudly when the user named it.
fn report_failure(candidate: &Candidate, error: &QueryError) {
    if candidate.source == Source::Configured {
        tracing::warn!(%error, "configured interpreter skipped");
    } else {
        tracing::debug!(source = %candidate.source, %error, "interpreter skipped");
    }
}
