//! The native writer: lays out a CPython virtual environment without running Python.
//!
//! The files are written in an order that keeps a half-made environment unrecognisable:
//! `pyvenv.cfg`, which is what makes a directory an environment, comes last and appears by
//! rename, whole.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use wsp_interpreters::InterpreterInfo;

use crate::layout::Layout;
use crate::{activate, pyvenv_cfg, VenvError};

/// Creates the environment described by `layout` over `interpreter`.
pub(crate) fn create(
    layout: &Layout,
    interpreter: &InterpreterInfo,
    prompt: Option<&str>,
) -> Result<(), VenvError> {
    let executable = &interpreter.executable;
    if !executable.is_absolute() || !executable.is_file() {
        return Err(VenvError::InvalidInput {
            what: "interpreter executable",
            value: executable.to_string_lossy().into_owned(),
            reason: "it is not an absolute path to an existing file",
        });
    }
    crate::layout::check_text("interpreter executable", executable)?;

    for dir in [&layout.root, &layout.bin, &layout.site_packages] {
        fs::create_dir_all(dir).map_err(VenvError::io("create directory", dir))?;
    }
    let include = layout.root.join("include");
    fs::create_dir_all(&include).map_err(VenvError::io("create directory", &include))?;
    if cfg!(all(target_pointer_width = "64", not(target_os = "macos"))) {
        // The stdlib does this too, for tools that look for `lib64/pythonX.Y`.
        link("lib", &layout.root.join("lib64"))?;
    }

    link(executable, &layout.python())?;
    let mut aliases = vec!["python3".to_owned(), layout.versioned_exe.clone()];
    aliases.extend(layout.free_threaded_exe.clone());
    for alias in aliases {
        link("python", &layout.bin.join(alias))?;
    }

    let default_prompt;
    let shown_prompt = match prompt {
        Some(prompt) => prompt,
        None => {
            default_prompt = activate::default_prompt(&layout.root);
            &default_prompt
        }
    };
    for (name, text) in activate::scripts(layout.root_text(), shown_prompt) {
        write(&layout.bin.join(name), &text)?;
    }
    write(
        &layout.root.join(".gitignore"),
        "# This virtual environment was made by wsp; keep it out of version control.\n*\n",
    )?;

    let cfg = pyvenv_cfg::render(interpreter, layout, prompt);
    let staged = layout.root.join(".pyvenv.cfg.partial");
    write(&staged, &cfg)?;
    let target = layout.root.join(pyvenv_cfg::FILE_NAME);
    fs::rename(&staged, &target).map_err(VenvError::io("move into place", &target))
}

/// A symlink at `at` pointing to `target`.
fn link(target: impl AsRef<Path>, at: &Path) -> Result<(), VenvError> {
    symlink(target, at).map_err(VenvError::io("create symlink", at))
}

/// Writes `text` to a new file at `path`.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), VenvError> {
    fs::write(path, text).map_err(VenvError::io("write", path))
}
