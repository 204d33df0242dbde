//! Finding the program to run from `argv[0]`.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Resolves `program`: with a `/` it is used as it is; otherwise the first executable file
/// named `program` in `bin_dir`, then in the directories of `path` (an empty entry meaning the
/// working directory `cwd`). `Err` carries a message naming the program.
pub(super) fn find_program(
    program: &str,
    bin_dir: &Path,
    path: &OsStr,
    cwd: &Path,
) -> Result<PathBuf, String> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    if program.is_empty() {
        return Err("cannot start the command: argv[0] is empty".to_owned());
    }
    let search =
        std::iter::once(bin_dir.to_path_buf()).chain(std::env::split_paths(path).map(|dir| {
            if dir.as_os_str().is_empty() {
                cwd.to_path_buf()
            } else {
                dir
            }
        }));
    for dir in search {
        let candidate = dir.join(program);
        if is_executable_file(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!(
        "cannot start `{program}`: no executable named `{program}` in {} or on PATH",
        bin_dir.display()
    ))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}
