//! `bin/pip` in an environment that has no pip of its own.
//!
//! A venv made without pip has no `pip` in its `bin`, so inside it `pip` is looked up further
//! along `PATH` and finds the host's pip, which installs into the host's Python. These stubs
//! take the names `pip`, `pip3` and `pip3.Y` in the environment's `bin` and refuse, saying how
//! to install instead. Installing pip into the environment replaces them with its own scripts.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What every stub runs: it names the environment from its own path and exits 1.
const STUB: &str = r#"#!/bin/sh
# Written by wsp: this environment has no pip of its own, and a pip further along PATH would
# install into another Python. Installing pip into the environment replaces this file.
root=$(cd "$(dirname "$0")/.." && pwd)
echo "pip is not installed in this environment ($root); use \`wsp install ENVIRONMENT PACKAGE...\`, or \`wsp install ENVIRONMENT pip\` to give it a pip of its own" >&2
exit 1
"#;

/// Writes the stubs into `<root>/bin` under every pip name that is free there; a name that is
/// taken (pip's own script, or anything else) is left alone. Returns the names written.
pub fn write_pip_stubs(root: &Path) -> std::io::Result<Vec<String>> {
    let bin = root.join("bin");
    let mut written = Vec::new();
    if !is_real_directory(&bin) {
        // None, or a symlink the environment planted: the stubs would land outside it.
        return Ok(written);
    }
    for name in pip_names(root) {
        let path = bin.join(&name);
        // `create_new` neither replaces a file nor follows a symlink at `path`.
        let mut file = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&path)
        {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        };
        file.write_all(STUB.as_bytes())?;
        written.push(name);
    }
    Ok(written)
}

/// Removes the stubs [`write_pip_stubs`] wrote into `<root>/bin` (files that hold exactly a
/// stub), so that a package manager can put a pip of its own under those names. Anything else
/// under a pip name is left alone.
pub fn remove_pip_stubs(root: &Path) -> std::io::Result<()> {
    let bin = root.join("bin");
    if !is_real_directory(&bin) {
        return Ok(());
    }
    for name in pip_names(root) {
        let path = bin.join(&name);
        let is_file = fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file());
        if is_file && holds_the_stub(&path)? {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

fn holds_the_stub(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut text = Vec::with_capacity(STUB.len() + 1);
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    file.take(STUB.len() as u64 + 1).read_to_end(&mut text)?;
    Ok(text == STUB.as_bytes())
}

fn is_real_directory(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// `pip`, `pip3`, and `pip3.Y` for each `lib/python3.Y` (or `python3.Yt`) of the environment.
fn pip_names(root: &Path) -> Vec<String> {
    let mut names = vec!["pip".to_owned(), "pip3".to_owned()];
    let Ok(entries) = fs::read_dir(root.join("lib")) else {
        return names;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(version) = name.to_str().and_then(|n| n.strip_prefix("python")) else {
            continue;
        };
        let version = version.trim_end_matches('t');
        let well_formed = version
            .split_once('.')
            .is_some_and(|(major, minor)| is_number(major) && is_number(minor));
        let name = format!("pip{version}");
        if well_formed && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_take_the_free_names_and_refuse() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("lib/python3.13t/site-packages")).unwrap();
        fs::create_dir_all(root.path().join("bin")).unwrap();
        fs::write(root.path().join("bin/pip3"), "pip's own").unwrap();
        let written = write_pip_stubs(root.path()).unwrap();
        assert_eq!(written, ["pip", "pip3.13"]);
        assert_eq!(
            fs::read_to_string(root.path().join("bin/pip3")).unwrap(),
            "pip's own"
        );
        let ran = std::process::Command::new(root.path().join("bin/pip"))
            .args(["install", "x"])
            .output()
            .unwrap();
        assert_eq!(ran.status.code(), Some(1));
        let message = String::from_utf8_lossy(&ran.stderr);
        assert!(message.contains("pip is not installed in this environment"));
        assert!(message.contains("wsp install"), "{message}");
        assert!(write_pip_stubs(root.path()).unwrap().is_empty());
    }

    #[test]
    fn removing_takes_only_the_stubs() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("lib/python3.12/site-packages")).unwrap();
        fs::create_dir_all(root.path().join("bin")).unwrap();
        fs::write(root.path().join("bin/pip3"), "pip's own").unwrap();
        assert_eq!(write_pip_stubs(root.path()).unwrap(), ["pip", "pip3.12"]);
        remove_pip_stubs(root.path()).unwrap();
        assert!(!root.path().join("bin/pip").exists());
        assert!(!root.path().join("bin/pip3.12").exists());
        assert_eq!(
            fs::read_to_string(root.path().join("bin/pip3")).unwrap(),
            "pip's own"
        );
    }

    #[test]
    fn a_planted_bin_symlink_gets_no_stubs() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("bin")).unwrap();
        assert!(write_pip_stubs(root.path()).unwrap().is_empty());
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
