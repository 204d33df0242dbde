//! Shared test setup: a local channel over pyenv's 3.11.7 and 3.12.1, a backend reading it, and
//! helpers to ask it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tempfile::TempDir;
use url::Url;
use wsp_backend::{
    Backend, BackendError, DescribeRequest, Description, ProvisionRequest, Provisioned, RunRequest,
};
use wsp_backend_conda::{CondaBackend, CondaConfig};
use wsp_interpreters::VersionRequest;
use wsp_protocol::ExecuteResult;
use wsp_testing::conda::{build_local_channel, PythonBuild};

/// The pyenv versions the channel offers.
pub const VERSIONS: [&str; 2] = ["3.11.7", "3.12.1"];

/// A temporary directory holding a channel, a package cache and prefixes.
pub struct Fixture {
    pub dir: TempDir,
    pub channel: Url,
    pub backend: CondaBackend,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let builds: Vec<PythonBuild> = VERSIONS
            .iter()
            .map(|version| {
                PythonBuild::from_pyenv(version)
                    .unwrap_or_else(|| panic!("pyenv has no Python {version}"))
            })
            .collect();
        let channel = build_local_channel(&dir.path().join("channel"), &builds).unwrap();
        let backend = backend(&[channel.to_string()], &dir.path().join("cache"));
        Fixture {
            dir,
            channel,
            backend,
        }
    }

    /// An empty directory for a prefix, as the server's store hands it over.
    pub fn new_root(&self, name: &str) -> PathBuf {
        let root = self.dir.path().join("envs").join(name);
        std::fs::create_dir_all(&root).unwrap();
        root.canonicalize().unwrap()
    }
}

pub fn backend(channels: &[String], cache_dir: &Path) -> CondaBackend {
    CondaBackend::new(CondaConfig {
        channels: channels.to_vec(),
        cache_dir: cache_dir.to_path_buf(),
        platform: None,
    })
}

pub async fn provision(
    backend: &CondaBackend,
    root: &Path,
    version: &str,
) -> Result<Provisioned, BackendError> {
    let request = ProvisionRequest {
        root: root.to_path_buf(),
        name: "test".into(),
        python_version: version.parse::<VersionRequest>().unwrap(),
        interpreter: None,
    };
    backend.provision(request).await
}

pub async fn describe(backend: &CondaBackend, root: &Path) -> Description {
    let request = DescribeRequest {
        root: root.to_path_buf(),
    };
    backend.describe(request).await.unwrap()
}

pub async fn run(
    backend: &CondaBackend,
    root: &Path,
    argv: &[&str],
    env: &[(&str, &str)],
) -> ExecuteResult {
    let request = RunRequest {
        root: root.to_path_buf(),
        environment_id: "env-0123456789ab".into(),
        argv: argv.iter().map(|arg| arg.to_string()).collect(),
        cwd: wsp_exec::resolve_cwd(root, None).unwrap(),
        env: env
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect::<BTreeMap<_, _>>(),
        options: Default::default(),
    };
    backend.run(request).await.unwrap()
}
