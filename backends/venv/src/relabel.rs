//! Relabelling: giving an environment the native writer made under one name another name.
//!
//! The name is the environment's prompt, and the native writer puts the prompt in exactly four
//! files: the `prompt = ` line of `pyvenv.cfg` and the three activation scripts in `bin/`
//! (see [`crate::activate`]). Everything else it writes (links, `.gitignore`, the pip stubs,
//! a seeded pip) depends on the root and the interpreter only, and the root never moves. So
//! rewriting those four files leaves the environment byte for byte what a create under the
//! new name at that root would have written.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::layout::{check_no_control, check_text};
use crate::{activate, pyvenv_cfg, VenvError};

/// What the native writer's `pyvenv.cfg` says in its `command` line; the stdlib's differ.
const NATIVE_COMMAND: &str = "command = wsp-backend-venv (native writer) ";

/// The key of the prompt's line in `pyvenv.cfg`.
const PROMPT_KEY: &str = "prompt = ";

/// Gives the environment the native writer made at `root`, with a prompt, the prompt
/// `prompt`. Refuses, changing nothing, an environment another writer made or one without a
/// prompt. Blocking.
///
/// Each file is written over in place, not truncated to nothing or replaced by a rename:
/// ext4 writes a file's old data out when it is truncated to nothing and closed or replaced
/// by a rename (`auto_da_alloc`), which made a relabel four times slower, and a new file
/// costs a new inode. Nothing reads the files meanwhile: the environment is a reservation
/// until it is committed, and a crash leaves a stale one for the sweep.
pub(crate) fn relabel(root: &Path, prompt: &str) -> Result<(), VenvError> {
    check_no_control("prompt", prompt)?;
    let root = std::path::absolute(root).map_err(VenvError::io("resolve", root))?;
    check_text("environment root", &root)?;
    let root_text = root.to_str().unwrap_or_default();
    let cfg_path = root.join(pyvenv_cfg::FILE_NAME);
    let cfg = fs::read_to_string(&cfg_path).map_err(VenvError::io("read", &cfg_path))?;
    let refused = |reason| VenvError::InvalidInput {
        what: "environment",
        value: root_text.to_owned(),
        reason,
    };
    if !cfg.lines().any(|line| line.starts_with(NATIVE_COMMAND)) {
        return Err(refused("the native writer did not make it"));
    }
    let relabelled = with_prompt(&cfg, prompt).ok_or_else(|| refused("it has no prompt"))?;
    let bin = root.join("bin");
    for (name, text) in activate::scripts(root_text, prompt) {
        write_over(&bin.join(name), &text)?;
    }
    write_over(&cfg_path, &relabelled)
}

/// Makes the file at `path`, which exists, hold `text`: written over in place, then cut to
/// its length.
fn write_over(path: &Path, text: &str) -> Result<(), VenvError> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(VenvError::io("open", path))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.set_len(text.len() as u64))
        .map_err(VenvError::io("write", path))
}

/// `cfg` with its one prompt line saying `prompt`; `None` if it has no prompt line.
fn with_prompt(cfg: &str, prompt: &str) -> Option<String> {
    let mut found = false;
    let lines: Vec<String> = cfg
        .split_inclusive('\n')
        .map(|line| match line.strip_prefix(PROMPT_KEY) {
            Some(_) if !found => {
                found = true;
                format!("{PROMPT_KEY}{prompt}\n")
            }
            _ => line.to_owned(),
        })
        .collect();
    found.then(|| lines.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_prompt_line_changes() {
        let cfg = "home = /py\nprompt = old one\nexecutable = /py/python3\n";
        assert_eq!(
            with_prompt(cfg, "new").as_deref(),
            Some("home = /py\nprompt = new\nexecutable = /py/python3\n")
        );
        assert_eq!(with_prompt("home = /py\n", "new"), None);
    }
}
