//! The parts of a distribution's metadata an install needs: `METADATA`'s name, version,
//! `Requires-Python` and `Requires-Dist`, and the scripts of `entry_points.txt`.

use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use pep508_rs::{PackageName, Requirement};

/// What `METADATA` says.
#[derive(Debug, Clone, Default)]
pub(crate) struct Metadata {
    /// `Name`, as written.
    pub name: String,
    /// `Version`.
    pub version: Option<Version>,
    /// `Requires-Python`.
    pub requires_python: Option<VersionSpecifiers>,
    /// `Requires-Dist`, each parsed.
    pub requires_dist: Vec<Requirement>,
    /// `Provides-Extra`, as written.
    pub provides_extra: Vec<String>,
}

impl Metadata {
    /// Parses the header block (RFC 822 style, up to the first blank line).
    pub fn parse(text: &str) -> Result<Metadata, String> {
        let mut metadata = Metadata::default();
        for (field, value) in header_fields(text) {
            match field.to_ascii_lowercase().as_str() {
                "name" => metadata.name = value,
                "version" => {
                    let version = Version::from_str(&value)
                        .map_err(|e| format!("METADATA Version {value:?}: {e}"))?;
                    metadata.version = Some(version);
                }
                "requires-python" => {
                    let specifiers = VersionSpecifiers::from_str(&value)
                        .map_err(|e| format!("METADATA Requires-Python {value:?}: {e}"))?;
                    metadata.requires_python = Some(specifiers);
                }
                "requires-dist" => {
                    let requirement = Requirement::from_str(&value)
                        .map_err(|e| format!("METADATA Requires-Dist {value:?}: {e}"))?;
                    metadata.requires_dist.push(requirement);
                }
                "provides-extra" => metadata.provides_extra.push(value),
                _ => {}
            }
        }
        Ok(metadata)
    }
}

/// The fields of a header block, continuation lines joined.
fn header_fields(text: &str) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = fields.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
            continue;
        }
        if let Some((field, value)) = line.split_once(':') {
            fields.push((field.trim().to_owned(), value.trim().to_owned()));
        }
    }
    fields
}

/// A name as PEP 503 normalizes it: lowercase, each run of `-`, `_` and `.` one `-` (also
/// applied to whole file names, as pip does).
pub fn normalize_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut separator = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !separator {
                out.push('-');
            }
            separator = true;
        } else {
            out.extend(c.to_lowercase());
            separator = false;
        }
    }
    out
}

/// A script pip generates for an entry point: `name = module:attribute.path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptEntry {
    pub name: String,
    pub module: String,
    pub attribute: String,
}

/// The `console_scripts` and `gui_scripts` of `entry_points.txt`. A line in those sections
/// that is not plainly `name = module:attribute` (extras, a missing attribute, a continuation)
/// or a name twice makes the whole file unsupported: pip's handling of those is pip's.
pub(crate) fn script_entries(text: &str) -> Result<Vec<ScriptEntry>, String> {
    let mut entries: Vec<ScriptEntry> = Vec::new();
    let mut in_scripts = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if let Some(section) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            in_scripts = matches!(section.trim(), "console_scripts" | "gui_scripts");
            continue;
        }
        if !in_scripts {
            continue;
        }
        let entry = parse_script_line(line)
            .ok_or_else(|| format!("entry_points.txt: unsupported script line {trimmed:?}"))?;
        if entries.iter().any(|seen| seen.name == entry.name) {
            return Err(format!(
                "entry_points.txt names the script {:?} twice",
                entry.name
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

fn parse_script_line(line: &str) -> Option<ScriptEntry> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let (name, value) = line.split_once('=')?;
    let name = name.trim();
    let (module, attribute) = value.trim().split_once(':')?;
    let name_ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'));
    let dotted = |text: &str| {
        !text.is_empty()
            && text.split('.').all(|part| {
                part.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    (name_ok && dotted(module) && dotted(attribute)).then(|| ScriptEntry {
        name: name.to_owned(),
        module: module.to_owned(),
        attribute: attribute.to_owned(),
    })
}

/// Whether `name` (a requirement's or a file's) is `expected`.
pub(crate) fn same_project(name: &str, expected: &PackageName) -> bool {
    normalize_name(name) == expected.as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_and_scripts() {
        let metadata = Metadata::parse(
            "Metadata-Version: 2.1\nName: Demo\nVersion: 1.0\nRequires-Python: >=3.8\n\
             Requires-Dist: other>=2; extra == \"x\"\n\nRequires-Dist: not-a-header\n",
        )
        .unwrap();
        assert_eq!(metadata.name, "Demo");
        assert_eq!(metadata.requires_dist.len(), 1);
        let scripts = script_entries(
            "[console_scripts]\ndemo = demo.cli:main\n\n[gui_scripts]\ndemo-gui=demo:gui.run\n\
             [other]\nx = y z\n",
        )
        .unwrap();
        assert_eq!(scripts.len(), 2);
        assert_eq!(scripts[1].attribute, "gui.run");
        assert!(script_entries("[console_scripts]\ndemo = demo [extra]\n").is_err());
        assert!(script_entries("[console_scripts]\na = m:f\na = m:g\n").is_err());
        assert_eq!(
            normalize_name("Demo_Pkg-1.0.dist-info"),
            "demo-pkg-1-0-dist-info"
        );
    }
}
