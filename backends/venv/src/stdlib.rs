//! The stdlib writer: `python -m venv --without-pip`, for when fidelity matters more than speed
//! and for interpreters the native writer does not know.

use std::ffi::OsString;

use wsp_interpreters::InterpreterInfo;

use crate::layout::Layout;
use crate::{process, VenvError};

/// Runs the interpreter's own `venv` module to create the environment at `layout.root`.
pub(crate) async fn create(
    layout: &Layout,
    interpreter: &InterpreterInfo,
    prompt: Option<&str>,
) -> Result<(), VenvError> {
    let root = &layout.root;
    tokio::fs::create_dir_all(root)
        .await
        .map_err(VenvError::io("create directory", root))?;
    // `-E` keeps PYTHONHOME/PYTHONPATH of the server out; running in the (new, empty) root
    // keeps stray modules in the server's working directory off `sys.path`.
    let mut args: Vec<OsString> = ["-E", "-m", "venv", "--without-pip"]
        .into_iter()
        .map(OsString::from)
        .collect();
    if let Some(prompt) = prompt {
        args.push("--prompt".into());
        args.push(prompt.into());
    }
    args.push(root.into());
    process::run(&interpreter.executable, &args, root).await
}
