//! A conda prefix without pip gets the pip stubs, so `pip` run in it never reaches a pip further
//! along `PATH` (the host's); a conda package that brings its own `bin/pip` takes the name, and
//! removing that package gives the stub back.

use serde_json::json;
use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};

use crate::install_support::ok;
use crate::support::Server;

const STUB_SAYS: &str = "pip is not installed in this environment";

#[tokio::test]
async fn pip_in_a_conda_prefix_without_pip_refuses_until_a_pip_package_is_installed() {
    let temp = tempfile::tempdir().unwrap();
    let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has Python 3.12.1");
    let own_pip = "#!/bin/sh\necho the package's pip\n";
    let pip = CondaPackage::new("pip", "24.0").raw_file("bin/pip", own_pip);
    let channel = build_local_channel_with(&temp.path().join("channel"), &[python], &[pip])
        .expect("the channel");
    let args = ["--backend", "conda", "--channel", channel.as_str()];
    let mut server = Server::start_in(&temp.path().join("state"), &args);
    server.initialize().await;

    let params = json!({"name": "no-pip", "python_version": "3.12"});
    let created = ok(&mut server, 1, "environment/create", params).await;
    let id = created["id"].clone();
    let prefix = std::path::PathBuf::from(created["extra"]["path"].as_str().expect("a path"));
    for (n, name) in ["pip", "pip3", "pip3.12"].into_iter().enumerate() {
        let argv = json!([name, "install", "anything"]);
        let params = json!({"id": id, "argv": argv});
        let ran = ok(&mut server, 10 + n as i64, "environment/execute", params).await;
        assert_eq!(ran["exit_code"], 1, "{name}: {ran}");
        let said = ran["stderr"].as_str().unwrap_or_default();
        assert!(said.contains(STUB_SAYS), "{name}: {ran}");
    }

    let params = json!({"id": id, "packages": ["pip"]});
    ok(&mut server, 20, "environment/install", params).await;
    let pip = std::fs::read_to_string(prefix.join("bin/pip")).expect("bin/pip");
    assert_eq!(pip, own_pip, "the package's bin/pip replaced the stub");
    let pip3 = std::fs::read_to_string(prefix.join("bin/pip3")).expect("bin/pip3");
    assert!(
        pip3.contains(STUB_SAYS),
        "a name the package left free keeps its stub"
    );

    let params = json!({"id": id, "packages": ["pip"]});
    ok(&mut server, 21, "environment/uninstall", params).await;
    let pip = std::fs::read_to_string(prefix.join("bin/pip")).expect("bin/pip");
    assert!(
        pip.contains(STUB_SAYS),
        "the stub is back once the package is gone: {pip}"
    );
    server.finish().await;
}
