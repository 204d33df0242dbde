//! Checks of `environment/install`, `environment/uninstall` and `environment/create` with
//! `packages`: what gets installed shows at once, a failure changes nothing, upgrades,
//! uninstalls, the error codes, and a create whose install fails leaving nothing behind.

use serde_json::{json, Map, Value};
use wsp_install::packages::normalize_name;
use wsp_testing::ClientExt;
use wsp_testing::Distribution;

use super::contract::{check, create};
use super::{CheckFn, Fixture, KitPackages, KIT_PACKAGES};
use wsp_server::client::Client;
use wsp_testing::code;

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(initialize_lists_the_install_methods_and_features),
        check!(installed_packages_show_at_once_and_import),
        check!(a_failed_install_changes_nothing),
        check!(upgrade_and_uninstall),
        check!(install_errors_are_31001_and_32602),
        check!(create_with_packages_installs_before_committing),
        check!(a_create_whose_install_fails_leaves_nothing),
    ]
}

/// The params that point an install at the kit's packages.
pub(super) fn source(f: &Fixture) -> Map<String, Value> {
    let mut params = Map::new();
    if f.backend.packages == KitPackages::Wheels {
        let dir = f.scratch.join("kit-wheels");
        for package in KIT_PACKAGES {
            let mut distribution = Distribution::new(package.name, package.version);
            for requirement in package.requires {
                distribution = distribution.requires(requirement);
            }
            distribution
                .write_wheel(&dir)
                .expect("the kit's wheels are written");
        }
        params.insert("find_links".into(), json!([dir.display().to_string()]));
        params.insert("no_index".into(), json!(true));
    }
    params
}

/// Install params for `packages` into `id`, from the kit's source, plus `extra`.
pub(super) fn install_params(f: &Fixture, id: &Value, packages: &[&str], extra: Value) -> Value {
    let mut params = source(f);
    params.insert("id".into(), id.clone());
    params.insert("packages".into(), json!(packages));
    if let Value::Object(extra) = extra {
        params.extend(extra);
    }
    Value::Object(params)
}

/// The installed version of `name` (compared by normalized name), if any.
pub(super) fn version_of(details: &Value, name: &str) -> Option<String> {
    let wanted = normalize_name(name);
    details["installed_packages"]
        .as_array()
        .expect("installed_packages")
        .iter()
        .find(|p| normalize_name(p["name"].as_str().unwrap_or_default()) == wanted)
        .map(|p| p["version"].as_str().unwrap_or_default().to_owned())
}

async fn python(client: &mut Client, id: &Value, code: &str) -> Value {
    let params = json!({"id": id, "argv": ["python", "-c", code]});
    client.ok("environment/execute", params).await
}

async fn initialize_lists_the_install_methods_and_features(f: Fixture) {
    let (_, init) = f.initialize().await;
    let methods = init["methods"].as_array().expect("methods");
    for method in ["environment/install", "environment/uninstall"] {
        assert!(methods.contains(&json!(method)), "{init}");
    }
    let features: Vec<&str> = init["features"]
        .as_array()
        .expect("features")
        .iter()
        .map(|f| f.as_str().expect("a string"))
        .collect();
    let mut sorted = features.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(features, sorted, "sorted, each once");
    for feature in ["environment/install", "progress", "execute.stream"] {
        assert!(features.contains(&feature), "{features:?}");
    }
}

async fn installed_packages_show_at_once_and_import(f: Fixture) {
    let mut client = f.client().await;
    let id = create(&mut client, &f, "installs").await["id"].clone();
    let params = install_params(&f, &id, &["wsp-kit-beta"], json!({}));
    let installed = client.ok("environment/install", params).await;
    assert_eq!(installed["id"], id, "the details of the environment");
    assert_eq!(
        version_of(&installed, "wsp-kit-beta").as_deref(),
        Some("1.0")
    );
    assert_eq!(
        version_of(&installed, "wsp-kit-alpha").as_deref(),
        Some("2.0"),
        "its requirement, newest: {installed}"
    );
    let got = client.ok("environment/get", json!({"id": id})).await;
    assert_eq!(got["installed_packages"], installed["installed_packages"]);
    let ran = python(
        &mut client,
        &id,
        "import wsp_kit_alpha, wsp_kit_beta; print(wsp_kit_alpha.VERSION)",
    )
    .await;
    assert_eq!(ran["stdout"], "2.0\n", "{ran}");
}

async fn a_failed_install_changes_nothing(f: Fixture) {
    let mut client = f.client().await;
    let id = create(&mut client, &f, "unchanged").await["id"].clone();
    let first = install_params(&f, &id, &["wsp-kit-alpha==1.0"], json!({}));
    let before = client.ok("environment/install", first).await;
    for packages in [
        &["wsp-kit-beta", "wsp-kit-missing"][..],
        &["wsp-kit-alpha>=3"],
        &["wsp-kit-alpha==1.0", "wsp-kit-alpha==2.0"],
    ] {
        let params = install_params(&f, &id, packages, json!({}));
        let error = client.err("environment/install", params).await;
        assert_eq!(code(&error), -31004, "{packages:?}: {error}");
        assert_eq!(error["data"]["reason"], "install-failed", "{error}");
        let detail = error["data"]["detail"].as_str().expect("detail");
        assert!(!detail.is_empty() && detail.len() <= 64 * 1024, "{detail}");
        let after = client.ok("environment/get", json!({"id": id})).await;
        assert_eq!(
            after["installed_packages"], before["installed_packages"],
            "{packages:?} changed the environment"
        );
    }
}

async fn upgrade_and_uninstall(f: Fixture) {
    let mut client = f.client().await;
    let id = create(&mut client, &f, "versions").await["id"].clone();
    let pinned = install_params(&f, &id, &["wsp-kit-alpha==1.0"], json!({}));
    client.ok("environment/install", pinned).await;
    let again = install_params(&f, &id, &["wsp-kit-alpha"], json!({}));
    let kept = client.ok("environment/install", again).await;
    assert_eq!(
        version_of(&kept, "wsp-kit-alpha").as_deref(),
        Some("1.0"),
        "a satisfied requirement keeps what is installed"
    );
    let upgrade = install_params(&f, &id, &["wsp-kit-alpha"], json!({"upgrade": true}));
    let newer = client.ok("environment/install", upgrade).await;
    assert_eq!(version_of(&newer, "wsp-kit-alpha").as_deref(), Some("2.0"));
    let params = json!({"id": id, "packages": ["wsp-kit-alpha", "wsp-kit-never-installed"]});
    let removed = client.ok("environment/uninstall", params).await;
    assert_eq!(version_of(&removed, "wsp-kit-alpha"), None, "{removed}");
    let params = json!({"id": id, "packages": ["wsp-kit-never-installed"]});
    let same = client.ok("environment/uninstall", params).await;
    assert_eq!(same["installed_packages"], removed["installed_packages"]);
    let ran = python(
        &mut client,
        &id,
        "import importlib.util as u; print(u.find_spec('wsp_kit_alpha'))",
    )
    .await;
    assert_eq!(ran["stdout"], "None\n");
}

async fn install_errors_are_31001_and_32602(f: Fixture) {
    let mut client = f.client().await;
    for method in ["environment/install", "environment/uninstall"] {
        let params = json!({"id": "env-000000000000", "packages": ["x"]});
        let error = client.err(method, params).await;
        assert_eq!(code(&error), -31001, "{method}: {error}");
        assert_eq!(error["data"]["id"], "env-000000000000");
    }
    let params = json!({"id": "", "packages": [], "find_links": ["relative"], "upgrade": 1,
                        "work_done_token": {}});
    let error = client.err("environment/install", params).await;
    assert_eq!(code(&error), -32602, "{error}");
    let fields: Vec<&str> = error["data"]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["field"].as_str().expect("field"))
        .collect();
    assert_eq!(
        fields,
        [
            "id",
            "packages",
            "find_links[0]",
            "upgrade",
            "work_done_token"
        ],
        "every violation: {error}"
    );
    let many: Vec<String> = (0..1001).map(|n| format!("p{n}")).collect();
    let error = client
        .err(
            "environment/uninstall",
            json!({"id": "x", "packages": many}),
        )
        .await;
    assert_eq!(code(&error), -32602);
}

async fn create_with_packages_installs_before_committing(f: Fixture) {
    let mut client = f.client().await;
    let mut params = source(&f);
    params.insert("name".into(), json!("ready"));
    params.insert("python_version".into(), json!(f.backend.python_version));
    params.insert(
        "packages".into(),
        json!(["wsp-kit-beta", "wsp-kit-alpha==1.0"]),
    );
    let created = client.ok("environment/create", Value::Object(params)).await;
    assert_eq!(
        version_of(&created, "wsp-kit-alpha").as_deref(),
        Some("1.0"),
        "{created}"
    );
    assert_eq!(version_of(&created, "wsp-kit-beta").as_deref(), Some("1.0"));
    let ran = python(
        &mut client,
        &created["id"],
        "import wsp_kit_beta; print('ok')",
    )
    .await;
    assert_eq!(ran["stdout"], "ok\n");
}

async fn a_create_whose_install_fails_leaves_nothing(f: Fixture) {
    let mut client = f.client().await;
    let mut params = source(&f);
    params.insert("name".into(), json!("doomed"));
    params.insert("python_version".into(), json!(f.backend.python_version));
    params.insert(
        "packages".into(),
        json!(["wsp-kit-alpha", "wsp-kit-missing"]),
    );
    let error = client
        .err("environment/create", Value::Object(params))
        .await;
    assert_eq!(code(&error), -31004, "{error}");
    assert_eq!(error["data"]["reason"], "install-failed", "{error}");
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
    let roots = std::fs::read_dir(f.state_dir.join("environments"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(
        roots, 0,
        "the partial environment is gone before the answer"
    );
    create(&mut client, &f, "doomed").await;
}
