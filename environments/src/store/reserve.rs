//! The space reserve: `index.reserve`, allocated ahead so that the index can shrink on a full
//! file system.
//!
//! Every index change writes a whole new `index.json` beside the old one and renames it into
//! place, so even a change that shrinks the index needs free space for a moment. On a full
//! file system that would make a delete, the one request that frees space, fail. So the store
//! keeps `index.reserve`: a regular file of spaces, at least as large as the index, whose
//! blocks are allocated (written, not sparse).
//!
//! A change that frees space (a removal, an abort, a sweep) whose new index cannot be written
//! for want of space renames the reserve to `index.json.tmp` and overwrites it in place: its
//! blocks are already allocated, so the write needs no new ones, and no other writer on the
//! file system can take them first. The file then holds the new index followed by spaces,
//! which is still valid JSON, so the rename over `index.json` stays the one atomic step it
//! always is. After the rename the spaces are trimmed; a crash may skip that harmlessly. Once
//! the change has freed space, the reserve is written again.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::error::StoreError;
use super::index::MAX_INDEX_BYTES;
use super::layout::Layout;
use super::lock::{LockMode, PathLock};

/// The smallest reserve: the index of a few hundred environments.
pub(crate) const MIN_RESERVE_BYTES: u64 = 256 << 10;

/// What the reserve is filled with: whitespace may follow a JSON document.
const FILL: u8 = b' ';

/// Whether `error` means the file system, or the user's quota on it, is full.
pub(crate) fn is_out_of_space(error: &io::Error) -> bool {
    let raw = error.raw_os_error();
    raw == Some(rustix::io::Errno::NOSPC.raw_os_error())
        || raw == Some(rustix::io::Errno::DQUOT.raw_os_error())
}

/// The reserve size below which it is grown, for an index of `index_len` bytes.
fn wanted(index_len: u64) -> u64 {
    index_len
        .saturating_add(index_len / 2)
        .clamp(MIN_RESERVE_BYTES, MAX_INDEX_BYTES)
}

/// The size a growing reserve is given: twice the index, so that it grows rarely.
fn grown(index_len: u64) -> u64 {
    index_len
        .saturating_mul(2)
        .clamp(MIN_RESERVE_BYTES, MAX_INDEX_BYTES)
}

/// The size of `index.json`, 0 if it is missing. Never follows a symlink.
fn index_len(layout: &Layout) -> u64 {
    std::fs::symlink_metadata(&layout.index).map_or(0, |metadata| metadata.len())
}

/// Makes sure the reserve exists and is large enough for the current index, if it can be
/// written; a full file system leaves it short or missing (logged) until a later call. Takes
/// the index lock only when there is something to do. Blocking.
pub(crate) fn replenish(layout: &Layout) {
    let sound =
        |metadata: &std::fs::Metadata| metadata.file_type().is_file() && metadata.nlink() == 1;
    match std::fs::symlink_metadata(&layout.reserve) {
        Ok(metadata) if sound(&metadata) && metadata.len() >= wanted(index_len(layout)) => return,
        _ => {}
    }
    let lock = match PathLock::acquire(&layout.index_lock, LockMode::Exclusive) {
        Ok(lock) => lock,
        Err(error) => {
            tracing::warn!(%error, "could not lock the index to write the space reserve");
            return;
        }
    };
    ensure(layout);
    drop(lock);
}

/// [`replenish`] for a caller that holds the index lock. Blocking.
pub(crate) fn ensure(layout: &Layout) {
    if let Err(error) = grow(layout, index_len(layout)) {
        tracing::warn!(
            path = %layout.reserve.display(),
            %error,
            "the space reserve is short; a delete on a full file system may fail until it is written"
        );
    }
}

fn grow(layout: &Layout, index_len: u64) -> io::Result<()> {
    let file = open_reserve(layout)?;
    let len = file.metadata()?.len();
    if len >= wanted(index_len) {
        return Ok(());
    }
    fill(&file, len, grown(index_len))?;
    file.sync_data()
}

/// Opens (creating if missing) the reserve for writing. Anything other than a regular file
/// with one link in its place (a symlink, a FIFO, a hard link to some other file) is unlinked
/// first, never written through.
fn open_reserve(layout: &Layout) -> io::Result<File> {
    let path = &layout.reserve;
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if !metadata.file_type().is_file() || metadata.nlink() != 1 => {
            tracing::warn!(path = %path.display(), "replacing a space reserve that is not a plain file");
            std::fs::remove_file(path)?;
        }
        _ => {}
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK;
    let file = File::from(rustix::fs::open(
        path,
        flags | OFlags::CLOEXEC,
        Mode::RUSR | Mode::WUSR,
    )?);
    refuse_unsound(&file)?;
    Ok(file)
}

fn refuse_unsound(file: &File) -> io::Result<()> {
    let metadata = file.metadata()?;
    if !metadata.file_type().is_file() || metadata.nlink() != 1 {
        return Err(io::Error::other(
            "the space reserve is not a regular file with a single link",
        ));
    }
    Ok(())
}

/// Writes [`FILL`] bytes over `from..to` of `file`.
fn fill(file: &File, from: u64, to: u64) -> io::Result<()> {
    let chunk = vec![FILL; 64 << 10];
    let mut offset = from;
    while offset < to {
        let len = usize::try_from(to - offset).map_or(chunk.len(), |left| left.min(chunk.len()));
        file.write_all_at(&chunk[..len], offset)?;
        offset += len as u64;
    }
    Ok(())
}

/// Writes `bytes` (an index) into the reserve, renamed to the temporary index file: the file
/// holds `bytes` followed by spaces. `None` if there is no usable reserve at least that large
/// (the temporary file is then gone). Call under the index lock. Blocking.
pub(crate) fn write_into(
    layout: &Layout,
    bytes: &[u8],
    durable: bool,
) -> Result<Option<File>, StoreError> {
    let temp = &layout.index_temp;
    let context = || format!("writing {} into the space reserve", temp.display());
    match std::fs::rename(&layout.reserve, temp) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(context(), error)),
    }
    let write = || -> io::Result<Option<File>> {
        let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let file = File::from(rustix::fs::open(temp, flags, Mode::empty())?);
        refuse_unsound(&file)?;
        let len = file.metadata()?.len();
        if len < bytes.len() as u64 {
            return Ok(None);
        }
        file.write_all_at(bytes, 0)?;
        // A reserve that went back unused after a cancelled change still holds its index.
        fill(&file, bytes.len() as u64, len)?;
        if durable {
            file.sync_all()?;
        }
        Ok(Some(file))
    };
    let written = write();
    if !matches!(written, Ok(Some(_))) {
        put_back(temp, &layout.reserve);
    }
    written.map_err(|error| StoreError::io(context(), error))
}

/// Renames an unused temporary index written into the reserve back to being the reserve.
pub(crate) fn put_back(temp: &Path, reserve: &Path) {
    if let Err(error) = std::fs::rename(temp, reserve) {
        tracing::debug!(%error, "could not keep the space reserve; it is written again later");
        let _ = std::fs::remove_file(temp);
    }
}

/// Drops the spaces after the index of `len` bytes in `file`, the current `index.json`,
/// which was written into the reserve. Readers see valid JSON before, during and after.
pub(crate) fn trim(file: &File, len: u64) {
    if let Err(error) = file.set_len(len) {
        tracing::debug!(%error, "could not trim the index written into the space reserve");
    }
}
