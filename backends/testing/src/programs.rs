//! Programs the tests run: executable files written so that running them cannot fail with
//! `ETXTBSY`, and Python snippets more than one test binary runs.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes an executable file that a test then runs.
///
/// Written by a child process: a descriptor open for writing in this process would be inherited
/// by a command another test thread forks meanwhile, and until that command's exec closes it,
/// running the file fails with `ETXTBSY` (renaming the file would not help: the inherited
/// descriptor is on the same inode).
pub fn write_executable(path: &Path, contents: &str) {
    let mut writer = Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut stdin = writer.stdin.take().expect("a pipe to sh");
    stdin
        .write_all(contents.as_bytes())
        .expect("the file is written");
    drop(stdin);
    let status = writer.wait().expect("sh ends");
    assert!(status.success(), "writing {}: {status}", path.display());
}

/// Python that forks up to 60 children that each wait a second, and prints how many forks
/// succeeded: a process limit below 60 shows in the count.
pub const FORK_60: &str = "
import os, time
forked = 0
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(1)
        os._exit(0)
    forked += 1
print(forked)
";
