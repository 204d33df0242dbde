//! A greedy resolver over the wheels found: each project gets the highest version that fits
//! the interpreter and satisfies the constraints seen when it is first needed (all of the
//! request's own constraints on it among them); a constraint
//! seen later that the pick does not satisfy, or anything pip might decide differently, stops
//! the fast path ([`NotApplicable`]) so that pip resolves with its real resolver.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::str::FromStr;

use pep440_rs::Version;
use pep440_rs::VersionSpecifiers;
use pep508_rs::{ExtraName, PackageName, Requirement, VersionOrUrl};

use crate::archive::Wheel;
use crate::find::Found;
use crate::installed::Installed;
use crate::interpreter::Interpreter;
use crate::metadata::{normalize_name, same_project, Metadata};
use crate::{NotApplicable, Stop};

/// A wheel the request installs.
pub(crate) struct Picked {
    pub wheel: Wheel,
    /// A top-level requirement of the request named it (pip writes `REQUESTED`).
    pub requested: bool,
}

struct Pick {
    version: Version,
    extras: BTreeSet<ExtraName>,
    /// Its `Requires-Dist` and `Provides-Extra`.
    metadata: Metadata,
    /// The index of its wheel among the picked wheels; `None`: already installed.
    wheel: Option<usize>,
}

/// Resolves `requirements` (the request's, as written) against `found` and `installed`.
pub(crate) fn resolve(
    requirements: &[String],
    found: &Found,
    installed: &Installed,
    target: &Interpreter,
) -> Result<Vec<Picked>, Stop> {
    let mut queue: VecDeque<(Requirement, bool)> = VecDeque::new();
    for text in requirements {
        let requirement = Requirement::from_str(text)
            .map_err(|e| Stop::skip(format!("the requirement {text:?}: {e}")))?;
        if requirement.evaluate_markers(&target.markers, &[]) {
            queue.push_back((requirement, true));
        }
    }
    // Every version constraint the request itself puts on a project holds for its pick, as
    // pip's resolver makes them hold together (`a>=1` and `a<2` given apart).
    let mut requested_versions: HashMap<PackageName, Vec<VersionSpecifiers>> = HashMap::new();
    for (requirement, _) in &queue {
        if let Some(VersionOrUrl::VersionSpecifier(specifiers)) = &requirement.version_or_url {
            requested_versions
                .entry(requirement.name.clone())
                .or_default()
                .push(specifiers.clone());
        }
    }
    let mut picks: HashMap<PackageName, Pick> = HashMap::new();
    let mut wheels: Vec<Picked> = Vec::new();
    while let Some((requirement, requested)) = queue.pop_front() {
        let name = requirement.name.clone();
        let specifiers = match &requirement.version_or_url {
            None => None,
            Some(VersionOrUrl::VersionSpecifier(specifiers)) => Some(specifiers),
            Some(VersionOrUrl::Url(_)) => {
                return Err(Stop::skip(format!("{requirement} is a direct reference")));
            }
        };
        if specifiers.is_some_and(|s| s.iter().any(|s| s.any_prerelease())) {
            return Err(Stop::skip(format!("{requirement} asks for a pre-release")));
        }
        let requested_too = requested_versions.get(&name).map_or(&[][..], Vec::as_slice);
        let satisfied = |version: &Version| {
            specifiers.is_none_or(|s| s.contains(version))
                && requested_too.iter().all(|s| s.contains(version))
        };
        if let Some(pick) = picks.get_mut(&name) {
            if !satisfied(&pick.version) {
                return Err(Stop::skip(format!(
                    "{name} {} was picked, which {requirement} excludes",
                    pick.version
                )));
            }
            if let Some(index) = pick.wheel {
                wheels[index].requested |= requested;
            }
            let before = pick.extras.len();
            pick.extras
                .extend(provided(&requirement.extras, &pick.metadata)?);
            if pick.extras.len() > before {
                let extras: Vec<ExtraName> = pick.extras.iter().cloned().collect();
                enqueue(&mut queue, &pick.metadata.requires_dist, target, &extras);
            }
            continue;
        }
        let (version, metadata, wheel) = match installed.version(&name) {
            Some(version) => {
                let version = version?;
                if !satisfied(&version) {
                    return Err(Stop::skip(format!(
                        "{name} {version} is installed, which {requirement} excludes"
                    )));
                }
                (version, installed.metadata(&name)?, None)
            }
            None => {
                let wheel = pick_wheel(&name, &satisfied, found, target)?;
                let version = wheel
                    .metadata
                    .version
                    .clone()
                    .unwrap_or_else(|| Version::new([0]));
                let metadata = wheel.metadata.clone();
                wheels.push(Picked { wheel, requested });
                (version, metadata, Some(wheels.len() - 1))
            }
        };
        let extras = provided(&requirement.extras, &metadata)?;
        enqueue(&mut queue, &metadata.requires_dist, target, &extras);
        let extras = extras.into_iter().collect();
        picks.insert(
            name,
            Pick {
                version,
                extras,
                metadata,
                wheel,
            },
        );
    }
    Ok(wheels)
}

/// The extras of `requested` that the distribution provides, as pip keeps them (it ignores,
/// with a warning, an extra it does not provide). A provided extra that matches only once
/// normalized is matched differently by different pip releases: pip's to decide.
fn provided(requested: &[ExtraName], metadata: &Metadata) -> Result<Vec<ExtraName>, Stop> {
    let mut kept = Vec::new();
    for extra in requested {
        let matching: Vec<&String> = metadata
            .provides_extra
            .iter()
            .filter(|provided| normalize_name(provided) == extra.as_ref())
            .collect();
        if matching
            .iter()
            .any(|provided| provided.as_str() != extra.as_ref())
        {
            return Err(Stop::skip(format!(
                "the extra {extra} is spelled {matching:?}"
            )));
        }
        if !matching.is_empty() {
            kept.push(extra.clone());
        }
    }
    Ok(kept)
}

fn enqueue(
    queue: &mut VecDeque<(Requirement, bool)>,
    requirements: &[Requirement],
    target: &Interpreter,
    extras: &[ExtraName],
) {
    for requirement in requirements {
        if requirement.evaluate_markers(&target.markers, extras) {
            queue.push_back((requirement.clone(), false));
        }
    }
}

/// The highest fitting wheel of `name` that `satisfied` accepts, opened and checked.
fn pick_wheel(
    name: &PackageName,
    satisfied: &dyn Fn(&Version) -> bool,
    found: &Found,
    target: &Interpreter,
) -> Result<Wheel, Stop> {
    if let Some(doubt) = found.doubt(name) {
        return Err(Stop::skip(doubt));
    }
    let candidates: Vec<_> = found
        .wheels
        .get(name)
        .into_iter()
        .flatten()
        .filter(|candidate| satisfied(&candidate.version))
        .collect();
    if candidates
        .iter()
        .any(|c| c.version.any_prerelease() || c.version.is_local())
    {
        return Err(Stop::skip(format!(
            "{name} has pre-release or local versions"
        )));
    }
    let best = candidates
        .iter()
        .max_by(|a, b| a.version.cmp(&b.version))
        .ok_or_else(|| Stop::skip(format!("no wheel of {name} fits")))?;
    if candidates
        .iter()
        .filter(|c| c.version == best.version)
        .count()
        > 1
    {
        return Err(Stop::skip(format!(
            "{name} {} has more than one wheel",
            best.version
        )));
    }
    let wheel = Wheel::open(&best.path, name)?;
    let metadata = &wheel.metadata;
    if !same_project(&metadata.name, name) || metadata.version.as_ref() != Some(&best.version) {
        return Err(Stop::skip(format!(
            "{} holds {} {:?}",
            best.path.display(),
            metadata.name,
            metadata.version
        )));
    }
    if let Some(requires_python) = &metadata.requires_python {
        if !requires_python.contains(&target.full_version) {
            return Err(Stop::skip(format!(
                "{name} {} requires Python {requires_python}",
                best.version
            )));
        }
    }
    Ok(wheel)
}

impl From<NotApplicable> for Stop {
    fn from(reason: NotApplicable) -> Self {
        Stop::NotApplicable(reason.0)
    }
}
