//! Recognising pyenv shims — scripts that dispatch to whichever pyenv version is selected at
//! the moment — so they are never trusted or run, and finding the pyenv root behind one.

use std::fs;
use std::path::{Path, PathBuf};

use super::files::{read_head, HEAD_LIMIT};

/// What an executable found on disk turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inspection {
    /// Not a shim: it may be queried.
    NotShim,
    /// A pyenv shim, with the pyenv root it dispatches into when that can be told.
    PyenvShim {
        /// The root whose `versions` directory holds the real interpreters.
        root: Option<PathBuf>,
    },
}

/// Decides whether `path` is a pyenv shim: anything in a directory named `shims`, or a script
/// (`#!`) that mentions pyenv. Binaries and other scripts are not shims.
pub(crate) fn inspect(path: &Path) -> Inspection {
    let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let shims_dir = [path, real.as_path()]
        .into_iter()
        .filter_map(Path::parent)
        .find(|dir| dir.file_name().is_some_and(|name| name == "shims"));
    let head = read_head(&real, HEAD_LIMIT).unwrap_or_default();
    let pyenv_script = head.starts_with(b"#!") && contains(&head, b"pyenv");
    if shims_dir.is_none() && !pyenv_script {
        return Inspection::NotShim;
    }
    let root = shims_dir
        .and_then(Path::parent)
        .filter(|root| root.join("versions").is_dir())
        .map(Path::to_path_buf)
        .or_else(|| declared_root(&head));
    Inspection::PyenvShim { root }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The `PYENV_ROOT="..."` a shim script exports, if it names a directory with `versions`.
fn declared_root(script: &[u8]) -> Option<PathBuf> {
    let text = String::from_utf8_lossy(script);
    text.match_indices("PYENV_ROOT=").find_map(|(at, key)| {
        let value = text[at + key.len()..].trim_start_matches(['"', '\'']);
        let end = value
            .find(|c: char| c == '"' || c == '\'' || c.is_whitespace() || c == ';')
            .unwrap_or(value.len());
        let root = PathBuf::from(&value[..end]);
        (root.is_absolute() && root.join("versions").is_dir()).then_some(root)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_exported_root() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("versions")).unwrap();
        let script = format!(
            "#!/usr/bin/env bash\nexport PYENV_ROOT=\"{}\"\nexec pyenv exec python\n",
            dir.path().display()
        );
        assert_eq!(
            declared_root(script.as_bytes()),
            Some(dir.path().to_path_buf())
        );
        assert_eq!(declared_root(b"#!/bin/sh\nPYENV_ROOT=relative\n"), None);
        assert_eq!(declared_root(b"#!/bin/sh\nexit 127\n"), None);
    }

    #[test]
    fn scripts_and_shims_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("python3");
        fs::write(&plain, "#!/bin/sh\nexit 127\n").unwrap();
        assert_eq!(inspect(&plain), Inspection::NotShim);
        let mentions = dir.path().join("python3.12");
        fs::write(&mentions, "#!/bin/sh\nexec pyenv exec python3.12\n").unwrap();
        assert_eq!(inspect(&mentions), Inspection::PyenvShim { root: None });
        fs::create_dir_all(dir.path().join("root/shims")).unwrap();
        fs::create_dir_all(dir.path().join("root/versions")).unwrap();
        let in_shims = dir.path().join("root/shims/python");
        fs::write(&in_shims, "\x7fELF").unwrap();
        assert_eq!(
            inspect(&in_shims),
            Inspection::PyenvShim {
                root: Some(dir.path().join("root"))
            }
        );
    }
}
