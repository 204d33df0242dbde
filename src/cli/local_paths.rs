//! Local paths among the packages the CLI sends, made absolute against the CLI's own working
//! directory: the server runs the installer in the environment's root, so a relative path would
//! be taken from there.
//!
//! A package is a PEP 508 requirement, a distribution's path or a conda match spec. What counts
//! as a path follows pip and uv:
//!
//! - after `name @` (a direct reference), anything that is not a URL;
//! - otherwise, before any `;` markers and `[extras]`: text with a `/` in it or that starts with
//!   `.` (no PEP 508 name or version specifier holds a `/` or starts with `.`);
//! - a bare file name with a distribution's extension (`x.whl`, `x.tar.gz`, …) when that file
//!   exists here (pip reads such a name as a path only then; `zope.zip` could be a name).
//!
//! URLs (`scheme://`, `file:`), absolute paths and conda channel specs (`channel::name`,
//! `channel/subdir::name`) are sent as they are.

use std::path::{Component, Path, PathBuf};

/// The extensions pip reads as a distribution file's.
const ARCHIVE_EXTENSIONS: &[&str] = &[
    ".whl",
    ".tar.gz",
    ".tgz",
    ".tar.bz2",
    ".tbz",
    ".tar.xz",
    ".txz",
    ".tlz",
    ".tar.lz",
    ".tar.lzma",
    ".tar",
    ".zip",
];

/// A `-p`/`PKG` value: `package` with a relative local path in it made absolute against the
/// current directory.
pub fn parse_package(package: &str) -> Result<String, String> {
    let cwd = std::env::current_dir()
        .map_err(|e| format!("the current directory is not readable: {e}"))?;
    Ok(absolute_package(package, &cwd))
}

/// `package` with a relative local path in it made absolute against `cwd`; everything else in
/// it (extras, markers, the name of a direct reference) is kept byte for byte.
pub fn absolute_package(package: &str, cwd: &Path) -> String {
    match relative_path_range(package, cwd) {
        Some((start, end)) => {
            let absolute = join_lexically(cwd, &package[start..end]);
            format!(
                "{}{}{}",
                &package[..start],
                absolute.display(),
                &package[end..]
            )
        }
        None => package.to_owned(),
    }
}

/// The byte range of the relative local path in `package`, if it has one.
fn relative_path_range(package: &str, cwd: &Path) -> Option<(usize, usize)> {
    let body_end = package.find(';').unwrap_or(package.len());
    let body = &package[..body_end];
    if let Some(at) = body.find('@') {
        if is_name_with_extras(body[..at].trim()) {
            let reference = trimmed_range(body, at + 1, body.len())?;
            let text = &package[reference.0..reference.1];
            return (!is_url(text) && !text.starts_with('/')).then_some(reference);
        }
    }
    let (start, mut end) = trimmed_range(body, 0, body.len())?;
    if package[..end].ends_with(']') {
        if let Some(open) = package[start..end].rfind('[') {
            end = start + open;
        }
    }
    let text = &package[start..end];
    if text.is_empty() || is_url(text) || text.starts_with('/') || text.contains("::") {
        return None;
    }
    let path_like = text.contains('/') || text.starts_with('.');
    let existing_archive = has_archive_extension(text) && cwd.join(text).is_file();
    (path_like || existing_archive).then_some((start, end))
}

/// `text[from..to]` without the whitespace around it, as a range of `text`; `None` if empty.
fn trimmed_range(text: &str, from: usize, to: usize) -> Option<(usize, usize)> {
    let part = &text[from..to];
    let start = from + (part.len() - part.trim_start().len());
    let end = to - (part.len() - part.trim_end().len());
    (start < end).then_some((start, end))
}

/// A PEP 508 name (letters, digits, `.`, `_`, `-`, starting and ending with a letter or digit),
/// optionally followed by `[extras]`.
fn is_name_with_extras(text: &str) -> bool {
    let name = match text.split_once('[') {
        Some((name, extras)) if extras.trim_end().ends_with(']') => name.trim_end(),
        Some(_) => return false,
        None => text,
    };
    let edges_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    edges_ok(name.chars().next())
        && edges_ok(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn is_url(text: &str) -> bool {
    text.contains("://")
        || text
            .get(..5)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("file:"))
}

fn has_archive_extension(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ARCHIVE_EXTENSIONS
        .iter()
        .any(|extension| lower.len() > extension.len() && lower.ends_with(extension))
}

/// `cwd` joined with `relative`, its `.` components dropped (`..` is kept: resolving it without
/// the file system would be wrong past a symlink).
fn join_lexically(cwd: &Path, relative: &str) -> PathBuf {
    let mut path = cwd.to_path_buf();
    for component in Path::new(relative).components() {
        if component != Component::CurDir {
            path.push(component);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn absolute(package: &str) -> String {
        absolute_package(package, Path::new("/work/here"))
    }

    #[test]
    fn relative_paths_are_made_absolute() {
        assert_eq!(
            absolute("./x-1.0-py3-none-any.whl"),
            "/work/here/x-1.0-py3-none-any.whl"
        );
        assert_eq!(
            absolute("dist/x-1.0.tar.gz"),
            "/work/here/dist/x-1.0.tar.gz"
        );
        assert_eq!(absolute("."), "/work/here");
        assert_eq!(absolute("../proj/"), "/work/here/../proj");
        assert_eq!(absolute("./proj[cli, test]"), "/work/here/proj[cli, test]");
        assert_eq!(
            absolute("./proj ; python_version >= '3.8'"),
            "/work/here/proj ; python_version >= '3.8'"
        );
        assert_eq!(absolute("demo @ ./proj"), "demo @ /work/here/proj");
        assert_eq!(absolute("demo[x]@proj.whl"), "demo[x]@/work/here/proj.whl");
    }

    #[test]
    fn names_specifiers_urls_and_absolute_paths_are_kept() {
        for kept in [
            "requests",
            "requests[socks]>=2.31,<3",
            "zope.interface==6.0",
            "numpy; python_version < '3.13'",
            "x.whl",
            "demo @ https://example.com/demo-1.0.tar.gz",
            "demo @ file:///srv/demo",
            "demo @ /srv/demo",
            "git+https://example.com/demo.git",
            "file:./demo",
            "/srv/x-1.0-py3-none-any.whl",
            "conda-forge::numpy",
            "conda-forge/linux-64::numpy >=1.26",
            "numpy[build=py312*]",
            "python=3.12",
            "",
        ] {
            assert_eq!(absolute(kept), kept);
        }
    }

    #[test]
    fn a_bare_archive_name_is_a_path_only_when_the_file_is_here() {
        let here = tempfile::tempdir().expect("a temp dir");
        std::fs::write(here.path().join("x-1.0-py3-none-any.whl"), b"").expect("a file");
        let made = absolute_package("x-1.0-py3-none-any.whl", here.path());
        assert_eq!(Path::new(&made), here.path().join("x-1.0-py3-none-any.whl"));
        assert_eq!(absolute_package("y.whl", here.path()), "y.whl");
        assert_eq!(absolute_package("demo.zip", here.path()), "demo.zip");
    }
}
