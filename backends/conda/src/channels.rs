//! Channels and their repodata: parsing the configured channels, querying them through
//! rattler's repodata gateway, and listing the Python versions they offer.

use std::path::PathBuf;
use std::str::FromStr;
use wsp_protocol::FailureReason;

use rattler::package_cache::PackageCache;
use rattler_conda_types::{
    Channel, ChannelConfig, MatchSpec, ParseStrictness, RepoDataRecord, Subdir, Version,
};
use rattler_repodata_gateway::{Gateway, RepoData};
use wsp_backend::BackendError;

use crate::CondaConfig;

/// The configured channels, parsed, with the platform to install for and a gateway to read
/// their repodata.
pub(crate) struct ChannelSet {
    /// The channels, highest priority first.
    pub channels: Vec<Channel>,
    /// The platform (subdir) packages are installed for.
    pub platform: Subdir,
    /// Shared by every query of one provisioning, so each subdir is read once.
    gateway: Gateway,
    /// The package cache the gateway and the installer share.
    pub package_cache: PackageCache,
}

impl ChannelSet {
    /// Parses the configuration's channels and platform.
    pub fn new(config: &CondaConfig) -> Result<Self, BackendError> {
        if config.channels.is_empty() {
            return Err(BackendError::failed(
                FailureReason::ChannelUnavailable,
                "no conda channel is configured",
            ));
        }
        let root_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let channel_config = ChannelConfig::default_with_root_dir(root_dir);
        let channels = config
            .channels
            .iter()
            .map(|channel| {
                Channel::from_str(channel, &channel_config).map_err(|error| {
                    BackendError::caused_by(
                        FailureReason::ChannelUnavailable,
                        format!("`{channel}` is not a conda channel"),
                        error,
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !cfg!(feature = "https") {
            if let Some(channel) = channels
                .iter()
                .find(|channel| channel.base_url.url().scheme() == "https")
            {
                return Err(BackendError::failed(
                    FailureReason::ChannelUnavailable,
                    format!(
                        "{} is an https channel, and this build of wsp-backend-conda has no TLS \
                         support (its `https` feature is off)",
                        channel.base_url
                    ),
                ));
            }
        }
        let platform = platform(config.platform.as_deref())?;
        let package_cache = PackageCache::new(config.cache_dir.join("pkgs"));
        let gateway = Gateway::builder()
            .with_cache_dir(config.cache_dir.join("repodata"))
            .with_package_cache(package_cache.clone())
            .finish();
        Ok(ChannelSet {
            channels,
            platform,
            gateway,
            package_cache,
        })
    }

    /// The channels' base URLs, as reported in an environment's `extra`.
    pub fn urls(&self) -> Vec<String> {
        self.channels
            .iter()
            .map(|channel| channel.base_url.to_string())
            .collect()
    }

    /// The records matching `specs` in the platform's and `noarch` subdirs, one [`RepoData`]
    /// per channel and subdir; with `recursive`, the records of everything they depend on too.
    pub async fn query(
        &self,
        specs: Vec<MatchSpec>,
        recursive: bool,
    ) -> Result<Vec<RepoData>, BackendError> {
        let output = self
            .gateway
            .query(
                self.channels.iter().cloned(),
                [self.platform, Subdir::NoArch],
                specs,
            )
            .recursive(recursive)
            .execute()
            .await
            .map_err(|error| {
                BackendError::caused_by(
                    FailureReason::ChannelUnavailable,
                    format!("reading the repodata of {}", self.urls().join(", ")),
                    error,
                )
            })?;
        Ok(output.repodata)
    }

    /// Every `python` record the channels offer for the platform.
    pub async fn python_records(&self) -> Result<Vec<RepoDataRecord>, BackendError> {
        let repodata = self.query(vec![match_spec("python")?], false).await?;
        Ok(repodata
            .iter()
            .flat_map(|subdir| subdir.iter())
            .filter(|record| record.package_record.name.as_normalized() == "python")
            .cloned()
            .collect())
    }

    /// The versions of `records`, ascending, each once.
    pub fn versions(records: &[RepoDataRecord]) -> Vec<String> {
        let mut versions: Vec<&Version> = records
            .iter()
            .map(|record| record.package_record.version.version())
            .collect();
        versions.sort();
        versions.dedup();
        versions.iter().map(ToString::to_string).collect()
    }
}

/// Parses a match spec the backend itself wrote.
pub(crate) fn match_spec(spec: &str) -> Result<MatchSpec, BackendError> {
    MatchSpec::from_str(spec, ParseStrictness::Strict).map_err(|error| {
        BackendError::caused_by(
            FailureReason::ProvisionFailed,
            format!("invalid match spec `{spec}`"),
            error,
        )
    })
}

/// The configured platform, or this machine's.
fn platform(configured: Option<&str>) -> Result<Subdir, BackendError> {
    match configured {
        Some(name) => Subdir::from_str(name).map_err(|error| {
            BackendError::caused_by(
                FailureReason::ProvisionFailed,
                format!("`{name}` is not a conda platform"),
                error,
            )
        }),
        None => Subdir::current().ok_or_else(|| {
            BackendError::failed(
                FailureReason::ProvisionFailed,
                "this machine's conda platform is unknown; configure one",
            )
        }),
    }
}
