//! Helpers shared by the interpreter tests: this machine's pyenv installations, scripts, and
//! inventories restricted to chosen sources.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use wsp_interpreters::{Candidate, InventoryConfig, Locator, PythonVersion, Source};

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

/// Writes an executable script, creating its directory.
pub fn write_script(path: &Path, body: &str) {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).expect("create script dir");
    }
    wsp_testing::write_executable(path, body);
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
    marked_script(path, marker, &format!("exec '{}' \"$@\"", link.display()));
}

/// Writes a script that appends a line to `marker` each time it runs, then runs the shell line
/// `then`.
pub fn marked_script(path: &Path, marker: &Path, then: &str) {
    write_script(
        path,
        &format!("#!/bin/sh\necho run >> '{}'\n{then}\n", marker.display()),
    );
}

/// A symlink `dir/name` to `real`, `dir` created first. Returns the link.
pub fn link_into(dir: &Path, name: &str, real: &Path) -> PathBuf {
    fs::create_dir_all(dir).expect("create link dir");
    let link = dir.join(name);
    std::os::unix::fs::symlink(real, &link).expect("link interpreter");
    link
}

/// An installation like pyenv's, mise's or asdf's: `<installs>/<version>/bin/pythonX.Y` a
/// symlink to the real interpreter `real`, and `python3` a link to that. Returns `bin`.
pub fn link_installation(installs: &Path, version: &PythonVersion, real: &Path) -> PathBuf {
    let bin = installs.join(version.to_string()).join("bin");
    fs::create_dir_all(&bin).expect("create installation bin");
    let name = format!("python{}.{}", version.major, version.minor);
    std::os::unix::fs::symlink(real, bin.join(&name)).expect("link interpreter");
    std::os::unix::fs::symlink(&name, bin.join("python3")).expect("link python3");
    bin
}

/// The configuration `vars` (name, value) describe, as `InventoryConfig::from_vars` reads them.
pub fn config_from_vars(vars: &[(&str, &Path)]) -> InventoryConfig {
    let vars: Vec<(String, std::ffi::OsString)> = vars
        .iter()
        .map(|(name, value)| (name.to_string(), value.as_os_str().to_owned()))
        .collect();
    InventoryConfig::from_vars(|name| {
        vars.iter()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value.clone())
    })
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

/// A custom locator for tests: offers the executables named like interpreters in `dir` (their
/// versions left to a query), labelled `Source::Custom(name)`, and counts how often it is asked.
pub struct ListedDir {
    pub name: &'static str,
    pub dir: PathBuf,
    /// Whether it names `dir` as its watched path (else it is asked on every discovery).
    pub watch: bool,
    pub calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl ListedDir {
    pub fn new(name: &'static str, dir: &Path) -> Self {
        ListedDir {
            name,
            dir: dir.to_path_buf(),
            watch: true,
            calls: Default::default(),
        }
    }

    pub fn calls(&self) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
        self.calls.clone()
    }
}

impl Locator for ListedDir {
    fn name(&self) -> &str {
        self.name
    }

    fn find(&self) -> Vec<Candidate> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<Candidate> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with("python"))
            })
            .map(|executable| Candidate {
                executable,
                version: None,
                source: Source::Custom(self.name.into()),
            })
            .collect();
        found.sort_by(|a, b| a.executable.cmp(&b.executable));
        found
    }

    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        self.watch.then(|| vec![self.dir.clone()])
    }
}
