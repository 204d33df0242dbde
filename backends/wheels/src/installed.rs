//! The distributions already in the environment (as the caller scanned them), and the
//! requirements of one of them, read from its `METADATA` as untrusted input.

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;

use pep440_rs::Version;
use pep508_rs::PackageName;
use wsp_protocol::Package;

use crate::metadata::{normalize_name, Metadata};
use crate::tree::read_bounded;
use crate::Stop;

/// The most bytes of an installed `METADATA` read.
const METADATA_LIMIT: u64 = 16 << 20;

/// What is installed.
pub(crate) struct Installed {
    site_packages: PathBuf,
    by_name: HashMap<String, Vec<String>>,
}

impl Installed {
    /// The distributions `packages`, installed in `site_packages`.
    pub fn new(site_packages: PathBuf, packages: &[Package]) -> Installed {
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for package in packages {
            by_name
                .entry(normalize_name(&package.name))
                .or_default()
                .push(package.version.clone());
        }
        Installed {
            site_packages,
            by_name,
        }
    }

    /// The installed version of `name`, if it is installed once with a version that parses.
    pub fn version(&self, name: &PackageName) -> Option<Result<Version, Stop>> {
        let versions = self.by_name.get(name.as_ref())?;
        let [version] = versions.as_slice() else {
            return Some(Err(Stop::skip(format!(
                "{name} is installed more than once"
            ))));
        };
        Some(
            Version::from_str(version)
                .map_err(|_| Stop::skip(format!("{name} is installed at version {version:?}"))),
        )
    }

    /// The metadata of the installed `name`, from its `.dist-info` (not followed through a
    /// symlink).
    pub fn metadata(&self, name: &PackageName) -> Result<Metadata, Stop> {
        let unreadable = |why: String| Stop::skip(format!("installed {name}: {why}"));
        let version = match self.by_name.get(name.as_ref()).map(Vec::as_slice) {
            Some([version]) => version,
            _ => return Err(unreadable("not installed once".to_owned())),
        };
        let expected = normalize_name(&format!("{name}-{version}.dist-info"));
        let entries =
            std::fs::read_dir(&self.site_packages).map_err(|e| unreadable(e.to_string()))?;
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let matches = entry
                .file_name()
                .to_str()
                .is_some_and(|file| normalize_name(file) == expected);
            if matches && entry.file_type().is_ok_and(|t| t.is_dir()) {
                found.push(entry.path());
            }
        }
        let [dist_info] = found.as_slice() else {
            return Err(unreadable(format!(
                "{} .dist-info directories",
                found.len()
            )));
        };
        let bytes = read_bounded(&dist_info.join("METADATA"), METADATA_LIMIT)
            .map_err(|e| unreadable(e.to_string()))?;
        let text =
            String::from_utf8(bytes).map_err(|_| unreadable("METADATA is not UTF-8".into()))?;
        Metadata::parse(&text).map_err(unreadable)
    }
}
