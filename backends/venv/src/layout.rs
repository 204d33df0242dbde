//! Where things live inside a POSIX virtual environment, and which interpreters can have one.

use std::path::{Path, PathBuf};

use wsp_interpreters::InterpreterInfo;

use crate::VenvError;

/// The paths of one environment, derived from its root and its base interpreter.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The environment's root (absolute).
    pub root: PathBuf,
    /// `<root>/bin`.
    pub bin: PathBuf,
    /// `<root>/lib/python3.Y[t]/site-packages`.
    pub site_packages: PathBuf,
    /// `python3.Y`, the versioned executable name.
    pub versioned_exe: String,
    /// `python3.Yt` for a free-threaded build.
    pub free_threaded_exe: Option<String>,
}

impl Layout {
    /// The layout for `root` with `interpreter`; `root` is made absolute against the current
    /// directory when it is relative.
    pub fn new(root: &Path, interpreter: &InterpreterInfo) -> Result<Layout, VenvError> {
        let root = std::path::absolute(root).map_err(VenvError::io("resolve", root))?;
        check_text("environment root", &root)?;
        let version = &interpreter.version;
        let free_threaded = interpreter.abiflags.contains('t');
        let versioned_exe = format!("python{}.{}", version.major, version.minor);
        let site_packages = root
            .join("lib")
            .join(lib_python_dir(interpreter))
            .join("site-packages");
        Ok(Layout {
            bin: root.join("bin"),
            free_threaded_exe: free_threaded.then(|| format!("{versioned_exe}t")),
            root,
            site_packages,
            versioned_exe,
        })
    }

    /// The root as UTF-8 text (checked in [`Layout::new`]).
    pub fn root_text(&self) -> &str {
        self.root.to_str().unwrap_or_default()
    }

    /// `<root>/bin/python`.
    pub fn python(&self) -> PathBuf {
        self.bin.join("python")
    }
}

/// The name of `interpreter`'s directory under `lib/`: `python3.Y`, or `python3.Yt` for a
/// free-threaded build (in a venv, and in the interpreter's own prefix).
pub(crate) fn lib_python_dir(interpreter: &InterpreterInfo) -> String {
    let version = &interpreter.version;
    let suffix = if interpreter.abiflags.contains('t') {
        "t"
    } else {
        ""
    };
    format!("python{}.{}{suffix}", version.major, version.minor)
}

/// Whether `interpreter` can host a venv at all (CPython or another implementation, 3.3+).
pub(crate) fn check_venv_capable(interpreter: &InterpreterInfo) -> Result<(), VenvError> {
    let v = &interpreter.version;
    if (v.major, v.minor) < (3, 3) {
        return Err(unsupported(
            interpreter,
            "virtual environments (the `venv` module and `pyvenv.cfg`) need Python 3.3 or newer",
        ));
    }
    Ok(())
}

/// Whether the native writer knows this interpreter's layout (CPython only).
pub(crate) fn is_native_capable(interpreter: &InterpreterInfo) -> bool {
    interpreter.implementation.eq_ignore_ascii_case("cpython")
}

/// A [`VenvError::UnsupportedInterpreter`] for `interpreter`.
pub(crate) fn unsupported(interpreter: &InterpreterInfo, reason: &str) -> VenvError {
    VenvError::UnsupportedInterpreter {
        implementation: interpreter.implementation.clone(),
        version: interpreter.version.to_string(),
        reason: reason.to_owned(),
    }
}

/// Rejects paths that the text files of an environment (`pyvenv.cfg`, activate scripts)
/// cannot carry: non-UTF-8 ones and ones with control characters such as newlines.
pub(crate) fn check_text(what: &'static str, path: &Path) -> Result<(), VenvError> {
    let Some(text) = path.to_str() else {
        return Err(VenvError::InvalidInput {
            what,
            value: path.to_string_lossy().into_owned(),
            reason: "it is not valid UTF-8",
        });
    };
    check_no_control(what, text)
}

/// Rejects text with control characters (newlines would break `pyvenv.cfg` and the scripts).
pub(crate) fn check_no_control(what: &'static str, text: &str) -> Result<(), VenvError> {
    if text.chars().any(char::is_control) {
        return Err(VenvError::InvalidInput {
            what,
            value: text.to_owned(),
            reason: "it contains control characters",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsp_interpreters::PythonVersion;

    fn info(abiflags: &str) -> InterpreterInfo {
        InterpreterInfo {
            executable: PathBuf::from("/py/bin/python3.13t"),
            version: PythonVersion {
                major: 3,
                minor: 13,
                patch: 0,
            },
            base_prefix: PathBuf::from("/py"),
            base_exec_prefix: PathBuf::from("/py"),
            implementation: "cpython".to_owned(),
            abiflags: abiflags.to_owned(),
        }
    }

    #[test]
    fn free_threaded_builds_get_their_own_lib_dir_and_name() {
        let layout = Layout::new(Path::new("/e"), &info("t")).expect("layout");
        assert_eq!(
            layout.site_packages,
            Path::new("/e/lib/python3.13t/site-packages")
        );
        assert_eq!(layout.free_threaded_exe.as_deref(), Some("python3.13t"));
        let layout = Layout::new(Path::new("/e"), &info("")).expect("layout");
        assert_eq!(
            layout.site_packages,
            Path::new("/e/lib/python3.13/site-packages")
        );
        assert_eq!(layout.free_threaded_exe, None);
    }
}
