//! The activation scripts in `bin/`: `activate` (bash, zsh), `activate.fish` and
//! `activate.csh`.
//!
//! Each sets `VIRTUAL_ENV` and `VIRTUAL_ENV_PROMPT`, puts the environment's `bin` first on
//! `PATH`, hides `PYTHONHOME`, prefixes the prompt (unless `VIRTUAL_ENV_DISABLE_PROMPT` is set)
//! and defines `deactivate`, which undoes all of it.

use std::path::Path;

/// One script: its file name in `bin/` and its text with placeholders.
struct Template {
    file_name: &'static str,
    text: &'static str,
    quote: fn(&str) -> String,
}

const TEMPLATES: [Template; 3] = [
    Template {
        file_name: "activate",
        text: include_str!("activate.sh"),
        quote: sh_quote,
    },
    Template {
        file_name: "activate.fish",
        text: include_str!("activate.fish"),
        quote: fish_quote,
    },
    Template {
        file_name: "activate.csh",
        text: include_str!("activate.csh"),
        quote: csh_quote,
    },
];

/// The activation scripts for an environment at `root` whose prompt is `prompt`, as
/// `(file name, text)` pairs.
pub(crate) fn scripts(root: &str, prompt: &str) -> Vec<(&'static str, String)> {
    let prefix = format!("({}) ", prompt_for_shell_prompt(prompt));
    TEMPLATES
        .iter()
        .map(|template| {
            let quote = template.quote;
            let text = fill(
                template.text,
                &[
                    ("__WSP_VIRTUAL_ENV__", quote(root)),
                    ("__WSP_PROMPT__", quote(prompt)),
                    ("__WSP_PS1_PREFIX__", quote(&prefix)),
                ],
            );
            (template.file_name, text)
        })
        .collect()
}

/// The prompt name used when none is given: the root's last component.
pub(crate) fn default_prompt(root: &Path) -> String {
    root.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "venv".to_owned())
}

/// Replaces each placeholder in one pass, so a value that happens to contain a placeholder's
/// spelling is left alone.
fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    loop {
        let next = values
            .iter()
            .filter_map(|(key, value)| rest.find(key).map(|at| (at, *key, value)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, key, value)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + key.len()..];
    }
}

/// Shells re-expand their prompt variables (`$`, backquotes, `%`, `!`, backslash escapes) each
/// time they print them, so the prompt prefix keeps only characters with no meaning there.
/// `VIRTUAL_ENV_PROMPT` still carries the prompt unchanged.
fn prompt_for_shell_prompt(prompt: &str) -> String {
    prompt
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || " -_.,:+@=/#^~[]{}()".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A single-quoted word for sh, bash and zsh.
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A single-quoted word for fish, where `\\` and `\'` are the only escapes.
fn fish_quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', r"\\").replace('\'', r"\'"))
}

/// A single-quoted word for csh, where `!` starts a history reference even inside quotes.
fn csh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''").replace('!', r"\!"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_single_pass() {
        let filled = fill(
            "a=__A__ b=__B__",
            &[("__A__", "__B__".to_owned()), ("__B__", "x".to_owned())],
        );
        assert_eq!(filled, "a=__B__ b=x");
    }

    #[test]
    fn every_placeholder_is_replaced() {
        for (name, text) in scripts("/tmp/it's here", "na$me") {
            assert!(!text.contains("__WSP_"), "{name} still has a placeholder");
            assert!(text.contains("it"), "{name} lacks the root");
        }
    }

    #[test]
    fn shell_prompt_loses_expansion_characters() {
        assert_eq!(prompt_for_shell_prompt("a$(b)`c`%d!e\\f"), "a_(b)_c__d_e_f");
    }
}
