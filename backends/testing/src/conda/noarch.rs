//! Writing a `noarch: python` package: Python files under `site-packages/`, which conda (and
//! rattler) link into the prefix's own `lib/pythonX.Y/site-packages`.

use std::path::{Path, PathBuf};

use rattler_conda_types::{PackageRecord, Subdir};
use rattler_digest::{compute_file_digest, Sha256};
use serde_json::json;

use super::staging::{create_parent, hex, pack, staging_dir, write_info, TIMESTAMP_MS};
use super::{ChannelBuildError, CondaPackage, BUILD_STRING};

/// Writes `<name>-<version>-0.tar.bz2` for `package` into `noarch_dir` and returns its file
/// name and repodata record.
pub(super) fn write_noarch_package(
    channel_dir: &Path,
    noarch_dir: &Path,
    package: &CondaPackage,
) -> Result<(String, PackageRecord), ChannelBuildError> {
    let staging = staging_dir(channel_dir)?;
    let root = staging.path();
    let mut depends = vec!["python".to_owned()];
    depends.extend(package.depends.iter().cloned());
    let index_json = json!({
        "arch": null,
        "build": BUILD_STRING,
        "build_number": 0,
        "depends": depends,
        "license": "MIT",
        "name": package.name,
        "noarch": "python",
        "platform": null,
        "subdir": Subdir::NoArch.as_str(),
        "timestamp": TIMESTAMP_MS,
        "version": package.version,
    });
    let mut paths = Vec::new();
    let mut files = String::new();
    let mut staged: Vec<PathBuf> = Vec::new();
    let modules = package
        .files()
        .into_iter()
        .map(|(relative, contents)| (format!("site-packages/{relative}"), contents));
    let raw = package.raw_files.iter().cloned();
    for (index, (relative, contents)) in modules.chain(raw).enumerate() {
        let path = root.join(staged_path(&relative, index));
        create_parent(&path)?;
        std::fs::write(&path, &contents)
            .map_err(ChannelBuildError::io(format!("writing {}", path.display())))?;
        let digest = compute_file_digest::<Sha256>(&path)
            .map_err(ChannelBuildError::io(format!("hashing {}", path.display())))?;
        paths.push(json!({
            "_path": relative,
            "path_type": "hardlink",
            "sha256": hex(&digest),
            "size_in_bytes": contents.len(),
        }));
        files.push_str(&format!("{relative}\n"));
        staged.push(path);
    }
    let link_json = json!({"noarch": {"type": "python"}, "package_metadata_version": 1});
    let paths_json = json!({ "paths": paths, "paths_version": 1 });
    staged.extend(write_info(
        root,
        [
            ("index.json", index_json.to_string()),
            ("paths.json", paths_json.to_string()),
            ("link.json", link_json.to_string()),
            ("files", files),
        ],
    )?);
    let file_name = format!(
        "{}-{}-{BUILD_STRING}.tar.bz2",
        package.name, package.version
    );
    pack(noarch_dir, file_name, root, &staged, &index_json)
}

/// Where a file listed in `paths.json` as `listed` is packed: there, when that is a plain
/// relative path, else at `raw/<index>` so that staging never writes outside its directory.
fn staged_path(listed: &str, index: usize) -> PathBuf {
    let plain = !listed.is_empty()
        && listed
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if plain {
        PathBuf::from(listed)
    } else {
        PathBuf::from(format!("raw/{index}"))
    }
}
