//! Hostile conda records and packages over the real binary (`wsp serve --backend conda` on a
//! local channel): a record planted in `conda-meta/` by a sandboxed command cannot make an
//! uninstall delete outside the prefix, neither by its paths nor through a symlink planted in
//! the prefix; a package with an absolute path fails its install and the server serves on; a
//! package that ships files into `conda-meta/`, or would link through a planted symlink, is
//! refused and changes nothing.

use std::path::{Path, PathBuf};

use crate::support::{error_code, request, Server};
use serde_json::{json, Value};
use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};

/// A conda server over a local channel holding Python 3.12.1 and `packages`, with a directory
/// outside every prefix that holds a file nothing may delete.
struct Conda {
    temp: tempfile::TempDir,
    server: Server,
    next_id: i64,
}

impl Conda {
    async fn start(packages: &[CondaPackage]) -> Conda {
        let temp = tempfile::tempdir().unwrap();
        let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has Python 3.12.1");
        let channel = temp.path().join("channel");
        let url = build_local_channel_with(&channel, &[python], packages).expect("the channel");
        std::fs::create_dir(temp.path().join("outside")).unwrap();
        let args = ["--backend", "conda", "--channel", url.as_str()];
        let mut server = Server::start_in(&temp.path().join("state"), &args);
        server.initialize().await;
        Conda {
            temp,
            server,
            next_id: 1,
        }
    }

    /// The directory outside the prefixes.
    fn outside(&self) -> PathBuf {
        self.temp.path().join("outside")
    }

    /// A file outside the prefixes, made now.
    fn victim(&self, name: &str) -> PathBuf {
        let path = self.outside().join(name);
        std::fs::write(&path, "nothing may delete this").unwrap();
        path
    }

    /// Sends a request and returns its response, skipping notifications.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.server.send(&request(id, method, params)).await;
        loop {
            let message = self.server.recv().await;
            if message.get("id").is_some() {
                assert_eq!(message["id"], json!(id), "{message}");
                return message;
            }
        }
    }

    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// Creates an environment; returns its id and prefix.
    async fn create(&mut self, name: &str) -> (Value, PathBuf) {
        let params = json!({"name": name, "python_version": "3.12"});
        let details = self.ok("environment/create", params).await;
        let prefix = details["extra"]["path"].as_str().expect("a path").into();
        (details["id"].clone(), prefix)
    }

    /// Runs `code` with the environment's Python inside the sandbox, as an untrusted command
    /// would.
    async fn sandboxed_python(&mut self, env: &Value, code: &str) {
        let params = json!({"id": env, "sandbox": true, "argv": ["python", "-c", code]});
        let ran = self.ok("environment/execute", params).await;
        assert_eq!(ran["exit_code"], 0, "{ran}");
    }

    /// Replaces the environment's `share` directory, from inside the sandbox, with a symlink to
    /// the directory outside the prefixes.
    async fn plant_share_symlink(&mut self, env: &Value) {
        let code = format!(
            "import os, sys\nos.symlink({:?}, os.path.join(sys.prefix, 'share'))\n",
            self.outside().display().to_string()
        );
        self.sandboxed_python(env, &code).await;
    }

    async fn installed(&mut self, env: &Value) -> Vec<(String, String)> {
        let details = self.ok("environment/get", json!({"id": env})).await;
        let packages = details["installed_packages"].as_array().expect("packages");
        packages
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().into(),
                    p["version"].as_str().unwrap().into(),
                )
            })
            .collect()
    }
}

/// Asserts `response` is `-31004` with reason `install-failed`.
fn assert_install_failed(response: &Value) {
    assert_eq!(error_code(response), -31004, "{response}");
    assert_eq!(
        response["error"]["data"]["reason"], "install-failed",
        "{response}"
    );
}

/// Python that writes `conda-meta/<name>-1.0-0.json` in the prefix (`sys.prefix`), a record of
/// package `name` listing `paths`.
fn plant_record(name: &str, paths: &[&str]) -> String {
    let entries: Vec<Value> = paths
        .iter()
        .map(|path| json!({"_path": path, "path_type": "hardlink"}))
        .collect();
    let record = json!({
        "name": name, "version": "1.0", "build": "0", "build_number": 0, "subdir": "noarch",
        "depends": [], "fn": format!("{name}-1.0-0.tar.bz2"),
        "url": format!("file:///nowhere/noarch/{name}-1.0-0.tar.bz2"),
        "files": paths, "paths_data": {"paths_version": 1, "paths": entries},
    });
    format!(
        "import json, os, sys\n\
         path = os.path.join(sys.prefix, 'conda-meta', '{name}-1.0-0.json')\n\
         open(path, 'w').write(json.dumps({record}))\n"
    )
}

/// The parameters of an install or uninstall of `package` in `env`.
fn packages(env: &Value, package: &str) -> Value {
    json!({"id": env, "packages": [package]})
}

/// `target` relative to `prefix`, climbing out with `..` as far as needed.
fn climbing(prefix: &Path, target: &Path) -> String {
    let depth = prefix.components().count() - 1;
    let up = "../".repeat(depth);
    format!("{up}{}", target.strip_prefix("/").unwrap().display())
}

#[tokio::test]
async fn a_planted_record_cannot_make_an_uninstall_delete_outside_the_prefix() {
    let mut conda = Conda::start(&[CondaPackage::new("wsp-alpha", "1.0")]).await;

    // A record whose paths climb out of the prefix, or start at the root.
    let (env, prefix) = conda.create("climb").await;
    let climbed = conda.victim("climbed");
    let absolute = conda.victim("absolute");
    let paths = [climbing(&prefix, &climbed), absolute.display().to_string()];
    for path in &paths {
        conda
            .sandboxed_python(&env, &plant_record("evil", &[path]))
            .await;
        let response = conda
            .call("environment/uninstall", packages(&env, "evil"))
            .await;
        assert!(
            climbed.exists(),
            "the uninstall deleted {}",
            climbed.display()
        );
        assert!(
            absolute.exists(),
            "the uninstall deleted {}",
            absolute.display()
        );
        assert_install_failed(&response);
        let detail =
            response["error"]["message"].to_string() + &response["error"]["data"].to_string();
        assert!(detail.contains("evil-1.0-0.json"), "{response}");
    }

    // The planted record refuses every install and uninstall until it is gone; then the
    // environment works as before.
    std::fs::remove_file(prefix.join("conda-meta/evil-1.0-0.json")).unwrap();
    conda
        .ok("environment/install", packages(&env, "wsp-alpha"))
        .await;
    conda
        .ok("environment/uninstall", packages(&env, "wsp-alpha"))
        .await;

    // A record with plain paths, under a directory the command replaced with a symlink to an
    // outside one.
    let (env, prefix) = conda.create("through").await;
    let through = conda.victim("through");
    conda.plant_share_symlink(&env).await;
    conda
        .sandboxed_python(&env, &plant_record("evil", &["share/through"]))
        .await;
    let response = conda
        .call("environment/uninstall", packages(&env, "evil"))
        .await;
    assert_install_failed(&response);
    assert!(
        through.exists(),
        "the uninstall deleted {} through a symlink",
        through.display()
    );
    assert!(
        prefix.join("conda-meta/evil-1.0-0.json").exists(),
        "nothing was changed"
    );
    conda.server.finish().await;
}

#[tokio::test]
async fn a_package_with_an_absolute_path_fails_its_install_and_the_server_serves_on() {
    let temp = tempfile::tempdir().unwrap();
    let target = temp.path().join("written-by-the-package");
    let package = CondaPackage::new("wsp-absolute", "1.0").raw_file(target.to_str().unwrap(), "x");
    let mut conda = Conda::start(&[package]).await;
    let (env, _) = conda.create("absolute").await;
    let before = conda.installed(&env).await;
    let response = conda
        .call("environment/install", packages(&env, "wsp-absolute"))
        .await;
    assert_install_failed(&response);
    assert!(!target.exists());
    // The server is alive and answers; the environment is as it was.
    assert_eq!(conda.installed(&env).await, before);
    let listed = conda.ok("environment/list", json!({})).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let (code, _) = conda.server.finish().await;
    assert_eq!(code, 0);
}

#[tokio::test]
async fn a_package_that_ships_files_into_conda_meta_is_refused_and_changes_nothing() {
    let alpha = CondaPackage::new("wsp-alpha", "1.0");
    let clobber = CondaPackage::new("wsp-clobber", "1.0")
        .raw_file("conda-meta/wsp-alpha-1.0-0.json", "{}")
        .raw_file("conda-meta/history", "");
    let mut conda = Conda::start(&[alpha, clobber]).await;
    let (env, prefix) = conda.create("clobber").await;
    conda
        .ok("environment/install", packages(&env, "wsp-alpha"))
        .await;
    let before = conda.installed(&env).await;
    assert!(
        before.contains(&("wsp-alpha".into(), "1.0".into())),
        "{before:?}"
    );
    let record = prefix.join("conda-meta/wsp-alpha-1.0-0.json");
    let record_before = std::fs::read(&record).unwrap();
    let response = conda
        .call("environment/install", packages(&env, "wsp-clobber"))
        .await;
    assert_install_failed(&response);
    assert_eq!(conda.installed(&env).await, before);
    assert_eq!(std::fs::read(&record).unwrap(), record_before);
    // And the environment still installs.
    conda
        .ok("environment/uninstall", packages(&env, "wsp-alpha"))
        .await;
    conda.server.finish().await;
}

#[tokio::test]
async fn a_package_is_not_linked_through_a_symlink_planted_in_the_prefix() {
    let package = CondaPackage::new("wsp-share", "1.0").raw_file("share/wsp-share/data.txt", "x");
    let mut conda = Conda::start(&[package]).await;
    let (env, _) = conda.create("linked").await;
    let outside = conda.outside();
    conda.plant_share_symlink(&env).await;
    let before = conda.installed(&env).await;
    let response = conda
        .call("environment/install", packages(&env, "wsp-share"))
        .await;
    assert_install_failed(&response);
    assert!(
        !outside.join("wsp-share").exists(),
        "the install wrote through the symlink"
    );
    assert_eq!(conda.installed(&env).await, before);
    conda.server.finish().await;
}
