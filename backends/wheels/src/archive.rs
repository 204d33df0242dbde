//! Opening a wheel: its central directory checked whole before anything is read or written
//! (names that could leave their directory, links, sizes past the limits, duplicates are
//! errors), its `.dist-info` found, and its small metadata files read within bounds.

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use pep508_rs::PackageName;
use zip::{CompressionMethod, ZipArchive};

use crate::metadata::Metadata;
use crate::Stop;

/// The most bytes one file of a wheel may hold.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 30;

/// The most bytes all files of a wheel may hold together.
const MAX_WHEEL_BYTES: u64 = 4 << 30;

/// The most entries a wheel may have.
const MAX_ENTRIES: usize = 200_000;

/// The most bytes of `METADATA`, `WHEEL`, `entry_points.txt` or `RECORD` read.
const MAX_SMALL_FILE_BYTES: u64 = 16 << 20;

/// One file of a wheel.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its index in the archive.
    pub index: usize,
    /// Its name: `/`-separated, relative, no `.` or `..` components.
    pub name: String,
    /// Its uncompressed size, as the central directory declares it.
    pub size: u64,
    /// Whether its Unix mode is a regular file's with an execute bit (pip then makes the
    /// installed file executable).
    pub executable: bool,
}

/// An opened, checked wheel.
pub(crate) struct Wheel {
    /// Where it is.
    pub path: PathBuf,
    /// The archive.
    pub archive: ZipArchive<File>,
    /// Its files (directories left out), in archive order.
    pub files: Vec<Entry>,
    /// Its `.dist-info` directory's name.
    pub dist_info: String,
    /// Its `METADATA`.
    pub metadata: Metadata,
    /// Its `entry_points.txt`, if it has one.
    pub entry_points: Option<String>,
}

impl Wheel {
    /// Opens and checks the wheel at `path`, which should hold the project `name`.
    pub fn open(path: &Path, name: &PackageName) -> Result<Wheel, Stop> {
        let shown = path.display();
        let file = File::open(path).map_err(|e| Stop::Failed(format!("{shown}: {e}")))?;
        let mut archive = ZipArchive::new(file)
            .map_err(|e| Stop::Failed(format!("{shown} is not a valid wheel (zip): {e}")))?;
        if archive.len() > MAX_ENTRIES {
            return Err(Stop::Failed(format!("{shown} has too many entries")));
        }
        let files = check_entries(&mut archive, path)?;
        let dist_info = find_dist_info(&files, name, path)?;
        let mut wheel = Wheel {
            path: path.to_path_buf(),
            archive,
            files,
            dist_info,
            metadata: Metadata::default(),
            entry_points: None,
        };
        let wheel_file = wheel
            .read_small(&format!("{}/WHEEL", wheel.dist_info))?
            .ok_or_else(|| Stop::skip(format!("{shown} has no WHEEL file")))?;
        check_wheel_version(&wheel_file, path)?;
        if wheel.find(&format!("{}/RECORD", wheel.dist_info)).is_none() {
            return Err(Stop::skip(format!("{shown} has no RECORD")));
        }
        let metadata = wheel
            .read_small(&format!("{}/METADATA", wheel.dist_info))?
            .ok_or_else(|| Stop::skip(format!("{shown} has no METADATA")))?;
        wheel.metadata =
            Metadata::parse(&metadata).map_err(|e| Stop::skip(format!("{shown}: {e}")))?;
        wheel.entry_points = wheel.read_small(&format!("{}/entry_points.txt", wheel.dist_info))?;
        Ok(wheel)
    }

    fn find(&self, name: &str) -> Option<&Entry> {
        self.files.iter().find(|entry| entry.name == name)
    }

    /// The text of the small file `name`, if the wheel has it.
    fn read_small(&mut self, name: &str) -> Result<Option<String>, Stop> {
        let Some(entry) = self.find(name).cloned() else {
            return Ok(None);
        };
        let shown = format!("{}: {name}", self.path.display());
        if entry.size > MAX_SMALL_FILE_BYTES {
            return Err(Stop::Failed(format!("{shown} is too large")));
        }
        let mut bytes = Vec::new();
        self.archive
            .by_index(entry.index)
            .and_then(|file| Ok(file.take(entry.size + 1).read_to_end(&mut bytes)?))
            .map_err(|e| Stop::Failed(format!("{shown} cannot be read: {e}")))?;
        if bytes.len() as u64 != entry.size {
            return Err(Stop::Failed(format!(
                "{shown} is not the size its entry declares"
            )));
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| Stop::Failed(format!("{shown} is not UTF-8")))
    }
}

/// The archive's files, each name checked; every way out of the target directory, a link,
/// a size past the limits or a name twice is an error.
fn check_entries(archive: &mut ZipArchive<File>, path: &Path) -> Result<Vec<Entry>, Stop> {
    let shown = path.display();
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| Stop::Failed(format!("{shown} is not a valid wheel (zip): {e}")))?;
        let name = entry
            .name()
            .map_err(|e| Stop::Failed(format!("{shown} has an unreadable entry name: {e}")))?
            .into_owned();
        if !is_safe_name(&name) {
            return Err(Stop::Failed(format!(
                "{shown} has an entry {name:?} that would be written outside its directory"
            )));
        }
        if entry.is_symlink() {
            return Err(Stop::Failed(format!(
                "{shown} has a symbolic link {name:?}"
            )));
        }
        if entry.encrypted() {
            return Err(Stop::Failed(format!(
                "{shown} has an encrypted entry {name:?}"
            )));
        }
        if !seen.insert(name.clone()) {
            return Err(Stop::Failed(format!(
                "{shown} has the entry {name:?} twice"
            )));
        }
        if entry.is_dir() {
            continue;
        }
        if !matches!(
            entry.compression(),
            CompressionMethod::Stored | CompressionMethod::Deflated
        ) {
            return Err(Stop::skip(format!(
                "{shown}: {name:?} uses an unsupported compression"
            )));
        }
        let size = entry.size();
        total = total.saturating_add(size);
        if size > MAX_FILE_BYTES || total > MAX_WHEEL_BYTES {
            return Err(Stop::Failed(format!(
                "{shown}: {name:?} declares {size} bytes, past the limit of {MAX_FILE_BYTES} \
                 bytes a file ({MAX_WHEEL_BYTES} a wheel)"
            )));
        }
        let mode = entry.unix_mode().unwrap_or(0);
        files.push(Entry {
            index,
            name,
            size,
            executable: mode & 0o170000 == 0o100000 && mode & 0o111 != 0,
        });
    }
    Ok(files)
}

/// A relative `/`-separated name with no empty, `.` or `..` component, no backslash and no
/// control character (a directory's name ends with one `/`).
fn is_safe_name(name: &str) -> bool {
    let trimmed = name.strip_suffix('/').unwrap_or(name);
    !trimmed.is_empty()
        && !name.contains('\\')
        && !name.chars().any(char::is_control)
        && trimmed
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// The one top-level `.dist-info` directory, named for `name` (pip's check).
fn find_dist_info(files: &[Entry], name: &PackageName, path: &Path) -> Result<String, Stop> {
    let mut found: Vec<&str> = files
        .iter()
        .filter_map(|entry| entry.name.split_once('/').map(|(top, _)| top))
        .filter(|top| top.ends_with(".dist-info"))
        .collect();
    found.sort_unstable();
    found.dedup();
    let [dist_info] = found.as_slice() else {
        return Err(Stop::skip(format!(
            "{} has {} .dist-info directories",
            path.display(),
            found.len()
        )));
    };
    if !crate::metadata::normalize_name(dist_info).starts_with(name.as_ref()) {
        return Err(Stop::skip(format!(
            "{} holds {dist_info}, not {name}",
            path.display()
        )));
    }
    Ok((*dist_info).to_owned())
}

/// `Wheel-Version: 1.x`, which pip installs (a later 1.x with a warning).
fn check_wheel_version(text: &str, path: &Path) -> Result<(), Stop> {
    let version = text.lines().find_map(|line| {
        let (field, value) = line.split_once(':')?;
        field
            .trim()
            .eq_ignore_ascii_case("Wheel-Version")
            .then(|| value.trim())
    });
    match version.and_then(|v| v.split('.').next()) {
        Some("1") => Ok(()),
        _ => Err(Stop::skip(format!(
            "{}: Wheel-Version {version:?} is not 1.x",
            path.display()
        ))),
    }
}
