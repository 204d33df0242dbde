//! Reading a prefix's package records for an install or an uninstall: each `conda-meta/*.json`
//! entry must be a regular file (no symlink is followed, `conda-meta` itself included), within
//! the size bounds, and pass [`check_prefix_record`]; no two may describe the same package.
//! Anything else refuses the whole request before the prefix is touched.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use rattler_conda_types::PrefixRecord;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use wsp_backend::BackendError;
use wsp_protocol::FailureReason;

use crate::prefix_dir::{Found, PrefixDir};
use crate::untrusted::{check_prefix_record, METADATA_DIR};

/// The largest record read.
const RECORD_LIMIT: u64 = 64 << 20;
/// The most bytes of records read from one prefix.
const RECORDS_LIMIT: u64 = 256 << 20;

/// One package record of the prefix, with the name of its file in `conda-meta/`.
#[derive(Debug, Clone)]
pub(crate) struct Installed {
    pub file_name: String,
    pub record: PrefixRecord,
}

impl Installed {
    /// The package's normalized name.
    pub(crate) fn name(&self) -> &str {
        self.record
            .repodata_record
            .package_record
            .name
            .as_normalized()
    }
}

/// A refusal of the request because of what the prefix holds; nothing has been changed.
pub(crate) fn refused(what: impl std::fmt::Display) -> BackendError {
    BackendError::failed(
        FailureReason::InstallFailed,
        format!("{what}; the prefix was not changed"),
    )
}

/// The prefix's records, each checked, sorted by file name.
pub(crate) fn read_installed(prefix: &PrefixDir) -> Result<Vec<Installed>, BackendError> {
    let io_failed = |error: std::io::Error| {
        BackendError::caused_by(
            FailureReason::InstallFailed,
            format!("reading {}/{METADATA_DIR}", prefix.path().display()),
            error,
        )
    };
    let dir = match prefix
        .open_dir(Path::new(METADATA_DIR))
        .map_err(io_failed)?
    {
        Found::Dir(dir) => dir,
        Found::Missing => return Ok(Vec::new()),
        Found::Symlink(_) => return Err(refused(format!("{METADATA_DIR} is a symlink"))),
    };
    let mut names: Vec<String> = Vec::new();
    for entry in rustix::fs::Dir::read_from(&dir).map_err(|e| io_failed(e.into()))? {
        let entry = entry.map_err(|e| io_failed(e.into()))?;
        let name = entry.file_name().to_bytes();
        if !name.ends_with(b".json") {
            continue;
        }
        match std::str::from_utf8(name) {
            Ok(name) => names.push(name.to_owned()),
            Err(_) => {
                let name = String::from_utf8_lossy(name);
                return Err(refused(format!(
                    "{METADATA_DIR}/{name} is not named in UTF-8"
                )));
            }
        }
    }
    names.sort();
    let mut budget = RECORDS_LIMIT;
    let mut installed = Vec::with_capacity(names.len());
    let mut by_package: BTreeMap<String, String> = BTreeMap::new();
    for file_name in names {
        let shown = format!("{METADATA_DIR}/{file_name}");
        let bytes = read_record(&dir, &file_name, &shown, &mut budget)?;
        let record = check_prefix_record(&file_name, &bytes)
            .map_err(|violation| refused(format!("{shown} {violation}")))?;
        let name = record.repodata_record.package_record.name.as_normalized();
        if let Some(first) = by_package.insert(name.to_owned(), file_name.clone()) {
            return Err(refused(format!(
                "{METADATA_DIR}/{first} and {shown} both describe {name}"
            )));
        }
        installed.push(Installed { file_name, record });
    }
    Ok(installed)
}

/// The bytes of one record file, charged to `budget`.
fn read_record(
    dir: &std::os::fd::OwnedFd,
    file_name: &str,
    shown: &str,
    budget: &mut u64,
) -> Result<Vec<u8>, BackendError> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, file_name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => return Err(refused(format!("{shown} is a symlink"))),
        Err(errno) => {
            return Err(BackendError::caused_by(
                FailureReason::InstallFailed,
                format!("opening {shown}"),
                std::io::Error::from(errno),
            ))
        }
    };
    let file = std::fs::File::from(fd);
    let failed = |error| {
        BackendError::caused_by(
            FailureReason::InstallFailed,
            format!("reading {shown}"),
            error,
        )
    };
    if !file.metadata().map_err(failed)?.is_file() {
        return Err(refused(format!("{shown} is not a regular file")));
    }
    let limit = RECORD_LIMIT.min(*budget);
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > limit {
        return Err(refused(format!(
            "{shown} is larger than {RECORD_LIMIT} bytes, or the records together larger than \
             {RECORDS_LIMIT}"
        )));
    }
    *budget -= bytes.len() as u64;
    Ok(bytes)
}
