//! `environment/execute` with `sandbox` over the real binary: `initialize` reports it, pip
//! still installs from `find_links` inside it, a sandboxed command cannot touch another
//! environment or the network, `wsp serve --sandbox` makes it the default (an explicit
//! `false` still wins), and where it is unavailable the answer is `-31004` and nothing runs.

use std::net::TcpListener;
use std::path::Path;

use crate::support::{error_code, Server};
use serde_json::{json, Value};

async fn execute(server: &mut Server, id: i64, params: Value) -> Value {
    server.call(id, "environment/execute", params).await
}

fn sh(env: &Value, script: &str) -> Value {
    json!({"id": env["id"], "argv": ["sh", "-c", script]})
}

fn with(mut params: Value, key: &str, value: Value) -> Value {
    params[key] = value;
    params
}

/// A wheel of `wsp-sandbox-demo` 1.0 (module `wsp_sandbox_demo`, `VALUE = 42`) in `dir`,
/// zipped by Python's own `zipfile`.
fn build_wheel(dir: &Path) {
    let script = r#"
import sys, zipfile
dist = "wsp_sandbox_demo-1.0.dist-info"
files = {
    "wsp_sandbox_demo/__init__.py": "VALUE = 42\n",
    dist + "/METADATA": "Metadata-Version: 2.1\nName: wsp-sandbox-demo\nVersion: 1.0\n",
    dist + "/WHEEL": "Wheel-Version: 1.0\nGenerator: wsp-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
records = [name + ",," for name in files] + [dist + "/RECORD,,"]
files[dist + "/RECORD"] = "\n".join(records) + "\n"
with zipfile.ZipFile(sys.argv[1] + "/wsp_sandbox_demo-1.0-py3-none-any.whl", "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
"#;
    let status = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .status()
        .expect("python3 runs");
    assert!(status.success());
}

#[tokio::test]
async fn initialize_reports_the_sandbox_available() {
    let mut server = Server::start(&[]);
    let capabilities = server.initialize().await["result"].clone();
    assert_eq!(
        capabilities["sandbox_availability"], "available",
        "{capabilities}"
    );
    assert!(capabilities.get("sandbox_unavailable_reason").is_none());
}

#[tokio::test]
async fn pip_installs_from_find_links_inside_the_sandbox() {
    let links = tempfile::tempdir().unwrap();
    build_wheel(links.path());
    let state = tempfile::tempdir().unwrap();
    crate::support::share_seed_cache(state.path());
    let mut server = Server::start_in(state.path(), &["--seed-pip"]);
    server.initialize().await;
    let env = server.create_environment(1, "pip").await;
    let install = json!({"id": env["id"], "sandbox": true, "argv": [
        "python", "-m", "pip", "install", "--no-index", "--find-links",
        links.path().to_str().unwrap(), "wsp-sandbox-demo"]});
    let installed = execute(&mut server, 2, install).await;
    let result = &installed["result"];
    assert_eq!(result["exit_code"], 0, "{installed}");
    assert!(
        result["stdout"]
            .as_str()
            .unwrap()
            .contains("Successfully installed wsp-sandbox-demo-1.0"),
        "{installed}"
    );

    let import = json!({"id": env["id"], "sandbox": true,
        "argv": ["python", "-c", "import wsp_sandbox_demo; print(wsp_sandbox_demo.VALUE)"]});
    let imported = execute(&mut server, 3, import).await;
    assert_eq!(imported["result"]["stdout"], "42\n", "{imported}");
    let details = server
        .call(4, "environment/get", json!({"id": env["id"]}))
        .await;
    assert!(
        details["result"]["installed_packages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "wsp-sandbox-demo" && p["version"] == "1.0"),
        "{details}"
    );
}

#[tokio::test]
async fn another_environment_and_loopback_are_out_of_reach() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut server = Server::start(&[]);
    server.initialize().await;
    let env = server.create_environment(1, "one").await;
    let other = server.create_environment(2, "two").await;
    let other_cfg = format!("{}/pyvenv.cfg", other["extra"]["path"].as_str().unwrap());
    let connect =
        format!("import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)");
    let original = std::fs::read_to_string(&other_cfg).unwrap();
    let attempts = [
        format!("cat {other_cfg}"),
        format!("echo x >> {other_cfg}"),
        format!("python -c \"{connect}\""),
    ];
    for (n, attempt) in attempts.iter().enumerate() {
        let sandboxed = execute(
            &mut server,
            10 + n as i64,
            with(sh(&env, attempt), "sandbox", json!(true)),
        )
        .await;
        assert_ne!(
            sandboxed["result"]["exit_code"], 0,
            "{attempt}: {sandboxed}"
        );
    }
    assert!(listener.accept().is_err(), "nothing connected");
    assert_eq!(std::fs::read_to_string(&other_cfg).unwrap(), original);
    // Unsandboxed, the same attempts succeed.
    for (n, attempt) in attempts.iter().enumerate() {
        let plain = execute(&mut server, 20 + n as i64, sh(&env, attempt)).await;
        assert_eq!(plain["result"]["exit_code"], 0, "{attempt}: {plain}");
    }
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn serve_sandbox_makes_it_the_default_and_an_explicit_false_wins() {
    let outside = tempfile::tempdir().unwrap();
    let write = |name: &str| {
        format!(
            "echo x > {}/{name} && echo \"$TMPDIR\"",
            outside.path().display()
        )
    };
    for (flags, default_sandboxed) in [(&["--sandbox"][..], true), (&[][..], false)] {
        let mut server = Server::start(flags);
        server.initialize().await;
        let env = server.create_environment(1, "default").await;
        let by_default = execute(&mut server, 2, sh(&env, &write("default"))).await;
        let explicit_false = execute(
            &mut server,
            3,
            with(sh(&env, &write("false")), "sandbox", json!(false)),
        )
        .await;
        let explicit_true = execute(
            &mut server,
            4,
            with(sh(&env, &write("true")), "sandbox", json!(true)),
        )
        .await;
        assert_eq!(
            outside.path().join("default").exists(),
            !default_sandboxed,
            "{flags:?}: {by_default}"
        );
        assert_eq!(
            by_default["result"]["exit_code"] == 0,
            !default_sandboxed,
            "{by_default}"
        );
        assert!(outside.path().join("false").exists(), "{explicit_false}");
        assert!(!outside.path().join("true").exists(), "{explicit_true}");
        for name in ["default", "false"] {
            let _ = std::fs::remove_file(outside.path().join(name));
        }
    }
}

#[tokio::test]
async fn an_unavailable_sandbox_answers_31004_and_runs_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let state_dir = temp.path().join("state");
    let mut server = Server::start_with_env(
        &state_dir,
        &["--sandbox"],
        &[("WSP_TEST_SANDBOX_UNAVAILABLE", "1")],
    );
    let capabilities = server.initialize().await["result"].clone();
    assert_eq!(capabilities["sandbox_availability"], "unavailable");
    let reason = capabilities["sandbox_unavailable_reason"].as_str().unwrap();
    assert!(reason.contains("WSP_TEST_SANDBOX_UNAVAILABLE"), "{reason}");

    let env = server.create_environment(1, "unconfined").await;
    let marker = temp.path().join("ran");
    let touch = format!(": > {}", marker.display());
    for (id, params) in [
        (2, with(sh(&env, &touch), "sandbox", json!(true))),
        (3, sh(&env, &touch)),
    ] {
        let refused = execute(&mut server, id, params).await;
        assert_eq!(error_code(&refused), -31004, "{refused}");
        assert_eq!(refused["error"]["data"]["reason"], "sandbox-unavailable");
        assert_eq!(
            refused["error"]["data"]["detail"].as_str(),
            Some(reason),
            "{refused}"
        );
        assert!(!marker.exists(), "nothing ran");
    }
    let unconfined = execute(
        &mut server,
        4,
        with(sh(&env, &touch), "sandbox", json!(false)),
    )
    .await;
    assert_eq!(unconfined["result"]["exit_code"], 0, "{unconfined}");
    assert!(marker.exists());
}

#[tokio::test]
async fn a_base_directory_planted_by_another_user_does_not_disable_the_sandbox() {
    let uid = rustix::process::geteuid().as_raw();
    if uid != 0 {
        eprintln!("skipped: planting a directory of another user needs root");
        return;
    }
    // The name a server used for every run's base before it had one of its own.
    let planted = std::env::temp_dir()
        .canonicalize()
        .unwrap()
        .join(format!("wsp-sandbox-{uid}"));
    let made = std::fs::create_dir(&planted).is_ok();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&planted).unwrap());
    let nobody = rustix::process::Uid::from_raw(65534);
    rustix::fs::chown(&planted, Some(nobody), None).unwrap();
    let mut server = Server::start(&[]);
    let capabilities = server.initialize().await["result"].clone();
    let env = server.create_environment(1, "planted").await;
    let ran = execute(
        &mut server,
        2,
        with(sh(&env, "echo \"$TMPDIR\""), "sandbox", json!(true)),
    )
    .await;
    if made {
        let _ = std::fs::remove_dir_all(&planted);
    } else {
        let owner = rustix::process::Uid::from_raw(owner);
        rustix::fs::chown(&planted, Some(owner), None).unwrap();
    }
    assert_eq!(
        capabilities["sandbox_availability"], "available",
        "{capabilities}"
    );
    assert_eq!(ran["result"]["exit_code"], 0, "{ran}");
    let tmpdir = ran["result"]["stdout"].as_str().unwrap().trim().to_owned();
    assert!(!Path::new(&tmpdir).starts_with(&planted), "{tmpdir}");
}

#[tokio::test]
async fn a_sandboxed_command_makes_no_setuid_or_setgid_file() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let env = server.create_environment(1, "setuid").await;
    let root = Path::new(env["extra"]["path"].as_str().unwrap()).to_path_buf();
    let create_04755 = "python -c \"import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o4755))\"";
    // Each attempt prints its exit status; the TMPDIR's files are gone after the run, so
    // their modes are printed from inside.
    let script = format!(
        "cd {root}; touch u g; chmod u+s u; echo \"u=$?\"; chmod g+s g; echo \"g=$?\"; \
         {create_04755} new; echo \"new=$?\"; \
         touch \"$TMPDIR/t\"; chmod u+s \"$TMPDIR/t\"; echo \"tmp=$?\"; \
         {create_04755} \"$TMPDIR/new\"; echo \"tmpnew=$?\"; \
         stat -c 'modes=%a' \"$TMPDIR/t\" \"$TMPDIR/new\" 2>&1 | tr '\\n' ' '",
        root = root.display()
    );
    let modes = |names: &[&str]| -> Vec<u32> {
        use std::os::unix::fs::MetadataExt;
        names
            .iter()
            .map(|name| std::fs::metadata(root.join(name)).map_or(0, |meta| meta.mode() & 0o6000))
            .collect()
    };
    let sandboxed = execute(
        &mut server,
        2,
        with(sh(&env, &script), "sandbox", json!(true)),
    )
    .await;
    let stdout = sandboxed["result"]["stdout"].as_str().unwrap();
    for refused in ["u=1", "g=1", "new=1", "tmp=1", "tmpnew=1"] {
        assert!(stdout.contains(refused), "{refused}: {sandboxed}");
    }
    assert!(stdout.contains("modes=644"), "{sandboxed}");
    assert!(!stdout.contains("modes=4"), "{sandboxed}");
    assert_eq!(modes(&["u", "g", "new"]), [0, 0, 0], "{sandboxed}");

    // Unsandboxed, the same commands make them: the checks above can fail.
    let _ = std::fs::remove_file(root.join("new"));
    let plain = execute(&mut server, 3, sh(&env, &script)).await;
    let stdout = plain["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.contains("u=0") && stdout.contains("new=0"),
        "{plain}"
    );
    assert_eq!(
        modes(&["u", "g", "new"]),
        [0o4000, 0o2000, 0o4000],
        "{plain}"
    );
}
