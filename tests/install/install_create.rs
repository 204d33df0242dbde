//! `environment/create` with `packages` over the real binary: installed before the environment
//! is committed; when the install fails, `-31004 install-failed`, nothing left behind and the
//! index unchanged.

use crate::install_support::{call_collecting, ok, python, venv_server, version_of, wheels, With};
use crate::support::error_code;
use serde_json::json;

#[tokio::test]
async fn packages_are_installed_before_the_environment_is_committed() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        server.initialize().await;
        let params = json!({"name": "ready", "python_version": "3.12",
            "packages": ["wsp-beta", "wsp-alpha<2"],
            "find_links": [links.display().to_string()], "no_index": true});
        let created = ok(&mut server, 1, "environment/create", params).await;
        assert_eq!(
            version_of(&created, "wsp-alpha").as_deref(),
            Some("1.0"),
            "{with:?}"
        );
        assert_eq!(version_of(&created, "wsp-beta").as_deref(), Some("1.0"));
        let env = created["id"].clone();
        let imported = python(
            &mut server,
            2,
            &env,
            "import wsp_beta, wsp_alpha; print(wsp_alpha.VERSION)",
        )
        .await;
        assert_eq!(imported, "1.0");
        let listed = ok(&mut server, 3, "environment/list", json!(null)).await;
        assert_eq!(listed.as_array().map(Vec::len), Some(1));
        server.finish().await;
    }
}

#[tokio::test]
async fn a_failed_install_leaves_nothing_and_the_index_unchanged() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let state = temp.path().join("state");
        let mut server = venv_server(&state, with, &[]);
        server.initialize().await;
        let before = ok(&mut server, 1, "environment/list", json!(null)).await;
        let params = json!({"name": "doomed", "python_version": "3.12",
            "packages": ["wsp-alpha", "wsp-absent"],
            "find_links": [links.display().to_string()], "no_index": true});
        let (_, answer) = call_collecting(&mut server, 2, "environment/create", params).await;
        assert_eq!(error_code(&answer), -31004, "{answer}");
        assert_eq!(answer["error"]["data"]["reason"], "install-failed");
        let detail = answer["error"]["data"]["detail"].as_str().expect("detail");
        assert!(detail.contains("wsp-absent"), "{with:?}: {detail}");
        let leftovers: Vec<_> = std::fs::read_dir(state.join("environments"))
            .expect("environments/")
            .collect();
        assert!(
            leftovers.is_empty(),
            "the partial environment is gone: {leftovers:?}"
        );
        let after = ok(&mut server, 3, "environment/list", json!(null)).await;
        assert_eq!(after, before);
        let again = json!({"name": "doomed", "python_version": "3.12"});
        let created = ok(&mut server, 4, "environment/create", again).await;
        assert_eq!(created["name"], "doomed", "the name is free again");
        server.finish().await;
    }
}

#[tokio::test]
async fn packages_outside_1_to_1000_are_refused_and_nothing_is_created() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = venv_server(&state, With::Uv, &[]);
    server.initialize().await;
    let too_many: Vec<String> = (0..1001).map(|i| format!("p{i}")).collect();
    let cases = [(json!([]), "non_empty"), (json!(too_many), "max_items")];
    for (id, (packages, rule)) in (1..).zip(cases) {
        let params = json!({"name": "bounded", "python_version": "3.12", "packages": packages});
        let (_, answer) = call_collecting(&mut server, id, "environment/create", params).await;
        assert_eq!(error_code(&answer), -32602, "{answer}");
        let violations = &answer["error"]["data"]["violations"];
        assert_eq!(
            violations,
            &json!([{"field": "packages", "rule": rule,
                     "message": violations[0]["message"]}]),
            "{answer}"
        );
    }
    let listed = ok(&mut server, 9, "environment/list", json!(null)).await;
    assert_eq!(listed, json!([]));
    server.finish().await;
}
