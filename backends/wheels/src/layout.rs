//! Where each file of each picked wheel goes, as pip's `install_wheel` places it in a venv:
//! the wheel's root and `.data/purelib`, `.data/platlib` in site-packages, `.data/scripts` in
//! `bin` (with `#!python` rewritten), `.data/data` in the root; generated scripts in `bin`.
//! Every destination must be new: a request that would overwrite anything is pip's.

use std::collections::HashSet;

use crate::interpreter::Interpreter;
use crate::metadata::{script_entries, ScriptEntry};
use crate::resolve::Picked;
use crate::tree::{Presence, Tree};
use crate::Stop;

/// One file of a wheel, placed.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    /// Index into the wheel's [`files`](crate::archive::Wheel::files).
    pub file: usize,
    /// Relative to the environment's root.
    pub dest: String,
    /// A `.data/scripts` file: its `#!python` line is rewritten.
    pub script: bool,
}

/// A picked wheel with every file it installs placed.
pub(crate) struct Planned {
    pub picked: Picked,
    pub placements: Vec<Placement>,
    pub scripts: Vec<ScriptEntry>,
    /// The `.dist-info` directory, relative to the root.
    pub dist_info: String,
}

/// The layout of a venv: site-packages and bin relative to its root.
pub(crate) struct Layout {
    pub site_packages: String,
}

impl Layout {
    pub fn new(target: &Interpreter) -> Layout {
        Layout {
            site_packages: target.site_packages.to_string_lossy().into_owned(),
        }
    }

    /// `dest` (relative to the root) as RECORD spells it: relative to site-packages.
    pub fn record_path(&self, dest: &str) -> String {
        match dest.strip_prefix(&self.site_packages) {
            Some(rest) if rest.starts_with('/') => rest[1..].to_owned(),
            _ => {
                let depth = self.site_packages.split('/').count();
                format!("{}{dest}", "../".repeat(depth))
            }
        }
    }
}

/// Places the files of `picked`; checks that no destination exists or repeats.
pub(crate) fn plan(
    picked: Vec<Picked>,
    layout: &Layout,
    tree: &Tree,
) -> Result<Vec<Planned>, Stop> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut planned = Vec::new();
    for picked in picked {
        let wheel = &picked.wheel;
        let shown = wheel.path.display();
        let scripts = match &wheel.entry_points {
            Some(text) => script_entries(text).map_err(|e| Stop::skip(format!("{shown}: {e}")))?,
            None => Vec::new(),
        };
        if scripts
            .iter()
            .any(|s| matches!(s.name.as_str(), "pip" | "easy_install"))
        {
            return Err(Stop::skip(format!(
                "{shown}: pip names its own scripts for pip"
            )));
        }
        let dist_info = format!("{}/{}", layout.site_packages, wheel.dist_info);
        let mut placements = Vec::new();
        for (file, entry) in wheel.files.iter().enumerate() {
            let name = &entry.name;
            let (top, rest) = name.split_once('/').unwrap_or((name, ""));
            if top == wheel.dist_info {
                if matches!(rest, "INSTALLER" | "REQUESTED" | "direct_url.json") {
                    return Err(Stop::skip(format!("{shown} ships {name}")));
                }
                if rest == "RECORD" {
                    continue;
                }
            }
            let placement = if top.ends_with(".data") {
                let Some((key, sub)) = rest.split_once('/') else {
                    return Err(Stop::skip(format!("{shown}: {name} has no scheme")));
                };
                let (dest, script) = match key {
                    "purelib" | "platlib" => (format!("{}/{sub}", layout.site_packages), false),
                    "scripts" => {
                        if is_entry_point_wrapper(sub, &scripts) {
                            continue;
                        }
                        (format!("bin/{sub}"), true)
                    }
                    "data" => (sub.to_owned(), false),
                    _ => return Err(Stop::skip(format!("{shown}: {name} ({key} not handled)"))),
                };
                Placement { file, dest, script }
            } else {
                let dest = format!("{}/{name}", layout.site_packages);
                Placement {
                    file,
                    dest,
                    script: false,
                }
            };
            placements.push(placement);
        }
        let generated = scripts
            .iter()
            .map(|s| format!("bin/{}", s.name))
            .chain(["INSTALLER", "REQUESTED", "RECORD"].map(|f| format!("{dist_info}/{f}")));
        let dests = placements.iter().map(|p| p.dest.clone()).chain(generated);
        for dest in dests {
            if !taken.insert(dest.clone()) {
                return Err(Stop::skip(format!("two files of the request go to {dest}")));
            }
            match tree.presence(&dest) {
                Presence::Absent => {}
                Presence::Present => {
                    return Err(Stop::skip(format!("{dest} exists; pip replaces it")));
                }
                Presence::Blocked => {
                    return Err(Stop::skip(format!(
                        "a parent of {dest} is not a plain directory"
                    )));
                }
            }
        }
        planned.push(Planned {
            picked,
            placements,
            scripts,
            dist_info,
        });
    }
    Ok(planned)
}

/// pip leaves out a `.data/scripts` file that setuptools generated for an entry point
/// (`EP`, `EP.exe`, `EP-script.py`, `EP.pya`), since it generates its own.
fn is_entry_point_wrapper(sub: &str, scripts: &[ScriptEntry]) -> bool {
    let name = sub.rsplit('/').next().unwrap_or(sub);
    let lower = name.to_lowercase();
    let suffix = if lower.ends_with(".exe") || lower.ends_with(".pya") {
        4
    } else if lower.ends_with("-script.py") {
        10
    } else {
        0
    };
    let stem = name
        .get(..name.len().saturating_sub(suffix))
        .unwrap_or(name);
    scripts.iter().any(|s| s.name == stem)
}
