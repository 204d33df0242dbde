//! Local conda channels for tests and demos, built without a network or a conda installation.
//!
//! [`build_local_channel`] writes a channel directory holding one small `python` package per
//! [`PythonBuild`]. Each package wraps an interpreter already on this machine (such as a
//! pyenv one) the way a virtual environment does:
//!
//! - `bin/pythonX.Y` is a symlink to the interpreter, `bin/python3` and `bin/python` are
//!   symlinks to `pythonX.Y`;
//! - `pyvenv.cfg` names the interpreter's directory as `home`, so that Python started from the
//!   prefix reports the prefix as `sys.prefix` and uses the prefix's
//!   `lib/pythonX.Y/site-packages` (CPython 3.3 and later honour `pyvenv.cfg`; a 2.7 build
//!   runs, but reports its own installation as `sys.prefix`);
//! - `lib/pythonX.Y/site-packages/README` makes that directory exist.
//!
//! [`build_local_channel_with`] adds `noarch: python` packages ([`CondaPackage`]), whose
//! modules rattler links into the prefix's site-packages; [`CondaPackage::raw_file`] adds files
//! at any path `info/paths.json` can name, hostile ones included, to test what refuses them.
//!
//! Packages are `.tar.bz2` archives with `info/index.json`, `info/paths.json` and
//! `info/files`, named `python-X.Y.Z-0.tar.bz2` (build string `0`), in the subdir of this
//! machine's platform (`linux-64` on x86-64 Linux). The channel has that subdir and `noarch`,
//! each with a `repodata.json`.
//!
//! ```no_run
//! use wsp_testing::conda::{build_local_channel, PythonBuild};
//!
//! let builds = [PythonBuild::from_pyenv("3.12.1").expect("pyenv has 3.12.1")];
//! let url = build_local_channel("/tmp/channel".as_ref(), &builds).expect("channel");
//! // `url` is `file:///tmp/channel/`: pass it as a channel of `CondaConfig`.
//! ```

mod noarch;
mod package;
mod repodata;
mod staging;

use std::path::{Path, PathBuf};

use rattler_conda_types::Subdir;
use url::Url;

/// The build string of every package [`build_local_channel`] writes.
pub const BUILD_STRING: &str = "0";

/// One `python` package to put in a local channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonBuild {
    /// The package's version, `X.Y.Z`; it should be the interpreter's own version.
    pub version: String,
    /// The interpreter the package's `bin/pythonX.Y` links to: an absolute path to a real
    /// CPython executable (not a shim).
    pub interpreter: PathBuf,
}

impl PythonBuild {
    /// A build of `version` (`X.Y.Z`) over `interpreter`.
    pub fn new(version: impl Into<String>, interpreter: impl Into<PathBuf>) -> Self {
        PythonBuild {
            version: version.into(),
            interpreter: interpreter.into(),
        }
    }

    /// A build over pyenv's interpreter of `version` (`X.Y.Z`):
    /// `<pyenv root>/versions/X.Y.Z/bin/pythonX.Y`, when that file exists.
    pub fn from_pyenv(version: &str) -> Option<Self> {
        let (major_minor, _) = version.rsplit_once('.')?;
        let interpreter = pyenv_root()?
            .join("versions")
            .join(version)
            .join("bin")
            .join(format!("python{major_minor}"));
        interpreter
            .is_file()
            .then(|| PythonBuild::new(version, interpreter))
    }

    /// `X.Y` of the version, or `None` if the version is not `X.Y.Z` digits.
    pub fn major_minor(&self) -> Option<&str> {
        let parts: Vec<&str> = self.version.split('.').collect();
        let valid = parts.len() == 3
            && parts
                .iter()
                .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
        valid
            .then(|| self.version.rsplit_once('.'))
            .flatten()
            .map(|(major_minor, _)| major_minor)
    }
}

/// pyenv's root: `$PYENV_ROOT`, else `~/.pyenv`.
pub fn pyenv_root() -> Option<PathBuf> {
    if let Some(root) = std::env::var_os("PYENV_ROOT").filter(|root| !root.is_empty()) {
        return Some(PathBuf::from(root));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv"))
}

/// Why a local channel could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ChannelBuildError {
    /// A build's version is not `X.Y.Z`.
    #[error("`{0}` is not an X.Y.Z version")]
    InvalidVersion(String),
    /// Two builds have the same version.
    #[error("python {0} is listed twice")]
    DuplicateVersion(String),
    /// This machine's conda platform is unknown.
    #[error("this machine's conda platform is unknown")]
    UnknownPlatform,
    /// Reading or writing a file failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Package metadata could not be turned into a repodata record.
    #[error("building the repodata record of {package}: {detail}")]
    Record {
        /// The package's file name.
        package: String,
        /// What went wrong.
        detail: String,
    },
}

impl ChannelBuildError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| ChannelBuildError::Io { context, source }
    }
}

/// A `noarch: python` package to put in a local channel: Python files linked into the
/// prefix's site-packages, depending on `python` and on `depends`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CondaPackage {
    /// The package's name (conda names are lowercase).
    pub name: String,
    /// Its version.
    pub version: String,
    /// Match specs of what it needs besides `python`.
    pub depends: Vec<String>,
    /// More files, each at a path written verbatim into `info/paths.json` (which may be a
    /// hostile one: absolute, with `..`, or under `conda-meta/`), with its contents.
    pub raw_files: Vec<(String, String)>,
}

impl CondaPackage {
    /// `name` at `version`, holding the module [`CondaPackage::module`] whose `VERSION` is
    /// the version.
    pub fn new(name: &str, version: &str) -> Self {
        CondaPackage {
            name: name.to_owned(),
            version: version.to_owned(),
            depends: Vec::new(),
            raw_files: Vec::new(),
        }
    }

    /// Adds a file at `path`, exactly as `info/paths.json` will name it. A path that is not a
    /// plain relative one (absolute, with `.` or `..` parts) is listed in `paths.json` but its
    /// contents are packed under `raw/` in the archive, never outside the staging directory.
    pub fn raw_file(mut self, path: &str, contents: &str) -> Self {
        self.raw_files.push((path.to_owned(), contents.to_owned()));
        self
    }

    /// Adds a dependency (a match spec).
    pub fn depends(mut self, spec: &str) -> Self {
        self.depends.push(spec.to_owned());
        self
    }

    /// The module it holds: the name with `-` as `_`.
    pub fn module(&self) -> String {
        self.name.replace('-', "_")
    }

    /// The files under `site-packages/`: `<module>.py`.
    pub(crate) fn files(&self) -> Vec<(String, String)> {
        let module = format!("{}.py", self.module());
        vec![(module, format!("VERSION = {:?}\n", self.version))]
    }
}

/// Builds a local channel in `dir` (created if missing) with one `python` package per build,
/// for this machine's platform, and returns the channel's `file://` URL.
///
/// Packages and repodata already in `dir` for the same platform are replaced.
pub fn build_local_channel(dir: &Path, builds: &[PythonBuild]) -> Result<Url, ChannelBuildError> {
    build_local_channel_with(dir, builds, &[])
}

/// [`build_local_channel`] with `packages` in its `noarch` subdir as well.
pub fn build_local_channel_with(
    dir: &Path,
    builds: &[PythonBuild],
    packages: &[CondaPackage],
) -> Result<Url, ChannelBuildError> {
    let subdir = Subdir::current().ok_or(ChannelBuildError::UnknownPlatform)?;
    let mut versions: Vec<&str> = Vec::new();
    for build in builds {
        if build.major_minor().is_none() {
            return Err(ChannelBuildError::InvalidVersion(build.version.clone()));
        }
        if versions.contains(&build.version.as_str()) {
            return Err(ChannelBuildError::DuplicateVersion(build.version.clone()));
        }
        versions.push(&build.version);
    }

    std::fs::create_dir_all(dir)
        .map_err(ChannelBuildError::io(format!("creating {}", dir.display())))?;
    let dir = dir.canonicalize().map_err(ChannelBuildError::io(format!(
        "resolving {}",
        dir.display()
    )))?;
    let subdir_dir = dir.join(subdir.as_str());
    std::fs::create_dir_all(&subdir_dir).map_err(ChannelBuildError::io(format!(
        "creating {}",
        subdir_dir.display()
    )))?;

    let mut records = Vec::new();
    for build in builds {
        records.push(package::write_python_package(
            &dir,
            &subdir_dir,
            subdir,
            build,
        )?);
    }
    repodata::write(&subdir_dir, subdir.as_str(), &records)?;
    let noarch_dir = dir.join(Subdir::NoArch.as_str());
    std::fs::create_dir_all(&noarch_dir).map_err(ChannelBuildError::io(format!(
        "creating {}",
        noarch_dir.display()
    )))?;
    let mut noarch_records = Vec::new();
    for package in packages {
        noarch_records.push(noarch::write_noarch_package(&dir, &noarch_dir, package)?);
    }
    repodata::write(&noarch_dir, Subdir::NoArch.as_str(), &noarch_records)?;

    Url::from_directory_path(&dir).map_err(|()| ChannelBuildError::Io {
        context: format!("turning {} into a URL", dir.display()),
        source: std::io::Error::other("not an absolute path"),
    })
}
