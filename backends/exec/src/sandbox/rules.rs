//! The Landlock ruleset of one sandboxed run, built in the parent before the fork.
//!
//! Landlock grants rights on file hierarchies and denies the rest, so "read everything but
//! the hidden trees" is the complement of the hidden paths: every entry of `/` is granted read
//! and execute except the first component of a hidden path, whose directory is walked the
//! same way, down to the hidden directory itself, of which nothing is granted. Entries are
//! opened `O_PATH | O_NOFOLLOW`: a symlink is never granted (what it points at is granted or
//! not on its own), and one swapped in for a directory on the way cannot redirect the walk.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use rustix::fs::{FileType, Mode, OFlags};

/// The devices a sandboxed command may read and write; the rest of `/dev` (raw disks
/// included) is not granted at all.
const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

/// The ruleset: every right of `abi` handled; read and execute on everything outside
/// `hidden`; every right on `writable`; read and write on [`DEVICES`]. With `connect` (a run
/// that keeps the host's network), TCP is handled too where `abi` can: connecting only to
/// those ports, binding none.
pub(super) fn ruleset(
    abi: ABI,
    writable: &[&Path],
    hidden: &[PathBuf],
    connect: Option<&[u16]>,
) -> Result<RulesetCreated, String> {
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let file = AccessFs::from_file(abi);
    let device = (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate) & all;
    let failed =
        |error: landlock::RulesetError| format!("cannot build the Landlock ruleset: {error}");

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(failed)?;
    let scopes = Scope::from_all(abi);
    if !scopes.is_empty() {
        ruleset = ruleset.scope(scopes).map_err(failed)?;
    }
    let tcp = AccessNet::from_all(abi);
    let connect = connect.filter(|_| !tcp.is_empty());
    if connect.is_some() {
        ruleset = ruleset.handle_access(tcp).map_err(failed)?;
    }
    let mut created = ruleset.create().map_err(failed)?;
    for &port in connect.unwrap_or_default() {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(failed)?;
    }

    let hidden: Vec<Vec<OsString>> = hidden.iter().map(|path| components(path)).collect();
    let hidden: Vec<&[OsString]> = hidden.iter().map(Vec::as_slice).collect();
    let root = open(None, Path::new("/"), OFlags::DIRECTORY)
        .map_err(|error| format!("cannot open /: {error}"))?;
    // Each rule is added as its entry is found, so only the directories on the way are open
    // at once, however many entries they hold.
    let mut grant = |fd: OwnedFd, is_dir: bool| {
        let access = if is_dir { read } else { read & file };
        (&mut created)
            .add_rule(PathBeneath::new(fd, access))
            .map(|_| ())
            .map_err(failed)
    };
    complement(&root, Path::new("/"), &hidden, &mut grant)?;
    for name in DEVICES {
        let path = Path::new("/dev").join(name);
        let Ok(fd) = open(None, &path, OFlags::empty()) else {
            continue;
        };
        if kind(&fd) == Some(FileType::CharacterDevice) {
            created = created
                .add_rule(PathBeneath::new(fd, device))
                .map_err(failed)?;
        }
    }
    for path in writable {
        let fd = open(None, path, OFlags::DIRECTORY)
            .map_err(|error| format!("cannot open {}: {error}", path.display()))?;
        created = created
            .add_rule(PathBeneath::new(fd, all))
            .map_err(failed)?;
    }
    Ok(created)
}

/// Grants every entry of `dir` (at `path`) that lies on no hidden path, and walks into the
/// entries that lead to one. `hidden` holds the hidden paths' remaining components below
/// `dir`; an empty one means `dir` itself is hidden.
fn complement(
    dir: &OwnedFd,
    path: &Path,
    hidden: &[&[OsString]],
    grant: &mut dyn FnMut(OwnedFd, bool) -> Result<(), String>,
) -> Result<(), String> {
    if hidden.iter().any(|rest| rest.is_empty()) || path == Path::new("/dev") {
        return Ok(());
    }
    // A directory that cannot be listed grants nothing: its entries stay unreadable.
    let Ok(entries) = std::fs::read_dir(path) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if path == Path::new("/") && name == "dev" {
            continue;
        }
        let below: Vec<&[OsString]> = hidden
            .iter()
            .filter(|rest| rest.first().map(OsString::as_os_str) == Some(name.as_os_str()))
            .map(|rest| &rest[1..])
            .collect();
        let Ok(fd) = open(Some(dir), Path::new(&name), OFlags::empty()) else {
            continue;
        };
        match kind(&fd) {
            Some(FileType::Directory) if below.is_empty() => grant(fd, true)?,
            Some(FileType::Directory) => complement(&fd, &path.join(&name), &below, grant)?,
            Some(FileType::RegularFile) if below.is_empty() => grant(fd, false)?,
            _ => {}
        }
    }
    Ok(())
}

/// Opens `path` (relative to `dir` when given) as `O_PATH`, never through a final symlink.
fn open(dir: Option<&OwnedFd>, path: &Path, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    let flags = flags | OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match dir {
        Some(dir) => rustix::fs::openat(dir, path, flags, Mode::empty()),
        None => rustix::fs::open(path, flags, Mode::empty()),
    }
}

fn kind(fd: &OwnedFd) -> Option<FileType> {
    rustix::fs::fstat(fd)
        .ok()
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
}

/// The normal components of an absolute, canonical path.
fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(OsStr::to_os_string(name)),
            _ => None,
        })
        .collect()
}
