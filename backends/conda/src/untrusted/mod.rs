//! Checks of what a prefix's package records and a package's metadata say, made before
//! anything is linked or unlinked. Both are untrusted: a package comes from a channel, and a
//! record can be written by the package that installed it or by any command run in the prefix.
//!
//! Every path either names must be a plain relative path inside the prefix, outside
//! `conda-meta/` and not the server's install lock ([`check_relative_path`]). The checks run on
//! bytes as read, so that the fuzz targets (`fuzz/`) drive exactly what the backend runs.

mod packages;
mod paths;
mod records;

pub use packages::{
    check_extracted_package, check_paths_json, link_targets, PackageViolation,
    PACKAGE_METADATA_LIMIT,
};
pub use paths::{
    check_relative_path, PathViolation, INSTALL_LOCK_FILE, MAX_PART_BYTES, MAX_PATH_BYTES,
    METADATA_DIR,
};
pub use records::{check_prefix_record, record_paths, RecordViolation};

/// The Python a `noarch: python` package is linked for: where its `site-packages/` and
/// `python-scripts/` go ([`link_targets`]).
pub use rattler::install::PythonInfo;
