//! Helpers shared by the interpreter tests: this machine's pyenv installations, scripts, and
//! inventories restricted to chosen sources.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use wsp_backend::interpreters::{InventoryConfig, PythonVersion};

/// This machine's pyenv root (`$PYENV_ROOT`, else `~/.pyenv`), if it has a `versions` dir.
pub fn pyenv_root() -> Option<PathBuf> {
    let root = InventoryConfig::from_env()
        .pyenv_root
        .filter(|root| root.join("versions").is_dir());
    if root.is_none() {
        skip_outside_ci("no pyenv versions directory");
    }
    root
}

/// Tests skip what this machine lacks, except in CI, whose machines have pyenv's Pythons.
pub fn skip_outside_ci(reason: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{reason}: CI machines must have it"
    );
    eprintln!("{reason}: skipping");
}

/// The plain `X.Y.Z` installations under `root`, ascending.
pub fn pyenv_versions(root: &Path) -> Vec<(PythonVersion, PathBuf)> {
    let mut versions: Vec<(PythonVersion, PathBuf)> = fs::read_dir(root.join("versions"))
        .expect("read pyenv versions")
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path()))
        })
        .collect();
    versions.sort();
    versions
}

/// A real interpreter of `major.minor` from this machine's pyenv (the newest patch), with its
/// version. `None` (and a message) when this machine has none.
pub fn real_interpreter(major: u64, minor: u64) -> Option<(PathBuf, PythonVersion)> {
    let Some(root) = pyenv_root() else {
        eprintln!("no pyenv root on this machine: skipping");
        return None;
    };
    let found = pyenv_versions(&root)
        .into_iter()
        .rev()
        .find(|(v, _)| v.major == major && v.minor == minor)
        .map(|(v, dir)| (dir.join(format!("bin/python{major}.{minor}")), v));
    if found.is_none() {
        skip_outside_ci(&format!("pyenv has no Python {major}.{minor}"));
    }
    found
}

/// Writes an executable script.
pub fn write_script(path: &Path, body: &str) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).expect("create script dir");
    }
    fs::write(path, body).expect("write script");
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod script");
}

/// A script that leaves `marker` behind and then runs `interpreter` with its arguments.
///
/// The script reaches the interpreter through a symlink next to the marker, so that its text
/// does not mention pyenv (a script that does is taken for a pyenv shim and never run).
pub fn wrapper(path: &Path, marker: &Path, interpreter: &Path) {
    let link = marker.with_extension("interpreter");
    if !link.exists() {
        std::os::unix::fs::symlink(interpreter, &link).expect("link interpreter");
    }
    write_script(
        path,
        &format!(
            "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            link.display()
        ),
    );
}

/// A configuration that searches nothing.
pub fn nothing() -> InventoryConfig {
    InventoryConfig::default()
}

/// A configuration that searches only the pyenv root `root`.
pub fn pyenv_only(root: &Path) -> InventoryConfig {
    InventoryConfig {
        pyenv_root: Some(root.to_path_buf()),
        ..InventoryConfig::default()
    }
}

/// `dirs` joined as a search path.
pub fn search_path(dirs: &[&Path]) -> std::ffi::OsString {
    std::env::join_paths(dirs).expect("join PATH")
}

/// Parses a version or request literal.
pub fn v<T: std::str::FromStr>(text: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    text.parse().expect("version literal")
}
