//! Where the inventory looks for interpreters, and how that is read from the environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where an [`Inventory`](super::Inventory) looks for interpreters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InventoryConfig {
    /// The pyenv root (`$PYENV_ROOT`, else `~/.pyenv` if it exists).
    pub pyenv_root: Option<PathBuf>,
    /// The search path for `python`, `python3` and `python3.N` (`$PATH`).
    pub path: Option<OsString>,
    /// Where uv installs interpreters (`$UV_PYTHON_INSTALL_DIR`, else
    /// `$XDG_DATA_HOME/uv/python`, else `~/.local/share/uv/python`).
    pub uv_python_dir: Option<PathBuf>,
    /// Interpreters named explicitly (`--python PATH`).
    pub extra_interpreters: Vec<PathBuf>,
    /// The on-disk query cache (JSON); `None` keeps the cache in memory only.
    pub cache_file: Option<PathBuf>,
}

impl InventoryConfig {
    /// Reads `PYENV_ROOT`, `PATH`, `UV_PYTHON_INSTALL_DIR`, `XDG_DATA_HOME` and `HOME`.
    ///
    /// `extra_interpreters` is empty and `cache_file` is `None`: the caller decides those.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Self {
        let absolute = |name: &str| {
            lookup(name)
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
        };
        let home = absolute("HOME");
        let pyenv_root = absolute("PYENV_ROOT").or_else(|| {
            home.as_ref()
                .map(|home| home.join(".pyenv"))
                .filter(|root| root.is_dir())
        });
        let uv_python_dir = absolute("UV_PYTHON_INSTALL_DIR").or_else(|| {
            absolute("XDG_DATA_HOME")
                .or_else(|| home.as_deref().map(|home| home.join(".local/share")))
                .map(|data: PathBuf| data.join("uv/python"))
        });
        InventoryConfig {
            pyenv_root,
            path: lookup("PATH"),
            uv_python_dir,
            extra_interpreters: Vec::new(),
            cache_file: None,
        }
    }

    /// Whether `path` lies in this configuration's pyenv shims directory.
    pub(crate) fn in_pyenv_shims(&self, path: &Path) -> bool {
        self.pyenv_root
            .as_ref()
            .is_some_and(|root| path.starts_with(root.join("shims")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config_from(vars: &[(&str, &str)]) -> InventoryConfig {
        let vars: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        InventoryConfig::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn explicit_variables_win() {
        let config = config_from(&[
            ("HOME", "/home/u"),
            ("PYENV_ROOT", "/opt/pyenv"),
            ("UV_PYTHON_INSTALL_DIR", "/opt/uv"),
            ("XDG_DATA_HOME", "/data"),
            ("PATH", "/bin"),
        ]);
        assert_eq!(config.pyenv_root, Some(PathBuf::from("/opt/pyenv")));
        assert_eq!(config.uv_python_dir, Some(PathBuf::from("/opt/uv")));
        assert_eq!(config.path, Some(OsString::from("/bin")));
    }

    #[test]
    fn uv_dir_follows_xdg_then_home() {
        let xdg = config_from(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")]);
        assert_eq!(xdg.uv_python_dir, Some(PathBuf::from("/data/uv/python")));
        let home = config_from(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "relative")]);
        assert_eq!(
            home.uv_python_dir,
            Some(PathBuf::from("/home/u/.local/share/uv/python"))
        );
        assert_eq!(config_from(&[]).uv_python_dir, None);
    }

    #[test]
    fn missing_home_pyenv_is_not_assumed() {
        let config = config_from(&[("HOME", "/nonexistent-home-for-wsp-test")]);
        assert_eq!(config.pyenv_root, None);
    }
}
