//! The installer's command lines.

use std::path::{Path, PathBuf};

use super::steps::StepKind;
use super::InstallRequest;

/// The script, relative to the directory holding the `pip` package, that runs pip under
/// another interpreter (pip 22.3 and newer).
pub const PIP_RUNNER: &str = "pip/__pip-runner__.py";

/// Which program installs packages into a venv-layout environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installer {
    /// `uv pip install --python <interpreter>`, with this `uv`.
    Uv(PathBuf),
    /// The environment's own pip: `<interpreter> -m pip install`.
    Pip,
    /// A pip kept outside the environment, where `dir` holds the `pip` package (pip 22.3 or
    /// newer): `<interpreter> <dir>/pip/__pip-runner__.py install`. That script is what
    /// `pip --python <interpreter>` runs under the other interpreter: it imports pip from
    /// `dir` without putting `dir` on `sys.path`, so pip sees and changes only the
    /// environment's distributions. Running it directly saves the outer pip's start (0.6 s).
    /// The environment needs no pip and gets none.
    ExternalPip(PathBuf),
}

impl Installer {
    /// uv when one is found (`configured`, else the first on `PATH`), else pip.
    pub fn detect(configured: Option<PathBuf>) -> Installer {
        match find_uv(configured) {
            Ok(uv) => Installer::Uv(uv),
            Err(reason) => {
                tracing::debug!("installing with pip: {reason}");
                Installer::Pip
            }
        }
    }

    /// Its name, for an environment's `extra` and for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Installer::Uv(_) => "uv",
            Installer::Pip | Installer::ExternalPip(_) => "pip",
        }
    }

    pub(super) fn steps(&self) -> StepKind {
        match self {
            Installer::Uv(_) => StepKind::Uv,
            Installer::Pip | Installer::ExternalPip(_) => StepKind::Pip,
        }
    }

    /// The command line that installs `request.packages` for `python`.
    pub(super) fn install_argv(&self, python: &Path, request: &InstallRequest) -> Vec<String> {
        let confined = request.sandbox.is_some();
        let mut argv = self.install_options(python, &request.source, confined);
        if request.upgrade {
            argv.push("--upgrade".to_owned());
        }
        argv.push("--".to_owned());
        argv.extend(request.packages.iter().cloned());
        argv
    }

    /// The command line that installs the requirements file `requirements` (an install from a
    /// lock) for `python`: without dependencies, and with `--require-hashes` when `hashes`.
    pub(super) fn lock_install_argv(
        &self,
        python: &Path,
        requirements: &Path,
        source: &crate::InstallSource,
        hashes: bool,
        confined: bool,
    ) -> Vec<String> {
        let mut argv = self.install_options(python, source, confined);
        argv.push("--no-deps".to_owned());
        if hashes {
            argv.push("--require-hashes".to_owned());
        }
        argv.extend(["-r".to_owned(), requirements.to_string_lossy().into_owned()]);
        argv
    }

    /// The command line that reports, installing nothing, the files `index` offers for the
    /// pins in `requirements` for `python`, and the file pip writes its report to (none for uv,
    /// which prints it):
    /// - uv: `pip compile --no-deps --format pylock.toml`, every file of each version;
    /// - pip: `install --dry-run --ignore-installed --no-deps --report`, the wheel it would
    ///   install (`--only-binary :all:`, so that no package's build runs).
    pub(super) fn index_report(
        &self,
        python: &Path,
        index: &str,
        requirements: &Path,
    ) -> std::io::Result<(Vec<String>, Option<tempfile::NamedTempFile>)> {
        let index = format!("--index-url={index}");
        let requirements = requirements.to_string_lossy().into_owned();
        if !self.is_pip() {
            let mut argv = self.unconfined_prefix(python, "compile");
            argv.extend(["--no-deps", "--quiet", "--format", "pylock.toml"].map(String::from));
            argv.extend([index, requirements]);
            return Ok((argv, None));
        }
        let report = tempfile::Builder::new()
            .prefix("wsp-lock-report-")
            .suffix(".json")
            .tempfile()?;
        let mut argv = self.unconfined_prefix(python, "install");
        argv.extend(
            [
                "--no-input",
                "--quiet",
                "--dry-run",
                "--ignore-installed",
                "--no-deps",
                "--only-binary",
                ":all:",
                // One retry, not pip's five with back-off: an index that is down costs the
                // lock a second or two, not ten.
                "--retries",
                "1",
                "--report",
            ]
            .map(String::from),
        );
        argv.push(report.path().to_string_lossy().into_owned());
        argv.extend([index, "-r".to_owned(), requirements]);
        Ok((argv, Some(report)))
    }

    /// An install's command line up to what it installs: the installer, pip's quiet flags and
    /// where packages come from.
    fn install_options(
        &self,
        python: &Path,
        source: &crate::InstallSource,
        confined: bool,
    ) -> Vec<String> {
        let mut argv = self.prefix(python, "install", confined);
        if self.is_pip() {
            argv.extend(["--no-input", "--progress-bar", "off"].map(String::from));
        }
        for link in &source.find_links {
            argv.extend(["--find-links".to_owned(), link.clone()]);
        }
        if let Some(url) = &source.index_url {
            argv.extend(["--index-url".to_owned(), url.clone()]);
        }
        if source.no_index {
            argv.push("--no-index".to_owned());
        }
        argv
    }

    /// The command line that uninstalls `names` for `python` (with no cache when `confined`).
    pub(super) fn uninstall_argv(
        &self,
        python: &Path,
        names: &[String],
        confined: bool,
    ) -> Vec<String> {
        let mut argv = self.prefix(python, "uninstall", confined);
        if self.is_pip() {
            argv.push("--yes".to_owned());
        }
        argv.push("--".to_owned());
        argv.extend(names.iter().cloned());
        argv
    }

    /// The command line that makes the installer look at `python` and remember what it saw,
    /// changing nothing: `uv pip list --quiet` (uv caches what it learns of an interpreter,
    /// by path, until the interpreter changes). `None`: pip keeps nothing between runs.
    pub(super) fn look_argv(&self, python: &Path) -> Option<Vec<String>> {
        match self {
            Installer::Uv(_) => {
                let mut argv = self.unconfined_prefix(python, "list");
                argv.push("--quiet".to_owned());
                Some(argv)
            }
            Installer::Pip | Installer::ExternalPip(_) => None,
        }
    }

    /// `uv pip <verb> --python <python> --no-config` or
    /// `<python> -m pip <verb> --isolated --disable-pip-version-check`: neither reads the
    /// server user's configuration files or (for pip) `PIP_*` variables, so every install is
    /// configured by its request and the server's options alone. A `confined` installer uses
    /// no cache (`--no-cache`, `--no-cache-dir`): see [`super::install_sandbox`].
    fn prefix(&self, python: &Path, verb: &str, confined: bool) -> Vec<String> {
        let mut argv = self.unconfined_prefix(python, verb);
        if confined {
            argv.push(match self {
                Installer::Uv(_) => "--no-cache".to_owned(),
                Installer::Pip | Installer::ExternalPip(_) => "--no-cache-dir".to_owned(),
            });
        }
        argv
    }

    pub(super) fn is_pip(&self) -> bool {
        matches!(self, Installer::Pip | Installer::ExternalPip(_))
    }

    fn unconfined_prefix(&self, python: &Path, verb: &str) -> Vec<String> {
        let python = python.to_string_lossy().into_owned();
        let pip_options = ["--isolated", "--disable-pip-version-check"].map(String::from);
        match self {
            Installer::Uv(uv) => vec![
                uv.to_string_lossy().into_owned(),
                "pip".to_owned(),
                verb.to_owned(),
                "--python".to_owned(),
                python,
                "--no-config".to_owned(),
            ],
            Installer::Pip => [python, "-m".to_owned(), "pip".to_owned(), verb.to_owned()]
                .into_iter()
                .chain(pip_options)
                .collect(),
            Installer::ExternalPip(dir) => [
                python,
                dir.join(PIP_RUNNER).to_string_lossy().into_owned(),
                verb.to_owned(),
            ]
            .into_iter()
            .chain(pip_options)
            .collect(),
        }
    }
}

/// `configured` if it is an executable file, else the first `uv` on `PATH`.
pub fn find_uv(configured: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = configured {
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(format!("--uv {} is not an executable file", path.display()))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("uv"))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            "no `uv` on PATH; install it (`pip install uv`) or pass --uv PATH".to_owned()
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InstallSource;

    fn request(upgrade: bool) -> InstallRequest {
        InstallRequest {
            root: "/env".into(),
            environment_id: "env-000000000000".into(),
            packages: vec!["demo==1.0".into(), "other".into()],
            source: InstallSource {
                find_links: vec!["/wheels".into()],
                index_url: Some("http://127.0.0.1:1/simple".into()),
                no_index: true,
            },
            upgrade,
            progress: None,
            sandbox: None,
        }
    }

    #[test]
    fn uv_and_pip_get_the_same_options() {
        let python = Path::new("/env/bin/python");
        let uv = Installer::Uv("/bin/uv".into()).install_argv(python, &request(true));
        assert_eq!(
            uv.join(" "),
            "/bin/uv pip install --python /env/bin/python --no-config --find-links /wheels \
             --index-url http://127.0.0.1:1/simple --no-index --upgrade -- demo==1.0 other"
        );
        let pip = Installer::Pip.install_argv(python, &request(false));
        assert_eq!(
            pip.join(" "),
            "/env/bin/python -m pip install --isolated --disable-pip-version-check --no-input \
             --progress-bar off --find-links /wheels --index-url http://127.0.0.1:1/simple \
             --no-index -- demo==1.0 other"
        );
        let names = ["x".to_owned()];
        assert_eq!(
            Installer::Pip
                .uninstall_argv(python, &names, false)
                .join(" "),
            "/env/bin/python -m pip uninstall --isolated --disable-pip-version-check --yes -- x"
        );
        let external = Installer::ExternalPip("/cache/site-packages".into());
        assert_eq!(
            external.uninstall_argv(python, &names, true).join(" "),
            "/env/bin/python /cache/site-packages/pip/__pip-runner__.py uninstall --isolated \
             --disable-pip-version-check --no-cache-dir --yes -- x"
        );
    }
}
