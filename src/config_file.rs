//! `wsp.toml` in the state directory: options of `wsp serve` kept in a file, so that each is
//! given once rather than to every server started on that directory. Options given on the
//! command line win over the file; the file wins over the defaults.
//!
//! ```toml
//! backend = "venv"                      # --backend
//! python = ["/opt/python3.12/bin/python3.12"]   # --python, repeatable
//! python_downloads = false              # --python-downloads
//!
//! [venv]
//! stdlib = false                        # --stdlib-venv
//! seed_pip = false                      # --seed-pip
//!
//! [uv]
//! path = "/usr/local/bin/uv"            # --uv
//!
//! [conda]
//! channels = ["conda-forge"]            # --channel, repeatable
//!
//! [install]
//! find_links = ["/srv/wheels"]          # --find-links, repeatable
//! index_url = "https://pypi.org/simple" # --index-url
//! no_index = false                      # --no-index
//! ```
//!
//! A key the file does not know is refused at startup, named with its line. A relative path
//! is taken from the state directory.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cli::serve_args::BackendArg;
use crate::config::ServeConfig;

/// The file's name in the state directory.
pub const FILE_NAME: &str = "wsp.toml";

/// `wsp.toml`, as read.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    backend: Option<BackendArg>,
    #[serde(default)]
    python: Vec<PathBuf>,
    python_downloads: Option<bool>,
    #[serde(default)]
    venv: VenvSection,
    #[serde(default)]
    uv: UvSection,
    #[serde(default)]
    conda: CondaSection,
    #[serde(default)]
    install: InstallSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VenvSection {
    stdlib: Option<bool>,
    seed_pip: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UvSection {
    path: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CondaSection {
    #[serde(default)]
    channels: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct InstallSection {
    #[serde(default)]
    find_links: Vec<String>,
    index_url: Option<String>,
    no_index: Option<bool>,
}

/// Why `wsp.toml` could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ConfigFileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, with the line when the parser knows it.
    pub message: String,
}

impl ConfigFile {
    /// The file in `state_dir`, or the defaults when there is none.
    pub fn load(state_dir: &Path) -> Result<ConfigFile, ConfigFileError> {
        let path = state_dir.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ConfigFile::default())
            }
            Err(error) => {
                return Err(ConfigFileError {
                    path,
                    message: error.to_string(),
                })
            }
        };
        let mut file: ConfigFile = toml::from_str(&text).map_err(|error| ConfigFileError {
            path: path.clone(),
            message: error.to_string().trim_end().to_owned(),
        })?;
        file.anchor_paths(state_dir);
        Ok(file)
    }

    /// Relative paths taken from `state_dir`.
    fn anchor_paths(&mut self, state_dir: &Path) {
        let anchored = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = state_dir.join(&*path);
            }
        };
        self.python.iter_mut().for_each(anchored);
        if let Some(uv) = &mut self.uv.path {
            anchored(uv);
        }
        for link in &mut self.install.find_links {
            if !link.contains("://") && Path::new(link).is_relative() {
                *link = state_dir.join(&*link).display().to_string();
            }
        }
    }

    /// The configuration of the state directory `state_dir` (see [`crate::serve::state_dir`]):
    /// its file's options over the defaults; the defaults when there is no state directory.
    pub fn config_in(state_dir: Option<&Path>) -> Result<ServeConfig, ConfigFileError> {
        match state_dir {
            Some(dir) => Ok(ConfigFile::load(dir)?.over_defaults()),
            None => Ok(ServeConfig::default()),
        }
    }

    /// The defaults with this file's options over them.
    pub fn over_defaults(self) -> ServeConfig {
        let mut config = ServeConfig::default();
        if let Some(backend) = self.backend {
            config.backend = backend.into();
        }
        config.interpreters = self.python;
        config.python_downloads = self.python_downloads.unwrap_or_default();
        config.stdlib_venv = self.venv.stdlib.unwrap_or_default();
        config.seed_pip = self.venv.seed_pip.unwrap_or_default();
        config.uv = self.uv.path;
        config.channels = self.conda.channels;
        config.install_source = wsp_install::InstallSource {
            find_links: self.install.find_links,
            index_url: self.install.index_url,
            no_index: self.install.no_index.unwrap_or_default(),
        };
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BackendKind;

    #[test]
    fn every_option_is_read_and_relative_paths_are_taken_from_the_state_directory() {
        let state = tempfile::tempdir().unwrap();
        let text = "backend = \"conda\"\npython = [\"bin/python3\"]\npython_downloads = true\n\
                    [venv]\nstdlib = true\nseed_pip = true\n[uv]\npath = \"/opt/uv\"\n\
                    [conda]\nchannels = [\"https://example.org/c\"]\n\
                    [install]\nfind_links = [\"wheels\", \"https://example.org/w\"]\n\
                    index_url = \"https://example.org/simple\"\nno_index = true\n";
        std::fs::write(state.path().join(FILE_NAME), text).unwrap();
        let config = ConfigFile::load(state.path()).unwrap().over_defaults();
        assert_eq!(config.backend, BackendKind::Conda);
        assert_eq!(config.interpreters, [state.path().join("bin/python3")]);
        assert!(config.python_downloads && config.stdlib_venv && config.seed_pip);
        assert_eq!(config.uv, Some(PathBuf::from("/opt/uv")));
        assert_eq!(config.channels, ["https://example.org/c"]);
        let wheels = state.path().join("wheels").display().to_string();
        assert_eq!(
            config.install_source.find_links,
            [wheels.as_str(), "https://example.org/w"]
        );
        assert!(config.install_source.no_index);
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let state = tempfile::tempdir().unwrap();
        let text = "backend = \"uv\"\n\n[conda]\nchanels = [\"x\"]\n";
        std::fs::write(state.path().join(FILE_NAME), text).unwrap();
        let error = ConfigFile::load(state.path()).unwrap_err().to_string();
        assert!(error.contains("line 4"), "{error}");
        assert!(error.contains("chanels"), "{error}");
        assert!(ConfigFile::load(&state.path().join("none")).is_ok());
    }
}
