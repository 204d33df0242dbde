//! What writing any package takes: a staging directory, its files and `info/` metadata
//! written there, and the archive packed from them with its repodata record.

use std::path::{Path, PathBuf};

use rattler_conda_types::compression_level::CompressionLevel;
use rattler_conda_types::package::{IndexJson, PackageFile};
use rattler_conda_types::PackageRecord;
use rattler_digest::{compute_file_digest, Md5, Sha256};
use rattler_package_streaming::write::write_tar_bz2_package;

use super::ChannelBuildError;

/// The fixed `timestamp` of every package, in milliseconds since the epoch, so that a
/// channel built twice from the same builds has the same repodata.
pub(super) const TIMESTAMP_MS: u64 = 1_700_000_000_000;

/// A temporary directory under `channel_dir` to stage a package's files in.
pub(super) fn staging_dir(channel_dir: &Path) -> Result<tempfile::TempDir, ChannelBuildError> {
    tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(channel_dir)
        .map_err(ChannelBuildError::io(format!(
            "creating a staging directory in {}",
            channel_dir.display()
        )))
}

/// Creates the directory `path` goes in.
pub(super) fn create_parent(path: &Path) -> Result<(), ChannelBuildError> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent).map_err(ChannelBuildError::io(format!(
            "creating {}",
            parent.display()
        ))),
        None => Ok(()),
    }
}

/// Writes each (name, contents) of `files` into `root/info`; returns the files' paths.
pub(super) fn write_info<const N: usize>(
    root: &Path,
    files: [(&str, String); N],
) -> Result<Vec<PathBuf>, ChannelBuildError> {
    let info = root.join("info");
    std::fs::create_dir_all(&info).map_err(ChannelBuildError::io(format!(
        "creating {}",
        info.display()
    )))?;
    let mut written = Vec::with_capacity(N);
    for (name, contents) in files {
        let path = info.join(name);
        std::fs::write(&path, contents)
            .map_err(ChannelBuildError::io(format!("writing {}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// Packs `staged` (paths under `root`) as the archive `dir/file_name`; returns its file name
/// and repodata record, read from `index_json`.
pub(super) fn pack(
    dir: &Path,
    file_name: String,
    root: &Path,
    staged: &[PathBuf],
    index_json: &serde_json::Value,
) -> Result<(String, PackageRecord), ChannelBuildError> {
    let archive = dir.join(&file_name);
    let file = std::fs::File::create(&archive).map_err(ChannelBuildError::io(format!(
        "creating {}",
        archive.display()
    )))?;
    write_tar_bz2_package(
        std::io::BufWriter::new(file),
        root,
        staged,
        CompressionLevel::Lowest,
        None,
        None,
    )
    .map_err(ChannelBuildError::io(format!(
        "packing {}",
        archive.display()
    )))?;
    let record = record(&archive, &file_name, index_json)?;
    Ok((file_name, record))
}

/// The repodata record of the packed archive.
fn record(
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
