//! Where the inventory looks for interpreters, and how that is read from the environment.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::locators::{
    ConfiguredLocator, InstallsLocator, Locator, PathLocator, SystemLocator, UvLocator,
};

/// Where an [`Inventory`](super::Inventory) looks for interpreters.
///
/// Each field turns one built-in locator on (`Some`, or a non-empty list) or off; the default
/// searches nothing. [`with_locator`](Self::with_locator) adds sources of your own.
#[derive(Clone, Default)]
pub struct InventoryConfig {
    /// The pyenv root (`$PYENV_ROOT`, else `~/.pyenv` if it exists).
    pub pyenv_root: Option<PathBuf>,
    /// The search path for `python`, `python3` and `python3.N` (`$PATH`).
    pub path: Option<OsString>,
    /// Where uv installs interpreters (`$UV_PYTHON_INSTALL_DIR`, else
    /// `$XDG_DATA_HOME/uv/python`, else `~/.local/share/uv/python`).
    pub uv_python_dir: Option<PathBuf>,
    /// Where mise installs Python (`<data>/installs/python`, the data directory being
    /// `$MISE_DATA_DIR`, else `$XDG_DATA_HOME/mise`, else `~/.local/share/mise`).
    pub mise_python_dir: Option<PathBuf>,
    /// Where asdf installs Python (`<data>/installs/python`, the data directory being
    /// `$ASDF_DATA_DIR`, else `~/.asdf`).
    pub asdf_python_dir: Option<PathBuf>,
    /// System directories searched for `python3` and `python3.N`
    /// ([`SYSTEM_DIRS`](super::locators::SYSTEM_DIRS): `/usr/local/bin`, `/usr/bin`).
    pub system_dirs: Vec<PathBuf>,
    /// Interpreters named explicitly (`--python PATH`).
    pub extra_interpreters: Vec<PathBuf>,
    /// Locators added with [`with_locator`](Self::with_locator), run after the built-in ones
    /// in the order they were added.
    pub custom_locators: Vec<Arc<dyn Locator>>,
    /// The on-disk query cache (JSON); `None` keeps the cache in memory only.
    pub cache_file: Option<PathBuf>,
}

impl InventoryConfig {
    /// Reads `PYENV_ROOT`, `PATH`, `UV_PYTHON_INSTALL_DIR`, `MISE_DATA_DIR`, `ASDF_DATA_DIR`,
    /// `XDG_DATA_HOME` and `HOME` from this process's environment; see
    /// [`from_vars`](Self::from_vars).
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// The configuration `lookup` describes (it returns a variable's value, if set): each
    /// field as its documentation says, the system directories `/usr/local/bin` and
    /// `/usr/bin`. Relative paths are ignored, as if unset.
    ///
    /// `extra_interpreters` and `custom_locators` are empty and `cache_file` is `None`: the
    /// caller decides those.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<OsString>) -> Self {
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
        let data_home = absolute("XDG_DATA_HOME")
            .or_else(|| home.as_ref().map(|home| home.join(".local/share")));
        let uv_python_dir = absolute("UV_PYTHON_INSTALL_DIR")
            .or_else(|| data_home.as_ref().map(|data| data.join("uv/python")));
        let mise_python_dir = absolute("MISE_DATA_DIR")
            .or_else(|| data_home.as_ref().map(|data| data.join("mise")))
            .map(|data| data.join("installs/python"));
        let asdf_python_dir = absolute("ASDF_DATA_DIR")
            .or_else(|| home.as_ref().map(|home| home.join(".asdf")))
            .map(|data| data.join("installs/python"));
        InventoryConfig {
            pyenv_root,
            path: lookup("PATH"),
            uv_python_dir,
            mise_python_dir,
            asdf_python_dir,
            system_dirs: super::locators::SYSTEM_DIRS
                .iter()
                .map(PathBuf::from)
                .collect(),
            extra_interpreters: Vec::new(),
            custom_locators: Vec::new(),
            cache_file: None,
        }
    }

    /// This configuration with `locator` added after the built-in locators and any added
    /// before it.
    pub fn with_locator(mut self, locator: impl Locator + 'static) -> Self {
        self.custom_locators.push(Arc::new(locator));
        self
    }

    /// The locators an inventory over this configuration runs: the built-in ones that are
    /// on, in order of [`Source`](super::Source) preference, then the custom ones.
    pub fn locators(&self) -> Vec<Arc<dyn Locator>> {
        let mut locators: Vec<Arc<dyn Locator>> = Vec::new();
        if let Some(root) = &self.pyenv_root {
            locators.push(Arc::new(InstallsLocator::pyenv(root)));
        }
        if let Some(dir) = &self.uv_python_dir {
            locators.push(Arc::new(UvLocator::new(dir)));
        }
        if let Some(dir) = &self.mise_python_dir {
            locators.push(Arc::new(InstallsLocator::mise(dir)));
        }
        if let Some(dir) = &self.asdf_python_dir {
            locators.push(Arc::new(InstallsLocator::asdf(dir)));
        }
        if !self.extra_interpreters.is_empty() {
            locators.push(Arc::new(ConfiguredLocator::new(
                self.extra_interpreters.clone(),
                self.pyenv_root.clone(),
            )));
        }
        if !self.system_dirs.is_empty() {
            locators.push(Arc::new(SystemLocator::new(
                self.system_dirs.clone(),
                self.pyenv_root.clone(),
            )));
        }
        if let Some(search_path) = &self.path {
            locators.push(Arc::new(PathLocator::new(
                search_path.clone(),
                self.pyenv_root.clone(),
            )));
        }
        locators.extend(self.custom_locators.iter().cloned());
        locators
    }

    /// Whether `path` lies in this configuration's pyenv shims directory.
    pub(crate) fn in_pyenv_shims(&self, path: &Path) -> bool {
        self.pyenv_root
            .as_ref()
            .is_some_and(|root| path.starts_with(root.join("shims")))
    }
}

impl fmt::Debug for InventoryConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let custom: Vec<&str> = self.custom_locators.iter().map(|l| l.name()).collect();
        f.debug_struct("InventoryConfig")
            .field("pyenv_root", &self.pyenv_root)
            .field("path", &self.path)
            .field("uv_python_dir", &self.uv_python_dir)
            .field("mise_python_dir", &self.mise_python_dir)
            .field("asdf_python_dir", &self.asdf_python_dir)
            .field("system_dirs", &self.system_dirs)
            .field("extra_interpreters", &self.extra_interpreters)
            .field("custom_locators", &custom)
            .field("cache_file", &self.cache_file)
            .finish()
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
        InventoryConfig::from_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn explicit_variables_win() {
        let config = config_from(&[
            ("HOME", "/home/u"),
            ("PYENV_ROOT", "/opt/pyenv"),
            ("UV_PYTHON_INSTALL_DIR", "/opt/uv"),
            ("MISE_DATA_DIR", "/opt/mise"),
            ("ASDF_DATA_DIR", "/opt/asdf"),
            ("XDG_DATA_HOME", "/data"),
            ("PATH", "/bin"),
        ]);
        assert_eq!(config.pyenv_root, Some(PathBuf::from("/opt/pyenv")));
        assert_eq!(config.uv_python_dir, Some(PathBuf::from("/opt/uv")));
        assert_eq!(
            config.mise_python_dir,
            Some(PathBuf::from("/opt/mise/installs/python"))
        );
        assert_eq!(
            config.asdf_python_dir,
            Some(PathBuf::from("/opt/asdf/installs/python"))
        );
        assert_eq!(config.path, Some(OsString::from("/bin")));
        assert_eq!(
            config.system_dirs,
            [PathBuf::from("/usr/local/bin"), PathBuf::from("/usr/bin")]
        );
    }

    #[test]
    fn data_dirs_follow_xdg_then_home() {
        let xdg = config_from(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/data")]);
        assert_eq!(xdg.uv_python_dir, Some(PathBuf::from("/data/uv/python")));
        assert_eq!(
            xdg.mise_python_dir,
            Some(PathBuf::from("/data/mise/installs/python"))
        );
        assert_eq!(
            xdg.asdf_python_dir,
            Some(PathBuf::from("/home/u/.asdf/installs/python"))
        );
        let home = config_from(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "relative")]);
        assert_eq!(
            home.uv_python_dir,
            Some(PathBuf::from("/home/u/.local/share/uv/python"))
        );
        assert_eq!(
            home.mise_python_dir,
            Some(PathBuf::from("/home/u/.local/share/mise/installs/python"))
        );
        let nothing = config_from(&[("MISE_DATA_DIR", "relative")]);
        assert_eq!(nothing.uv_python_dir, None);
        assert_eq!(nothing.mise_python_dir, None);
        assert_eq!(nothing.asdf_python_dir, None);
    }

    #[test]
    fn missing_home_pyenv_is_not_assumed() {
        let config = config_from(&[("HOME", "/nonexistent-home-for-wsp-test")]);
        assert_eq!(config.pyenv_root, None);
    }

    #[test]
    fn the_default_runs_no_locator_and_custom_ones_come_last() {
        assert!(InventoryConfig::default().locators().is_empty());
        let config = InventoryConfig {
            pyenv_root: Some("/p".into()),
            path: Some("/bin".into()),
            system_dirs: vec!["/usr/bin".into()],
            ..InventoryConfig::default()
        }
        .with_locator(UvLocator::new("/second-uv"));
        let names: Vec<String> = config
            .locators()
            .iter()
            .map(|l| l.name().to_owned())
            .collect();
        assert_eq!(names, ["pyenv", "system", "PATH", "uv"]);
        assert!(format!("{config:?}").contains("custom_locators: [\"uv\"]"));
    }
}
