//! `reuse` on the conda backend keys an environment by the python the channels would give, not
//! by the version as written: `3.12` and `3.12.1` are one environment when 3.12.1 is the newest
//! 3.12 of the channel.

use serde_json::json;
use wsp_testing::conda::{build_local_channel, PythonBuild};

use crate::install_support::ok;
use crate::support::{error_code, Server};

#[tokio::test]
async fn reuse_keys_by_the_python_the_channel_resolves() {
    let temp = tempfile::tempdir().unwrap();
    let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has Python 3.12.1");
    let channel = build_local_channel(&temp.path().join("channel"), &[python]).expect("channel");
    let args = ["--backend", "conda", "--channel", channel.as_str()];
    let mut server = Server::start_in(&temp.path().join("state"), &args);
    server.initialize().await;

    let params = json!({"name": "first", "python_version": "3.12", "reuse": true});
    let first = ok(&mut server, 1, "environment/create", params).await;
    assert_eq!(first["extra"]["reused"], false, "{first}");
    let params = json!({"name": "second", "python_version": "3.12.1", "reuse": true});
    let second = ok(&mut server, 2, "environment/create", params).await;
    assert_eq!(second["extra"]["reused"], true, "{second}");
    assert_eq!(second["id"], first["id"]);

    let params = json!({"name": "third", "python_version": "3.11", "reuse": true});
    let refused = server.call(3, "environment/create", params).await;
    assert_eq!(error_code(&refused), -31003, "{refused}");
    assert_eq!(refused["error"]["data"]["available"], json!(["3.12.1"]));
    server.finish().await;
}
