//! What activating an environment adds to a command's environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What activating an environment adds to a child's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    /// The environment's root.
    pub root: PathBuf,
    /// The directory holding the environment's executables; put first on `PATH` and searched
    /// first for a bare `argv[0]`.
    pub bin_dir: PathBuf,
    /// Variables the activation sets, such as `VIRTUAL_ENV` or `CONDA_PREFIX`.
    pub vars: Vec<(String, String)>,
}

impl Activation {
    /// The activation of a virtual environment: `VIRTUAL_ENV=<root>`, `<root>/bin`.
    pub fn venv(root: &Path) -> Self {
        Self::with_var(root, "VIRTUAL_ENV")
    }

    /// The activation of a conda environment: `CONDA_PREFIX=<root>`, `<root>/bin`.
    pub fn conda(root: &Path) -> Self {
        Self::with_var(root, "CONDA_PREFIX")
    }

    fn with_var(root: &Path, var: &str) -> Self {
        Activation {
            root: root.to_path_buf(),
            bin_dir: root.join("bin"),
            vars: vec![(var.to_owned(), root.to_string_lossy().into_owned())],
        }
    }
}

/// The child's `PATH`: the request's own `PATH` if it sets one, else the activation's bin
/// directory followed by this process's `PATH`.
pub(super) fn child_path(activation: &Activation, env: &BTreeMap<String, String>) -> OsString {
    if let Some(path) = env.get("PATH") {
        return OsString::from(path);
    }
    let mut dirs = vec![activation.bin_dir.clone()];
    if let Some(inherited) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&inherited));
    }
    // Joining fails only for a directory containing `:`; then the bin directory is put in
    // front textually, which is what a shell's activation script does as well.
    std::env::join_paths(&dirs).unwrap_or_else(|_| {
        let mut path = activation.bin_dir.clone().into_os_string();
        if let Some(inherited) = std::env::var_os("PATH") {
            path.push(":");
            path.push(inherited);
        }
        path
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activations_set_their_variable_and_bin_dir() {
        let root = Path::new("/opt/envs/x");
        let conda = Activation::conda(root);
        assert_eq!(conda.bin_dir, root.join("bin"));
        let expected = vec![("CONDA_PREFIX".to_owned(), "/opt/envs/x".to_owned())];
        assert_eq!(conda.vars, expected);
        let venv = Activation::venv(root);
        assert_eq!(venv.bin_dir, root.join("bin"));
        assert_eq!(venv.vars[0].0, "VIRTUAL_ENV");
    }
}
