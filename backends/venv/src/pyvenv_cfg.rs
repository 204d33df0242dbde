//! The `pyvenv.cfg` file: what makes a directory a virtual environment.
//!
//! The interpreter reads `home` (where the base installation is) and
//! `include-system-site-packages`; tools read `version`, `executable`, `prompt` and friends. We
//! write every key the stdlib `venv` writes for current Pythons (older interpreters ignore the
//! ones they do not know), plus `implementation`/`version_info` as other venv creators do, and
//! `wsp` naming the writer.

use wsp_interpreters::InterpreterInfo;

use crate::layout::Layout;

/// The name of the configuration file at an environment's root.
pub(crate) const FILE_NAME: &str = "pyvenv.cfg";

/// The text of `pyvenv.cfg` for an environment at `layout` over `interpreter`.
///
/// All paths are UTF-8 without control characters (checked by the caller).
pub(crate) fn render(
    interpreter: &InterpreterInfo,
    layout: &Layout,
    prompt: Option<&str>,
) -> String {
    let executable = interpreter.executable.to_string_lossy();
    let home = interpreter
        .executable
        .parent()
        .map(|dir| dir.to_string_lossy())
        .unwrap_or_default();
    let version = interpreter.version;
    let mut lines = vec![
        format!("home = {home}"),
        format!(
            "implementation = {}",
            implementation_name(&interpreter.implementation)
        ),
        format!("version_info = {version}"),
        format!("version = {version}"),
        "include-system-site-packages = false".to_owned(),
    ];
    if let Some(prompt) = prompt {
        lines.push(format!("prompt = {prompt}"));
    }
    lines.push(format!("executable = {executable}"));
    lines.push(format!(
        "command = wsp-backend-venv (native writer) for {executable} at {}",
        layout.root_text()
    ));
    lines.push(format!("wsp = {}", env!("CARGO_PKG_VERSION")));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// `cpython` → `CPython`, as `platform.python_implementation()` spells it.
fn implementation_name(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "cpython" => "CPython".to_owned(),
        "pypy" => "PyPy".to_owned(),
        "graalpy" => "GraalVM".to_owned(),
        _ => name.to_owned(),
    }
}
