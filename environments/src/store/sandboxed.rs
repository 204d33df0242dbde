//! Which environments have run sandboxed code: `locks/<id>.sandboxed`, made before the first
//! sandboxed command of `<id>` starts.
//!
//! Such an environment's files may have been written by code that was only trusted inside
//! the sandbox, so its installs and uninstalls run sandboxed from then on. The marker lives in
//! the state directory, which no sandboxed command can read or write, and is deleted with the
//! environment's other lock files once the environment is gone.

use std::io;
use std::path::PathBuf;

use rustix::fs::{Mode, OFlags};

use super::layout::Layout;
use super::record::is_environment_id;

/// The file kind in `locks/` that marks a sandboxed environment.
pub(crate) const KIND: &str = "sandboxed";

fn marker(layout: &Layout, id: &str) -> Option<PathBuf> {
    is_environment_id(id).then(|| layout.locks.join(format!("{id}.{KIND}")))
}

/// Records that `id` runs sandboxed code; durable before it returns (at once when it is
/// recorded already).
pub(crate) fn mark(layout: &Layout, id: &str) -> io::Result<()> {
    let Some(path) = marker(layout, id) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{id}` is not an environment id"),
        ));
    };
    if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file()) {
        return Ok(());
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(&path, flags, Mode::from_raw_mode(0o600))?);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    file.sync_all()?;
    std::fs::File::open(&layout.locks)?.sync_all()
}

/// Whether `id` has run sandboxed code. Anything but a clear "no marker" counts as yes.
pub(crate) fn was_marked(layout: &Layout, id: &str) -> bool {
    match marker(layout, id).map(std::fs::symlink_metadata) {
        Some(Err(error)) => error.kind() != io::ErrorKind::NotFound,
        _ => true,
    }
}
