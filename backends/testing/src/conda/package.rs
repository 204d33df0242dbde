//! Writing one `python` package: staging its files and metadata, then packing them as a
//! `.tar.bz2` archive.

use std::path::{Path, PathBuf};

use rattler_conda_types::compression_level::CompressionLevel;
use rattler_conda_types::package::{IndexJson, PackageFile};
use rattler_conda_types::{PackageRecord, Subdir};
use rattler_digest::{compute_file_digest, Md5, Sha256};
use rattler_package_streaming::write::write_tar_bz2_package;
use serde_json::json;

use super::{ChannelBuildError, PythonBuild, BUILD_STRING};

/// The fixed `timestamp` of every package, in milliseconds since the epoch, so that a
/// channel built twice from the same builds has the same repodata.
pub(super) const TIMESTAMP_MS: u64 = 1_700_000_000_000;

/// One file of the package, relative to its root.
enum Entry {
    /// A regular file with these contents.
    File(PathBuf, String),
    /// A symlink to this target.
    Symlink(PathBuf, PathBuf),
}

impl Entry {
    fn path(&self) -> &Path {
        match self {
            Entry::File(path, _) | Entry::Symlink(path, _) => path,
        }
    }
}

/// Writes `python-<version>-0.tar.bz2` for `build` into `subdir_dir` (staging it in a
/// temporary directory under `channel_dir`) and returns its file name and repodata record.
pub(super) fn write_python_package(
    channel_dir: &Path,
    subdir_dir: &Path,
    subdir: Subdir,
    build: &PythonBuild,
) -> Result<(String, PackageRecord), ChannelBuildError> {
    let major_minor = build
        .major_minor()
        .ok_or_else(|| ChannelBuildError::InvalidVersion(build.version.clone()))?;
    let interpreter = std::path::absolute(&build.interpreter).map_err(ChannelBuildError::io(
        format!("resolving {}", build.interpreter.display()),
    ))?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(channel_dir)
        .map_err(ChannelBuildError::io(format!(
            "creating a staging directory in {}",
            channel_dir.display()
        )))?;
    let root = staging.path();

    let entries = payload(major_minor, &build.version, &interpreter);
    for entry in &entries {
        stage(root, entry)?;
    }
    let index_json = index_json(&build.version, subdir);
    stage_metadata(root, &entries, &index_json)?;

    let file_name = format!("python-{}-{BUILD_STRING}.tar.bz2", build.version);
    let archive = subdir_dir.join(&file_name);
    let mut paths: Vec<PathBuf> = ["info/index.json", "info/paths.json", "info/files"]
        .iter()
        .map(|path| root.join(path))
        .collect();
    paths.extend(entries.iter().map(|entry| root.join(entry.path())));
    let file = std::fs::File::create(&archive).map_err(ChannelBuildError::io(format!(
        "creating {}",
        archive.display()
    )))?;
    write_tar_bz2_package(
        std::io::BufWriter::new(file),
        root,
        &paths,
        CompressionLevel::Lowest,
        None,
        None,
    )
    .map_err(ChannelBuildError::io(format!(
        "packing {}",
        archive.display()
    )))?;

    let record = record(&archive, &file_name, &index_json)?;
    Ok((file_name, record))
}

/// The files a `python` package over `interpreter` installs.
fn payload(major_minor: &str, version: &str, interpreter: &Path) -> Vec<Entry> {
    let versioned = format!("python{major_minor}");
    let home = interpreter.parent().unwrap_or(Path::new("/"));
    let pyvenv_cfg = format!(
        "home = {}\ninclude-system-site-packages = false\nversion = {version}\n",
        home.display()
    );
    let readme = "This directory exists so that the prefix has a site-packages directory.\n";
    vec![
        Entry::Symlink(PathBuf::from("bin/python"), PathBuf::from(&versioned)),
        Entry::Symlink(PathBuf::from("bin/python3"), PathBuf::from(&versioned)),
        Entry::Symlink(
            PathBuf::from(format!("bin/{versioned}")),
            interpreter.to_path_buf(),
        ),
        Entry::File(
            PathBuf::from(format!("lib/{versioned}/site-packages/README")),
            readme.to_owned(),
        ),
        Entry::File(PathBuf::from("pyvenv.cfg"), pyvenv_cfg),
    ]
}

/// The package's `info/index.json`.
fn index_json(version: &str, subdir: Subdir) -> serde_json::Value {
    json!({
        "arch": subdir.arch().map(|arch| arch.as_str()),
        "build": BUILD_STRING,
        "build_number": 0,
        "depends": [],
        "license": "PSF-2.0",
        "name": "python",
        "platform": subdir.only_platform(),
        "subdir": subdir.as_str(),
        "timestamp": TIMESTAMP_MS,
        "version": version,
    })
}

/// Writes one payload entry under `root`.
fn stage(root: &Path, entry: &Entry) -> Result<(), ChannelBuildError> {
    let path = root.join(entry.path());
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(ChannelBuildError::io(format!(
            "creating {}",
            parent.display()
        )))?;
    }
    match entry {
        Entry::File(_, contents) => std::fs::write(&path, contents),
        Entry::Symlink(_, target) => std::os::unix::fs::symlink(target, &path),
    }
    .map_err(ChannelBuildError::io(format!("writing {}", path.display())))
}

/// Writes `info/index.json`, `info/paths.json` and `info/files` for `entries` under `root`.
fn stage_metadata(
    root: &Path,
    entries: &[Entry],
    index_json: &serde_json::Value,
) -> Result<(), ChannelBuildError> {
    let mut paths = Vec::new();
    for entry in entries {
        let relative = entry.path().to_string_lossy().into_owned();
        paths.push(match entry {
            Entry::File(path, contents) => {
                let digest = compute_file_digest::<Sha256>(root.join(path))
                    .map_err(ChannelBuildError::io(format!("hashing {}", path.display())))?;
                json!({
                    "_path": relative,
                    "path_type": "hardlink",
                    "sha256": hex(&digest),
                    "size_in_bytes": contents.len(),
                })
            }
            Entry::Symlink(..) => json!({ "_path": relative, "path_type": "softlink" }),
        });
    }
    let files: String = entries
        .iter()
        .map(|entry| format!("{}\n", entry.path().display()))
        .collect();
    let info = root.join("info");
    std::fs::create_dir_all(&info).map_err(ChannelBuildError::io(format!(
        "creating {}",
        info.display()
    )))?;
    let paths_json = json!({ "paths": paths, "paths_version": 1 });
    for (name, contents) in [
        ("index.json", index_json.to_string()),
        ("paths.json", paths_json.to_string()),
        ("files", files),
    ] {
        let path = info.join(name);
        std::fs::write(&path, contents)
            .map_err(ChannelBuildError::io(format!("writing {}", path.display())))?;
    }
    Ok(())
}

/// The repodata record of the packed archive.
pub(super) fn record(
    archive: &Path,
    file_name: &str,
    index_json: &serde_json::Value,
) -> Result<PackageRecord, ChannelBuildError> {
    let record_error = |detail: String| ChannelBuildError::Record {
        package: file_name.to_owned(),
        detail,
    };
    let index = IndexJson::from_str(&index_json.to_string())
        .map_err(|error| record_error(error.to_string()))?;
    let size = std::fs::metadata(archive)
        .map_err(ChannelBuildError::io(format!(
            "reading {}",
            archive.display()
        )))?
        .len();
    let hash_error = ChannelBuildError::io(format!("hashing {}", archive.display()));
    let sha256 = compute_file_digest::<Sha256>(archive).map_err(hash_error)?;
    let hash_error = ChannelBuildError::io(format!("hashing {}", archive.display()));
    let md5 = compute_file_digest::<Md5>(archive).map_err(hash_error)?;
    PackageRecord::from_index_json(index, Some(size), Some(sha256), Some(md5))
        .map_err(|error| record_error(error.to_string()))
}

/// Lowercase hexadecimal digits of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
