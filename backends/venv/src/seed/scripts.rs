//! Console scripts (`bin/pip`, `bin/pip3`, ...) for the distributions a seed brings, written
//! from their `entry_points.txt` with the environment's own interpreter in the shebang.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use wsp_interpreters::PythonVersion;

use crate::layout::Layout;
use crate::VenvError;

/// Linux reads at most this many bytes of a `#!` line (older kernels; newer allow 256).
const SHEBANG_LIMIT: usize = 127;

/// A `name = module:attr` console script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryPoint {
    module: String,
    attr: String,
}

/// Writes the console scripts of every `*.dist-info` in `site_packages` into `layout.bin`,
/// returning their names.
pub(crate) fn write_all(
    site_packages: &Path,
    layout: &Layout,
    version: &PythonVersion,
) -> Result<Vec<String>, VenvError> {
    let mut scripts = BTreeMap::new();
    let entries =
        fs::read_dir(site_packages).map_err(VenvError::io("read directory", site_packages))?;
    for entry in entries {
        let entry = entry.map_err(VenvError::io("read directory", site_packages))?;
        if !entry.file_name().to_string_lossy().ends_with(".dist-info") {
            continue;
        }
        let file = entry.path().join("entry_points.txt");
        let text = match fs::read_to_string(&file) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(VenvError::io("read", &file)(error)),
        };
        for (name, entry_point) in console_scripts(&text) {
            for name in names_for(&name, version) {
                scripts.insert(name, entry_point.clone());
            }
        }
    }
    let shebang = shebang(layout.python().to_string_lossy().as_ref())?;
    for (name, entry_point) in &scripts {
        let path = layout.bin.join(name);
        fs::write(&path, launcher(&shebang, name, entry_point))
            .map_err(VenvError::io("write", &path))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .map_err(VenvError::io("make executable", &path))?;
    }
    Ok(scripts.into_keys().collect())
}

/// The well-formed entries of the `[console_scripts]` section; others are skipped.
pub(crate) fn console_scripts(text: &str) -> Vec<(String, EntryPoint)> {
    let mut in_section = false;
    let mut found = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[console_scripts]";
            continue;
        }
        if !in_section || line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        // Extras (`module:attr [extra]`) do not change what the script runs.
        let value = value.split('[').next().unwrap_or_default().trim();
        let Some((module, attr)) = value.split_once(':') else {
            continue;
        };
        let (name, module, attr) = (name.trim(), module.trim(), attr.trim());
        if is_script_name(name) && is_dotted_identifier(module) && is_dotted_identifier(attr) {
            found.push((
                name.to_owned(),
                EntryPoint {
                    module: module.to_owned(),
                    attr: attr.to_owned(),
                },
            ));
        }
    }
    found
}

/// pip's and setuptools' scripts carry the version of the Python their wheel was built with
/// (`pip3.11`); installers rename them for the target interpreter, and so do we.
fn names_for(name: &str, version: &PythonVersion) -> Vec<String> {
    let (major, minor) = (version.major, version.minor);
    if name == "pip" {
        return vec!["pip".to_owned()];
    }
    if let Some(rest) = name.strip_prefix("pip") {
        if is_version_suffix(rest) {
            return vec![format!("pip{major}"), format!("pip{major}.{minor}")];
        }
    }
    if let Some(rest) = name.strip_prefix("easy_install-") {
        if is_version_suffix(rest) {
            return vec![format!("easy_install-{major}.{minor}")];
        }
    }
    vec![name.to_owned()]
}

/// The `#!` line: the interpreter itself when the kernel can read it, else a `/bin/sh`
/// trampoline that `exec`s it (a line sh runs and Python reads as a string literal).
fn shebang(python: &str) -> Result<String, VenvError> {
    let direct = format!("#!{python}");
    if direct.len() <= SHEBANG_LIMIT && !python.contains(char::is_whitespace) {
        return Ok(direct);
    }
    if python.contains('\'') {
        return Err(VenvError::InvalidInput {
            what: "environment root",
            value: python.to_owned(),
            reason: "scripts cannot start an interpreter whose long path contains `'`",
        });
    }
    Ok(format!(
        "#!/bin/sh\n'''exec' '{python}' \"$0\" \"$@\"\n' '''"
    ))
}

/// The text of one console script.
fn launcher(shebang: &str, name: &str, entry_point: &EntryPoint) -> String {
    let EntryPoint { module, attr } = entry_point;
    let head = attr.split('.').next().unwrap_or(attr);
    format!(
        "{shebang}\n\
         # The `{name}` command of this environment, written by wsp.\n\
         import sys\n\
         from {module} import {head}\n\
         if __name__ == \"__main__\":\n    \
         sys.exit({attr}())\n"
    )
}

/// `3`, `3.11`: digits and dots, starting with a digit.
fn is_version_suffix(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn is_script_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.".contains(c))
}

fn is_dotted_identifier(text: &str) -> bool {
    text.split('.').all(|part| {
        let mut chars = part.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_console_scripts_only() {
        let text = "[console_scripts]\npip = pip._internal.cli.main:main\n\
                    pip3.11 = pip._internal.cli.main:main [extra]\nbad = no-colon\n\
                    evil = os:system; rm\n[gui_scripts]\ngui = a:b\n";
        let names: Vec<String> = console_scripts(text).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["pip", "pip3.11"]);
    }

    #[test]
    fn versioned_names_follow_the_target_interpreter() {
        let v = PythonVersion {
            major: 3,
            minor: 12,
            patch: 1,
        };
        assert_eq!(names_for("pip3.11", &v), ["pip3", "pip3.12"]);
        assert_eq!(names_for("pip3", &v), ["pip3", "pip3.12"]);
        assert_eq!(names_for("pip", &v), ["pip"]);
        assert_eq!(names_for("easy_install-3.6", &v), ["easy_install-3.12"]);
        assert_eq!(names_for("pipx", &v), ["pipx"]);
    }

    #[test]
    fn long_paths_get_a_trampoline() {
        assert_eq!(
            shebang("/e/bin/python").ok().as_deref(),
            Some("#!/e/bin/python")
        );
        let long = format!("/{}/bin/python", "x".repeat(200));
        assert!(shebang(&long).is_ok_and(|s| s.starts_with("#!/bin/sh\n")));
        assert!(shebang("/a b/bin/python").is_ok_and(|s| s.starts_with("#!/bin/sh\n")));
    }
}
