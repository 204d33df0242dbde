//! `wsp.toml` in the state directory, over the real binary: a server takes its backend's
//! options from it, a flag given to `wsp serve` wins over it, and a key it does not know
//! stops the server at startup, named with its line.

use serde_json::json;

use crate::install_support::{installed, ok, share_seed_cache, wheels};
use crate::run::{command, expect_status, stderr};
use crate::support::{error_code, Server};

#[tokio::test]
async fn a_server_takes_its_options_from_wsp_toml_and_flags_win() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    share_seed_cache(&state);
    wheels(&state.join("wheels"));
    let file = "backend = \"uv\"\n\n[venv]\nseed_pip = true\n\n\
                [install]\nfind_links = [\"wheels\"]\nno_index = true\n";
    std::fs::write(state.join("wsp.toml"), file).unwrap();

    let mut server = Server::start_in(&state, &[]);
    let init = server.initialize().await;
    assert_eq!(init["result"]["backend"], "uv", "{init}");
    let params = json!({"name": "seeded", "python_version": "3.12", "backend": "venv"});
    let seeded = ok(&mut server, 1, "environment/create", params).await;
    assert!(seeded["extra"]["pip_seed"].is_string(), "{seeded}");
    let names: Vec<String> = installed(&seeded).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["pip"]);
    let params = json!({"id": seeded["id"], "packages": ["wsp-gamma"]});
    let details = ok(&mut server, 2, "environment/install", params).await;
    assert!(
        installed(&details)
            .iter()
            .any(|(name, _)| name == "wsp-gamma"),
        "the file's find_links and no_index: {details}"
    );
    server.finish().await;

    let elsewhere = temp.path().join("empty");
    std::fs::create_dir(&elsewhere).unwrap();
    let elsewhere = elsewhere.display().to_string();
    let flags = ["--backend", "venv", "--find-links", elsewhere.as_str()];
    let mut server = Server::start_in(&state, &flags);
    let init = server.initialize().await;
    assert_eq!(init["result"]["backend"], "venv", "{init}");
    let params = json!({"id": seeded["id"], "packages": ["wsp-alpha"]});
    let (_, answer) =
        crate::install_support::call_collecting(&mut server, 3, "environment/install", params)
            .await;
    assert_eq!(
        error_code(&answer),
        -31004,
        "--find-links replaces the file's: {answer}"
    );
    server.finish().await;
}

#[test]
fn an_unknown_key_in_wsp_toml_stops_the_server_at_startup() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let file = "backend = \"venv\"\n[venv]\nseed_pips = true\n";
    std::fs::write(state.join("wsp.toml"), file).unwrap();
    let ran = command(&state).arg("serve").output().expect("wsp runs");
    expect_status(&ran, 2, "an unknown key");
    let said = stderr(&ran);
    assert!(said.contains("wsp.toml"), "{said}");
    assert!(
        said.contains("seed_pips") && said.contains("line 3"),
        "{said}"
    );
}
