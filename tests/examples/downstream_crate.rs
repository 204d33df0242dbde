//! A crate outside this workspace that depends on the framework (`wsp-server`) and `tokio`
//! alone declares a method, builds, and its server answers over real pipes; the framework's
//! normal dependencies hold no backend, rattler, reqwest or clap.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const MAIN: &str = r#"
use wsp_server::{handler_fn, Context, ErrorObjectOwned, ServerBuilder};

wsp_server::method! {
    /// `greet`: a name, answered with a greeting.
    Greet = "greet", GreetParams { name: String = string(1, Some(64)) } => Greeting { text: String }
}

async fn greet(params: GreetParams, _: Context) -> Result<Greeting, ErrorObjectOwned> {
    let text = format!("hello {}", params.name);
    Ok(Greeting { text })
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = ServerBuilder::new().method::<Greet, _>(handler_fn(greet)).build();
    std::process::exit(server.serve_stdio().await);
}
"#;

fn manifest(root: &Path) -> String {
    let path = |crate_dir: &str| root.join(crate_dir).display().to_string();
    format!(
        r#"[package]
name = "downstream-server"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
wsp-server = {{ path = "{server}" }}
tokio = {{ version = "1", features = ["macros", "rt"] }}

[workspace]

{profile}"#,
        server = path("server"),
        profile = dev_profile(root),
    )
}

/// The workspace's `[profile.dev…]` sections, as its manifest writes them: with the same
/// profile, the dependencies that the workspace's build compiled with the same features are
/// reused instead of compiled again with other debug settings.
fn dev_profile(root: &Path) -> String {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the manifest");
    let mut profile = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.dev]") || line.starts_with("[profile.dev.");
        }
        if inside {
            profile.push_str(line);
            profile.push('\n');
        }
    }
    assert!(profile.contains("[profile.dev]"), "{manifest}");
    profile
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn frame(payload: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{payload}", payload.len()).into_bytes()
}

#[test]
fn the_framework_depends_on_no_backend_rattler_reqwest_or_clap() {
    let output = cargo()
        .args([
            "tree",
            "-p",
            "wsp-server",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(workspace())
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "{output:?}");
    let tree = String::from_utf8_lossy(&output.stdout);
    assert!(tree.contains("wsp-middleware"), "{tree}");
    for banned in [
        "rattler",
        "reqwest",
        "clap",
        "wsp-backend",
        "wsp-environments",
    ] {
        let found: Vec<&str> = tree.lines().filter(|l| l.contains(banned)).collect();
        assert!(
            found.is_empty(),
            "wsp-server depends on {banned}: {found:?}"
        );
    }
}

#[test]
fn a_crate_depending_only_on_the_framework_builds_and_serves() {
    let root = workspace();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("Cargo.toml"), manifest(&root)).expect("manifest");
    std::fs::write(dir.path().join("src/main.rs"), MAIN).expect("main.rs");
    // The workspace's lock file pins the same versions, so the build needs no registry update.
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("lock");
    // Under nextest, cargo has finished building and holds no lock on the target directory,
    // so the crate builds there and reuses every dependency the workspace's build compiled with
    // the same features (under a minute in CI, against four from cold). `cargo test` keeps
    // that lock while its tests run, so there the crate gets a directory of its own.
    let workspace_target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory holds CARGO_TARGET_TMPDIR")
        .to_owned();
    let target = match std::env::var_os("NEXTEST") {
        Some(_) => workspace_target,
        None => workspace_target.join("downstream-crate"),
    };
    let build = cargo()
        .args(["build", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        // .ci/run's linting build wraps rustc with clippy: a tool author's build does not.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .current_dir(dir.path())
        .status()
        .expect("cargo build runs");
    assert!(build.success(), "the downstream crate builds");

    let mut server = Command::new(target.join("debug").join("downstream-server"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the downstream server starts");
    let mut stdin = server.stdin.take().expect("stdin");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"t","client_protocol_version":"0.1.0"}}"#;
    let greet = r#"{"jsonrpc":"2.0","id":2,"method":"greet","params":{"name":"wsp"}}"#;
    let bad = r#"{"jsonrpc":"2.0","id":3,"method":"greet","params":{"name":""}}"#;
    for payload in [initialize, greet, bad] {
        stdin.write_all(&frame(payload)).expect("write");
    }
    drop(stdin);
    let mut output = String::new();
    server
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut output)
        .expect("read");
    let status = server.wait().expect("exits");
    assert_eq!(status.code(), Some(0), "drains and exits 0 at EOF");
    assert!(output.contains(r#""methods":["greet","#), "{output}");
    assert!(
        output.contains(r#""result":{"text":"hello wsp"}"#),
        "{output}"
    );
    assert!(output.contains(r#""code":-32602"#), "{output}");
}
