//! Writing a subdir's `repodata.json`.

use std::path::Path;

use rattler_conda_types::PackageRecord;
use serde_json::json;

use super::ChannelBuildError;

/// Writes `<subdir_dir>/repodata.json` listing `records` (file name, record) as `.tar.bz2`
/// packages of `subdir`.
pub(super) fn write(
    subdir_dir: &Path,
    subdir: &str,
    records: &[(String, PackageRecord)],
) -> Result<(), ChannelBuildError> {
    let mut packages = serde_json::Map::new();
    for (file_name, record) in records {
        let value = serde_json::to_value(record).map_err(|error| ChannelBuildError::Record {
            package: file_name.clone(),
            detail: error.to_string(),
        })?;
        packages.insert(file_name.clone(), value);
    }
    let repodata = json!({
        "info": { "subdir": subdir },
        "packages": packages,
        "packages.conda": {},
        "removed": [],
        "repodata_version": 1,
    });
    let path = subdir_dir.join("repodata.json");
    std::fs::write(&path, repodata.to_string())
        .map_err(ChannelBuildError::io(format!("writing {}", path.display())))
}
