//! Requirements files (`wsp install -r FILE`, `wsp create -r FILE`), read by the CLI.
//!
//! The format is pip's, without its options: one requirement or path per line; `#` starts a
//! comment at the start of a line or after a blank; a line ending in `\` goes on with the next;
//! blank lines are skipped. `-r OTHER` (or `--requirement OTHER`) includes another file where it
//! stands, a relative `OTHER` being taken from the including file's directory. Any other option
//! (`-c`, `-e`, `--hash`, `--index-url`, ...) is refused with the file and line, since the
//! server is sent requirements only. A relative path in a requirement line is taken from the
//! current directory, as pip takes it.

use std::path::{Path, PathBuf};

/// Why a requirements file can't be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequirementsError {
    /// The file can't be read.
    #[error("cannot read the requirements file {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A line holds an option other than `-r`.
    #[error("{path}:{line}: `{option}` is not supported in a requirements file: {advice}")]
    Option {
        /// The file.
        path: PathBuf,
        /// The line's number (the first of a continued line).
        line: usize,
        /// The option as written.
        option: String,
        /// What to do instead.
        advice: &'static str,
    },
    /// `-r` without a file.
    #[error("{path}:{line}: `-r` needs a file name")]
    MissingFile {
        /// The file.
        path: PathBuf,
        /// The line's number.
        line: usize,
    },
    /// A file includes itself, directly or through others.
    #[error("{path} includes itself through `-r`")]
    Cycle {
        /// The file.
        path: PathBuf,
    },
    /// A requirement line is not a usable requirement or path.
    #[error("{path}:{line}: {reason}")]
    Requirement {
        /// The file.
        path: PathBuf,
        /// The line's number.
        line: usize,
        /// Why.
        reason: String,
    },
}

/// The requirements `path` lists, in order, with the files it includes read where they stand.
pub fn read(path: &Path) -> Result<Vec<String>, RequirementsError> {
    let mut requirements = Vec::new();
    read_into(path, &mut Vec::new(), &mut requirements)?;
    Ok(requirements)
}

fn read_into(
    path: &Path,
    including: &mut Vec<PathBuf>,
    requirements: &mut Vec<String>,
) -> Result<(), RequirementsError> {
    let read_error = |error: std::io::Error| RequirementsError::Read {
        path: path.to_owned(),
        reason: error.to_string(),
    };
    let identity = path.canonicalize().map_err(read_error)?;
    if including.contains(&identity) {
        return Err(RequirementsError::Cycle {
            path: path.to_owned(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    including.push(identity);
    for (line, content) in logical_lines(&text) {
        match entry(&content) {
            Entry::Requirement(text) => {
                let requirement = super::local_paths::parse_package(text).map_err(|reason| {
                    RequirementsError::Requirement {
                        path: path.to_owned(),
                        line,
                        reason,
                    }
                })?;
                requirements.push(requirement);
            }
            Entry::Include(Some(file)) => {
                let base = path.parent().unwrap_or(Path::new("."));
                read_into(&base.join(file), including, requirements)?;
            }
            Entry::Include(None) => {
                return Err(RequirementsError::MissingFile {
                    path: path.to_owned(),
                    line,
                })
            }
            Entry::Option(option) => {
                return Err(RequirementsError::Option {
                    path: path.to_owned(),
                    line,
                    advice: advice(option),
                    option: option.to_owned(),
                })
            }
            Entry::Blank => {}
        }
    }
    including.pop();
    Ok(())
}

/// The lines of `text` with continuations joined and comments removed, each with the number
/// of its first physical line.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, physical) in text.lines().enumerate() {
        let (start, mut joined) = pending.take().unwrap_or((index + 1, String::new()));
        joined.push_str(strip_comment(physical));
        match joined.strip_suffix('\\') {
            Some(continued) => pending = Some((start, continued.to_owned())),
            None => lines.push((start, joined)),
        }
    }
    lines.extend(pending);
    lines
}

/// `line` up to a `#` that starts it or follows a blank.
fn strip_comment(line: &str) -> &str {
    let mut previous_blank = true;
    for (at, c) in line.char_indices() {
        if c == '#' && previous_blank {
            return line[..at].trim_end();
        }
        previous_blank = c.is_whitespace();
    }
    line
}

enum Entry<'a> {
    Blank,
    Requirement(&'a str),
    Include(Option<&'a str>),
    Option(&'a str),
}

fn entry(line: &str) -> Entry<'_> {
    let line = line.trim();
    if line.is_empty() {
        return Entry::Blank;
    }
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or(line);
    if let Some(file) = first
        .strip_prefix("--requirement=")
        .or_else(|| first.strip_prefix("-r").filter(|rest| !rest.is_empty()))
    {
        return Entry::Include(Some(file.trim_start_matches('=')));
    }
    if first == "-r" || first == "--requirement" {
        return Entry::Include(words.next());
    }
    if first.starts_with('-') {
        return Entry::Option(first);
    }
    // Per-requirement options (`pkg --hash=...`) come after the requirement.
    match line.split_whitespace().find(|word| word.starts_with("--")) {
        Some(option) => Entry::Option(option),
        None => Entry::Requirement(line),
    }
}

fn advice(option: &str) -> &'static str {
    let name = option.split('=').next().unwrap_or(option);
    match name {
        "-c" | "--constraint" => "constraints are not sent to the server; pin the versions instead",
        "-e" | "--editable" => "editable installs are not supported; give the project's path",
        "-f" | "--find-links" | "-i" | "--index-url" | "--no-index" | "--extra-index-url" => {
            "give --find-links, --index-url or --no-index on the command line"
        }
        _ => "only requirements, paths and `-r FILE` are read",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blanks_and_continuations() {
        let text = "# a comment\n\nsix==1.16  # pinned\nwsp-alpha \\\n  >=1.0\nurl#frag\n";
        let lines: Vec<String> = logical_lines(text).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            lines,
            ["", "", "six==1.16", "wsp-alpha   >=1.0", "url#frag"]
        );
    }

    #[test]
    fn entries() {
        assert!(matches!(
            entry("-r other.txt"),
            Entry::Include(Some("other.txt"))
        ));
        assert!(matches!(
            entry("-rother.txt"),
            Entry::Include(Some("other.txt"))
        ));
        assert!(matches!(
            entry("--requirement=o.txt"),
            Entry::Include(Some("o.txt"))
        ));
        assert!(matches!(entry("-r"), Entry::Include(None)));
        assert!(matches!(entry("-c c.txt"), Entry::Option("-c")));
        assert!(matches!(
            entry("six --hash=sha256:00"),
            Entry::Option("--hash=sha256:00")
        ));
        assert!(matches!(
            entry("six; python_version > '3'"),
            Entry::Requirement(_)
        ));
    }
}
