//! The venv environment backend of WSP: virtual environments over local interpreters.
//!
//! [`create_venv`] writes a CPython virtual environment itself ([`VenvMode::Native`], no Python
//! process, a few milliseconds) or has the interpreter's `venv` module do it
//! ([`VenvMode::Stdlib`]). With [`VenvOptions::seed_pip`] it also installs pip, from a per
//! interpreter cache that `ensurepip` fills once; without it, `bin/pip` is a stub that refuses
//! (see [`wsp_install::write_pip_stubs`]), so `pip` never reaches the host's pip further along
//! `PATH`. [`VenvBackend`] is the WSP backend that provisions environments with it, and
//! installs with the cached pip run from outside the environment when there is no uv.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod activate;
mod backend;
mod error;
mod install;
mod layout;
mod native;
mod process;
mod pyvenv_cfg;
mod relabel;
mod seed;
mod stdlib;

use std::path::{Path, PathBuf};

use wsp_interpreters::InterpreterInfo;

pub use backend::VenvBackend;
pub use error::VenvError;
pub use seed::SeedOutcome;
pub use wsp_install::venv_layout::interpreter_path;

/// How [`create_venv`] builds an environment.
#[derive(Debug, Clone, Default)]
pub struct VenvOptions {
    /// Who writes the environment's files.
    pub mode: VenvMode,
    /// Whether to install pip (and, on Pythons before 3.12, the setuptools that `ensurepip`
    /// brings along) into the environment.
    pub seed_pip: bool,
    /// Where pip seeds are cached between creates, and where [`VenvBackend`] takes the pip it
    /// installs with when there is no uv. `None` runs `ensurepip` in every seeded environment
    /// (seconds each), and gives the backend a temporary cache of its own.
    pub seed_cache_dir: Option<PathBuf>,
    /// The prompt shown by the activation scripts; default: the root's directory name.
    pub prompt: Option<String>,
}

/// Who writes an environment's files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VenvMode {
    /// Written by this crate, without running Python. Implementations other than CPython,
    /// whose layouts differ, fall back to [`VenvMode::Stdlib`].
    #[default]
    Native,
    /// Written by `python -m venv --without-pip`, the interpreter's own `venv` module.
    Stdlib,
}

/// A freshly created environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedVenv {
    /// `<root>/bin/python`, absolute.
    pub interpreter_path: PathBuf,
    /// How pip was installed, when it was asked for.
    pub seed: Option<SeedOutcome>,
}

/// Creates a virtual environment at `root` (created if missing; meant to be empty) over the
/// base `interpreter`.
///
/// On error the directory may hold part of an environment; the caller removes it.
pub async fn create_venv(
    root: &Path,
    interpreter: &InterpreterInfo,
    options: &VenvOptions,
) -> Result<CreatedVenv, VenvError> {
    layout::check_venv_capable(interpreter)?;
    if let Some(prompt) = &options.prompt {
        layout::check_no_control("prompt", prompt)?;
    }
    let layout = layout::Layout::new(root, interpreter)?;
    let prompt = options.prompt.as_deref();
    let pip_stubs = !options.seed_pip;
    write_environment(&layout, interpreter, options.mode, prompt, pip_stubs).await?;
    let seed = if options.seed_pip {
        let cache = options.seed_cache_dir.as_deref();
        Some(seed::seed(&layout, interpreter, options.mode, cache).await?)
    } else {
        None
    };
    Ok(CreatedVenv {
        interpreter_path: layout.python(),
        seed,
    })
}

/// Writes the environment's files (everything but pip) the way `mode` says, and with
/// `pip_stubs` the stubs for the pip commands (see [`wsp_install::write_pip_stubs`]). File
/// work runs on the blocking pool, the native writer's and the stubs' in one task.
pub(crate) async fn write_environment(
    layout: &layout::Layout,
    interpreter: &InterpreterInfo,
    mode: VenvMode,
    prompt: Option<&str>,
    pip_stubs: bool,
) -> Result<(), VenvError> {
    let stubs = move |layout: &layout::Layout| match pip_stubs {
        true => wsp_install::write_pip_stubs(&layout.root)
            .map(drop)
            .map_err(VenvError::io("write pip stubs in", &layout.bin)),
        false => Ok(()),
    };
    let (layout, interpreter) = (layout.clone(), interpreter.clone());
    if mode == VenvMode::Stdlib || !layout::is_native_capable(&interpreter) {
        stdlib::create(&layout, &interpreter, prompt).await?;
        return tokio::task::spawn_blocking(move || stubs(&layout))
            .await
            .map_err(VenvError::Task)?;
    }
    let prompt = prompt.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        native::create(&layout, &interpreter, prompt.as_deref())?;
        stubs(&layout)
    })
    .await
    .map_err(VenvError::Task)?
}
