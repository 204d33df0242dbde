//! `$/progress` over the real binary: a create or an install that carries `work_done_token`
//! gets `begin`, the installer's own steps as `report`s, then `end`, all before its answer.

use crate::install_support::{call_collecting, create, venv_server, wheels, With};
use serde_json::{json, Value};

/// The values of the `$/progress` notifications for `token`, checked to be the only
/// notifications, in `begin`, `report`..., `end` order, with percentages that never decrease.
fn progress(notifications: &[Value], token: &Value) -> Vec<Value> {
    for n in notifications {
        assert_eq!(n["method"], "$/progress", "{n}");
        assert_eq!(&n["params"]["token"], token, "{n}");
        assert!(n["params"]["value"]["kind"].is_string(), "{n}");
    }
    wsp_conformance::progress_values(notifications, token)
}

fn messages(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .filter(|v| v["kind"] == "report")
        .map(|v| v["message"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The step lines each installer prints for these installs. With pip, local wheels and no
/// index go through `wsp-wheels` (no pip started), whose steps read as uv's.
fn expected_steps(with: With) -> [&'static str; 2] {
    match with {
        With::Uv | With::Pip => ["Resolved ", "Installed "],
    }
}

/// pip's own step lines, for an install that pip runs.
const PIP_STEPS: [&str; 2] = ["Processing ", "Successfully installed"];

#[tokio::test]
async fn an_install_reports_the_installers_steps_before_its_answer() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        server.initialize().await;
        let env = create(&mut server, 1, "progress").await["id"].clone();
        let params = json!({"id": env, "packages": ["wsp-beta"], "work_done_token": "tok",
            "find_links": [links.display().to_string()], "no_index": true});
        let (notifications, answer) =
            call_collecting(&mut server, 2, "environment/install", params).await;
        assert!(answer.get("result").is_some(), "{answer}");
        let values = progress(&notifications, &json!("tok"));
        let reports = messages(&values);
        for step in expected_steps(with) {
            assert!(
                reports.iter().any(|m| m.starts_with(step)),
                "{with:?}: no `{step}` step in {reports:?}"
            );
        }
        // Without a token, no notification at all.
        let params = json!({"id": env, "packages": ["wsp-gamma"],
            "find_links": [links.display().to_string()], "no_index": true});
        let (notifications, answer) =
            call_collecting(&mut server, 3, "environment/install", params).await;
        assert!(answer.get("result").is_some(), "{answer}");
        assert!(notifications.is_empty(), "{notifications:?}");
        if with == With::Pip {
            // Replacing an installed version is left to pip itself (as `upgrade` is): its own
            // step lines are the reports.
            let params = json!({"id": env, "packages": ["wsp-alpha==1.0"],
                "work_done_token": "pip", "find_links": [links.display().to_string()],
                "no_index": true});
            let (notifications, answer) =
                call_collecting(&mut server, 4, "environment/install", params).await;
            assert!(answer.get("result").is_some(), "{answer}");
            let reports = messages(&progress(&notifications, &json!("pip")));
            for step in PIP_STEPS {
                assert!(
                    reports.iter().any(|m| m.starts_with(step)),
                    "pip: no `{step}` step in {reports:?}"
                );
            }
        }
        server.finish().await;
    }
}

#[tokio::test]
async fn a_create_with_packages_reports_provisioning_installing_and_scanning() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        server.initialize().await;
        let params = json!({"name": "made", "python_version": "3.12", "work_done_token": 7,
            "packages": ["wsp-alpha"], "find_links": [links.display().to_string()],
            "no_index": true});
        let (notifications, answer) =
            call_collecting(&mut server, 1, "environment/create", params).await;
        assert!(answer.get("result").is_some(), "{answer}");
        let values = progress(&notifications, &json!(7));
        let reports = messages(&values);
        assert!(
            reports[0].starts_with("Provisioned Python 3.12."),
            "{reports:?}"
        );
        let installer_step = expected_steps(with)[1];
        assert!(
            reports.iter().any(|m| m.starts_with(installer_step)),
            "{reports:?}"
        );
        assert!(reports.last().unwrap().starts_with("Found "), "{reports:?}");
        let end = values.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            end.contains(answer["result"]["id"].as_str().unwrap()),
            "{end}"
        );
        server.finish().await;
    }
}

#[tokio::test]
async fn a_failed_install_still_ends_its_progress_before_the_error() {
    let temp = tempfile::tempdir().unwrap();
    let mut server = venv_server(&temp.path().join("state"), With::Uv, &[]);
    server.initialize().await;
    let env = create(&mut server, 1, "fails").await["id"].clone();
    let params = json!({"id": env, "packages": ["wsp-nowhere"], "work_done_token": "bad",
        "no_index": true});
    let (notifications, answer) =
        call_collecting(&mut server, 2, "environment/install", params).await;
    assert_eq!(
        answer["error"]["data"]["reason"], "install-failed",
        "{answer}"
    );
    let values: Vec<&Value> = notifications
        .iter()
        .map(|n| &n["params"]["value"])
        .collect();
    assert_eq!(values.first().map(|v| &v["kind"]), Some(&json!("begin")));
    assert_eq!(values.last().map(|v| &v["kind"]), Some(&json!("end")));
    server.finish().await;
}

#[tokio::test]
async fn steps_arrive_while_the_installer_runs() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let release = temp.path().join("release");
        crate::install_support::mkfifo(&release);
        // The build waits for the test, which releases it only after a step came: that step
        // was sent while the installer ran, not collected at its end.
        let hook = format!("open({:?}).read()\n", release.display().to_string());
        let sdist = wsp_testing::Distribution::new("wsp-live", "1.0")
            .write_sdist(&temp.path().join("dists"), &hook)
            .unwrap();
        let cache = temp.path().join("cache").display().to_string();
        let mut env_vars = vec![("XDG_CACHE_HOME", cache.as_str())];
        let path = crate::install_support::path_without_uv();
        crate::install_support::share_seed_cache(&temp.path().join("state"));
        if with == With::Pip {
            env_vars.push(("PATH", path.as_str()));
        }
        let mut server =
            crate::support::Server::start_with_env(&temp.path().join("state"), &[], &env_vars);
        server.initialize().await;
        let env = create(&mut server, 1, "live").await["id"].clone();
        let params = json!({"id": env, "packages": [sdist.display().to_string()],
            "work_done_token": "live"});
        server
            .send(&crate::support::request(2, "environment/install", params))
            .await;
        let first_step = match with {
            With::Uv => "Resolved ",
            With::Pip => "Processing ",
        };
        loop {
            let message = server.recv().await;
            assert!(
                message.get("id").is_none(),
                "answered while blocked: {message}"
            );
            let value = &message["params"]["value"];
            if value["kind"] == "report"
                && value["message"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(first_step)
            {
                break;
            }
        }
        tokio::task::spawn_blocking(move || std::fs::write(release, "go\n"))
            .await
            .unwrap()
            .expect("the build is released");
        let answer = loop {
            let message = server.recv().await;
            if message.get("id").is_some() {
                break message;
            }
        };
        assert!(answer.get("result").is_some(), "{with:?}: {answer}");
        server.finish().await;
    }
}
