//! Checks of the methods (`docs/PROTOCOL.md`, part 1): shapes, ids, order, names, errors,
//! provisioning failures and the delete rules.

use std::path::Path;
use std::time::Duration;
use wsp_testing::ClientExt;

use serde_json::{json, Value};
use wsp_environments::store::is_environment_id;
use wsp_install::packages::normalize_name;

use super::altered::Alteration;
use super::{CheckFn, Fixture};
use wsp_testing::code;

macro_rules! check {
    ($name:ident) => {
        (stringify!($name), (|f| Box::pin($name(f))) as CheckFn)
    };
}
pub(crate) use check;

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(create_get_and_list_have_the_documented_shapes),
        check!(ids_are_unique_and_list_is_ascending),
        check!(a_taken_name_is_31002_with_violations),
        check!(concurrent_creates_with_one_name_have_one_winner),
        check!(an_unavailable_version_is_31003_and_changes_nothing),
        check!(unknown_ids_are_31001_with_the_id),
        check!(failed_provisioning_leaves_no_trace),
        check!(delete_removes_and_later_requests_see_31001),
        check!(delete_waits_for_an_execute_in_flight),
        check!(installed_packages_are_read_and_sorted),
    ]
}

/// Creates an environment and returns its details.
pub(super) async fn create(client: &mut super::Client, f: &Fixture, name: &str) -> Value {
    client
        .ok(
            "environment/create",
            json!({"name": name, "python_version": f.backend.python_version}),
        )
        .await
}

async fn create_get_and_list_have_the_documented_shapes(f: Fixture) {
    let mut client = f.client().await;
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
    let created = create(&mut client, &f, "shapes").await;
    let id = created["id"].as_str().expect("an id");
    assert!(is_environment_id(id), "bad id {id}");
    assert_eq!(created["name"], "shapes");
    assert_eq!(
        created["python_version"],
        f.backend.python_version.as_str(),
        "echoed as asked"
    );
    let extra = created["extra"].as_object().expect("extra is an object");
    assert_eq!(extra["backend"], f.backend.name.as_str());
    let root = Path::new(extra["path"].as_str().expect("extra.path"));
    assert!(root.is_absolute() && root.is_dir(), "extra.path {root:?}");
    let full = extra["python_full_version"]
        .as_str()
        .expect("extra.python_full_version");
    assert_eq!(full.split('.').count(), 3, "full version {full}");
    assert!(
        full.starts_with(&format!("{}.", f.backend.python_version))
            || full == f.backend.python_version
    );
    let interpreter = Path::new(
        created["interpreter_path"]
            .as_str()
            .expect("interpreter_path"),
    );
    assert!(
        interpreter.is_absolute() && interpreter.starts_with(root),
        "{interpreter:?} not inside {root:?}"
    );
    let version = std::process::Command::new(interpreter)
        .args(["-c", "import platform; print(platform.python_version())"])
        .output()
        .expect("the interpreter runs");
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), full);
    assert!(created["installed_packages"].is_array());

    let mut got = client.ok("environment/get", json!({"id": id})).await;
    let mut created = created.clone();
    // Only a create says whether it reused; only a get weighs the files.
    assert_eq!(created["extra"]["reused"], false, "{created}");
    assert!(got["extra"]["disk_bytes"].as_u64().is_some(), "{got}");
    if let (Some(got), Some(created)) = (
        got["extra"].as_object_mut(),
        created["extra"].as_object_mut(),
    ) {
        got.remove("disk_bytes");
        created.remove("reused");
    }
    assert_eq!(got, created, "get returns what create returned");
    let list = client.ok("environment/list", json!({})).await;
    assert_eq!(
        list,
        json!([{"id": id, "name": "shapes", "python_version": f.backend.python_version}])
    );
}

async fn ids_are_unique_and_list_is_ascending(f: Fixture) {
    let mut client = f.client().await;
    let mut ids = Vec::new();
    for name in ["c", "a", "b"] {
        ids.push(
            create(&mut client, &f, name).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let listed: Vec<String> = client
        .ok("environment/list", json!([]))
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "ids are unique");
    assert_eq!(listed, ids, "list is ascending by id");
}

async fn a_taken_name_is_31002_with_violations(f: Fixture) {
    let mut client = f.client().await;
    let first = create(&mut client, &f, "taken").await;
    let error = client
        .err(
            "environment/create",
            json!({"name": "taken", "python_version": f.backend.python_version}),
        )
        .await;
    assert_eq!(code(&error), -31002);
    let violations = error["data"]["violations"]
        .as_array()
        .expect("data.violations");
    assert!(violations.iter().any(|v| v["field"] == "name"), "{error}");
    // Names are matched exactly.
    create(&mut client, &f, "Taken").await;
    client
        .ok("environment/delete", json!({"id": first["id"]}))
        .await;
    create(&mut client, &f, "taken").await;
}

async fn concurrent_creates_with_one_name_have_one_winner(f: Fixture) {
    let mut client = f.client().await;
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(
            client
                .send(
                    "environment/create",
                    json!({"name": "race", "python_version": f.backend.python_version}),
                )
                .await,
        );
    }
    let mut won = 0;
    for id in ids {
        let response = client.response(id).await;
        match response.get("error") {
            None => won += 1,
            Some(error) => assert_eq!(code(error), -31002, "{response}"),
        }
    }
    assert_eq!(won, 1, "exactly one create wins");
    assert_eq!(
        client
            .ok("environment/list", json!(null))
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

async fn an_unavailable_version_is_31003_and_changes_nothing(f: Fixture) {
    let mut client = f.client().await;
    let error = client
        .err(
            "environment/create",
            json!({"name": "nope", "python_version": "3.99"}),
        )
        .await;
    assert_eq!(code(&error), -31003);
    assert_eq!(error["data"]["python_version"], "3.99");
    let available = error["data"]["available"]
        .as_array()
        .expect("data.available");
    assert!(!available.is_empty(), "some version is available: {error}");
    let error = client
        .err(
            "environment/create",
            json!({"name": "nope", "python_version": "2.0.99"}),
        )
        .await;
    assert_eq!(code(&error), -31003);
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
    create(&mut client, &f, "nope").await;
}

async fn unknown_ids_are_31001_with_the_id(f: Fixture) {
    let mut client = f.client().await;
    for id in ["env-000000000000", "not-an-id", "../../etc", "env-ZZZ"] {
        for (method, params) in [
            ("environment/get", json!({"id": id})),
            ("environment/delete", json!({"id": id})),
            ("environment/execute", json!({"id": id, "argv": ["true"]})),
        ] {
            let error = client.err(method, params).await;
            assert_eq!(code(&error), -31001, "{method} {id}: {error}");
            assert_eq!(error["data"], json!({"id": id}));
        }
    }
}

async fn failed_provisioning_leaves_no_trace(f: Fixture) {
    let failing = f.server_with(|backend| Alteration::FailAfterProvision.apply(backend));
    let mut client = super::Client::initialized(failing).await;
    let error = client
        .err(
            "environment/create",
            json!({"name": "doomed", "python_version": f.backend.python_version}),
        )
        .await;
    assert_eq!(code(&error), -31004);
    assert_eq!(error["data"]["reason"], "injected");
    assert!(error["data"]["detail"].is_string());
    let environments = f.state_dir.join("environments");
    let left: Vec<_> = std::fs::read_dir(&environments)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "partial environments left behind: {left:?}"
    );
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
    let mut fresh = f.client().await;
    create(&mut fresh, &f, "doomed").await;
}

async fn delete_removes_and_later_requests_see_31001(f: Fixture) {
    let mut client = f.client().await;
    let created = create(&mut client, &f, "gone").await;
    let id = created["id"].clone();
    let root = created["extra"]["path"].as_str().unwrap().to_owned();
    let delete = client.send("environment/delete", json!({"id": id})).await;
    let get = client.send("environment/get", json!({"id": id})).await;
    let execute = client
        .send("environment/execute", json!({"id": id, "argv": ["true"]}))
        .await;
    assert_eq!(client.response(delete).await["result"], json!({"id": id}));
    assert_eq!(
        code(&client.response(get).await["error"]),
        -31001,
        "a get read after the delete"
    );
    assert_eq!(
        code(&client.response(execute).await["error"]),
        -31001,
        "an execute read after the delete"
    );
    assert!(!Path::new(&root).exists(), "{root} still exists");
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
    assert_eq!(
        code(&client.err("environment/delete", json!({"id": id})).await),
        -31001
    );
}

async fn delete_waits_for_an_execute_in_flight(f: Fixture) {
    let mut client = f.client().await;
    let created = create(&mut client, &f, "busy").await;
    let id = created["id"].clone();
    let started = f.scratch.join("started");
    let release = f.scratch.join("release");
    for fifo in [&started, &release] {
        let status = std::process::Command::new("mkfifo")
            .arg(fifo)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
    }
    let script = format!(
        "echo started > '{}'; read line < '{}'; echo done",
        started.display(),
        release.display()
    );
    let execute = client
        .send(
            "environment/execute",
            json!({"id": id, "argv": ["sh", "-c", script]}),
        )
        .await;
    let started_path = started.clone();
    tokio::task::spawn_blocking(move || std::fs::read_to_string(started_path))
        .await
        .unwrap()
        .unwrap();
    let delete = client.send("environment/delete", json!({"id": id})).await;
    let early = tokio::time::timeout(Duration::from_millis(500), client.next_response()).await;
    assert!(
        early.is_err(),
        "nothing may be answered while the execute runs: {early:?}"
    );
    tokio::task::spawn_blocking(move || std::fs::write(release, "go\n"))
        .await
        .unwrap()
        .unwrap();
    let first = client.next_response().await;
    assert_eq!(
        first["id"], execute,
        "the execute finishes before the delete: {first}"
    );
    assert_eq!(first["result"]["stdout"], "done\n");
    assert_eq!(client.response(delete).await["result"]["id"], id);
}

async fn installed_packages_are_read_and_sorted(f: Fixture) {
    let mut client = f.client().await;
    let created = create(&mut client, &f, "pkgs").await;
    let id = created["id"].clone();
    let script = "import sysconfig, os\n\
        p = sysconfig.get_paths()['purelib']\n\
        for name, version in [('Zeta_Pkg', '1.0'), ('alpha', '2.0.post1'), ('Mid.Pkg', '0.3')]:\n    d = os.path.join(p, '%s-%s.dist-info' % (name, version))\n    os.makedirs(d)\n    open(os.path.join(d, 'METADATA'), 'w').write('Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n' % (name, version))\n\
        e = os.path.join(p, 'Legacy-1.2.egg-info')\n\
        os.makedirs(e)\n\
        open(os.path.join(e, 'PKG-INFO'), 'w').write('Metadata-Version: 1.0\\nName: Legacy\\nVersion: 1.2\\n')\n";
    let ran = client
        .ok(
            "environment/execute",
            json!({"id": id, "argv": ["python", "-c", script]}),
        )
        .await;
    assert_eq!(ran["exit_code"], 0, "{ran}");
    let got = client.ok("environment/get", json!({"id": id})).await;
    let packages = got["installed_packages"].as_array().unwrap();
    let ours: Vec<(&str, &str)> = packages
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["version"].as_str().unwrap()))
        .filter(|(name, _)| ["alpha", "Legacy", "Mid.Pkg", "Zeta_Pkg"].contains(name))
        .collect();
    assert_eq!(
        ours,
        [
            ("alpha", "2.0.post1"),
            ("Legacy", "1.2"),
            ("Mid.Pkg", "0.3"),
            ("Zeta_Pkg", "1.0")
        ]
    );
    let normalized: Vec<String> = packages
        .iter()
        .map(|p| normalize_name(p["name"].as_str().unwrap()))
        .collect();
    let mut sorted = normalized.clone();
    sorted.sort();
    assert_eq!(normalized, sorted, "sorted by normalized name");
}
