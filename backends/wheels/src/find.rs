//! The distributions in the request's `find_links` directories, as pip lists them: every file
//! directly in each directory, wheels by their names and tags, anything else by its name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pep440_rs::Version;
use pep508_rs::PackageName;

use crate::interpreter::Interpreter;
use crate::metadata::normalize_name;
use crate::tags::{Fit, WheelName};
use crate::NotApplicable;

/// The most files looked at in one directory.
const MAX_FILES: usize = 100_000;

/// A wheel that fits the target.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub version: Version,
    pub path: PathBuf,
}

/// What the directories offer.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Wheels that fit, by project.
    pub wheels: HashMap<PackageName, Vec<Candidate>>,
    /// Projects with a wheel whose fit only pip can tell.
    pub unsure: Vec<PackageName>,
    /// Canonicalized names of the other archives (sdists, eggs), which pip may build.
    pub others: Vec<String>,
}

impl Found {
    /// Why pip might choose something else for `name` than a wheel from [`Found::wheels`].
    pub fn doubt(&self, name: &PackageName) -> Option<String> {
        if self.unsure.contains(name) {
            return Some(format!("a wheel of {name} has tags only pip can judge"));
        }
        let prefix = format!("{name}-");
        self.others
            .iter()
            .any(|other| other.starts_with(&prefix))
            .then(|| format!("{name} has a source distribution pip might build"))
    }
}

/// Lists `links`, which must all be absolute paths of local directories.
pub(crate) fn find(links: &[String], target: &Interpreter) -> Result<Found, NotApplicable> {
    let mut found = Found::default();
    for link in links {
        let dir = Path::new(link);
        if !dir.is_absolute() || !dir.is_dir() {
            return Err(NotApplicable(format!(
                "find_links {link:?} is not a local directory"
            )));
        }
        let entries = std::fs::read_dir(dir)
            .map_err(|e| NotApplicable(format!("find_links {link:?} cannot be listed: {e}")))?;
        for (count, entry) in entries.enumerate() {
            if count >= MAX_FILES {
                return Err(NotApplicable(format!(
                    "find_links {link:?} has too many files"
                )));
            }
            let entry = entry.map_err(|e| NotApplicable(format!("find_links {link:?}: {e}")))?;
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            add(&mut found, dir, &file_name, target);
        }
    }
    Ok(found)
}

fn add(found: &mut Found, dir: &Path, file_name: &str, target: &Interpreter) {
    if file_name.ends_with(".whl") {
        let Some(wheel) = WheelName::parse(file_name) else {
            return;
        };
        match wheel.fit(target) {
            Fit::No => {}
            Fit::Unsure => found.unsure.push(wheel.name),
            Fit::Yes => found.wheels.entry(wheel.name).or_default().push(Candidate {
                version: wheel.version,
                path: dir.join(file_name),
            }),
        }
        return;
    }
    let archive = [
        ".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar.xz", ".tar", ".egg",
    ]
    .iter()
    .any(|suffix| file_name.to_ascii_lowercase().ends_with(suffix));
    if archive {
        found.others.push(normalize_name(file_name));
    }
}
