//! A sandboxed command plants files for the next install to run or follow, over the real
//! binary, with each installer (uv, the environment's own pip): a `.pth` in site-packages, a
//! `bin/python` that is a script, `site-packages` replaced by a symlink to an outside
//! directory, a dist-info whose RECORD goes through a symlinked directory, and a write into a
//! file that the installer hard-linked from its cache. Once an environment has run sandboxed
//! code its installs and uninstalls run sandboxed too, so none of it reaches outside.
//! The same plants in an environment that never ran sandboxed code do run at the next install
//! (such an environment's files are the client's own): the checks can fail.

use std::path::{Path, PathBuf};

use crate::install_support::{create, ok, venv_server, wheels, With};
use crate::support::Server;
use serde_json::{json, Value};

fn root(env: &Value) -> PathBuf {
    PathBuf::from(env["extra"]["path"].as_str().expect("extra.path"))
}

fn site_packages(env: &Value) -> PathBuf {
    root(env).join("lib/python3.12/site-packages")
}

/// Runs `script` with `sh -c` in `env`, sandboxed or not; it must exit 0.
async fn sh(server: &mut Server, id: i64, env: &Value, sandbox: bool, script: &str) {
    let params = json!({"id": env["id"], "sandbox": sandbox, "argv": ["sh", "-c", script]});
    let ran = ok(server, id, "environment/execute", params).await;
    assert_eq!(ran["exit_code"], 0, "{ran}");
}

fn install_params(env: &Value, links: &Path, packages: &[&str]) -> Value {
    json!({"id": env["id"], "packages": packages,
        "find_links": [links.display().to_string()], "no_index": true})
}

/// Plants a `.pth` and a script `bin/python` (which then runs the real one) that each append
/// to a file in `outside`.
fn plant_code(env: &Value, outside: &Path) -> String {
    let pth_mark = outside.join("pth-ran");
    let python_mark = outside.join("python-ran");
    let bin = root(env).join("bin");
    format!(
        "echo 'import os; open(\"{pth}\", \"a\").write(\"ran\\n\")' > {site}/escape.pth && \
         mv {bin}/python {bin}/python-real && \
         printf '#!/bin/sh\\necho ran >> {python_mark}\\nexec {bin}/python-real \"$@\"\\n' > {bin}/python && \
         chmod +x {bin}/python",
        pth = pth_mark.display(),
        site = site_packages(env).display(),
        python_mark = python_mark.display(),
        bin = bin.display(),
    )
}

#[tokio::test]
async fn planted_code_runs_only_inside_the_sandbox_at_the_next_install() {
    for with in With::BOTH {
        let state = tempfile::tempdir().unwrap();
        let links = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        wheels(links.path());
        let mut server = venv_server(state.path(), with, &["--seed-pip"]);
        server.initialize().await;

        let env = create(&mut server, 1, "planted").await;
        sh(
            &mut server,
            2,
            &env,
            true,
            &plant_code(&env, outside.path()),
        )
        .await;
        let installed = ok(
            &mut server,
            3,
            "environment/install",
            install_params(&env, links.path(), &["wsp-alpha==1.0"]),
        )
        .await;
        assert!(
            crate::install_support::version_of(&installed, "wsp-alpha").is_some(),
            "{with:?}: {installed}"
        );
        ok(
            &mut server,
            4,
            "environment/uninstall",
            json!({"id": env["id"], "packages": ["wsp-alpha"]}),
        )
        .await;
        let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert!(
            left.is_empty(),
            "{with:?}: planted code ran outside: {left:?}"
        );

        // Planted without the sandbox, the same code runs at the next install.
        let trusted = create(&mut server, 5, "trusted").await;
        sh(
            &mut server,
            6,
            &trusted,
            false,
            &plant_code(&trusted, outside.path()),
        )
        .await;
        ok(
            &mut server,
            7,
            "environment/install",
            install_params(&trusted, links.path(), &["wsp-gamma"]),
        )
        .await;
        assert!(
            outside.path().join("python-ran").exists() || outside.path().join("pth-ran").exists(),
            "{with:?}: the unsandboxed plant did not run, so the check above proves nothing"
        );
    }
}

#[tokio::test]
async fn installs_and_uninstalls_do_not_follow_planted_symlinks_outside() {
    for with in With::BOTH {
        let state = tempfile::tempdir().unwrap();
        let links = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        wheels(links.path());
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "keep me\n").unwrap();
        let mut server = venv_server(state.path(), with, &["--seed-pip"]);
        server.initialize().await;

        // A dist-info whose RECORD deletes through a symlinked directory.
        let env = create(&mut server, 1, "record").await;
        let site = site_packages(&env);
        let dist = site.join("evil-1.0.dist-info");
        let plant = format!(
            "ln -s {outside} {site}/link && mkdir {dist} && \
             printf 'Metadata-Version: 2.1\\nName: evil\\nVersion: 1.0\\n' > {dist}/METADATA && \
             echo pip > {dist}/INSTALLER && \
             printf 'link/victim.txt,,\\nevil-1.0.dist-info/METADATA,,\\nevil-1.0.dist-info/RECORD,,\\n' > {dist}/RECORD",
            outside = outside.path().display(),
            site = site.display(),
            dist = dist.display(),
        );
        sh(&mut server, 2, &env, true, &plant).await;
        let (_, answer) = crate::install_support::call_collecting(
            &mut server,
            3,
            "environment/uninstall",
            json!({"id": env["id"], "packages": ["evil"]}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "keep me\n",
            "{with:?}: {answer}"
        );

        // site-packages itself replaced by a symlink to an outside directory.
        let swapped = create(&mut server, 4, "swapped").await;
        let target = outside.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let plant = format!(
            "rm -rf {site} && ln -s {target} {site}",
            site = site_packages(&swapped).display(),
            target = target.display(),
        );
        sh(&mut server, 5, &swapped, true, &plant).await;
        let (_, answer) = crate::install_support::call_collecting(
            &mut server,
            6,
            "environment/install",
            install_params(&swapped, links.path(), &["wsp-gamma"]),
        )
        .await;
        let written: Vec<_> = std::fs::read_dir(&target).unwrap().collect();
        assert!(
            written.is_empty(),
            "{with:?}: the installer wrote outside: {written:?} ({answer})"
        );
    }
}

#[tokio::test]
async fn a_sandboxed_write_into_a_hard_linked_file_does_not_reach_the_cache() {
    let state = tempfile::tempdir().unwrap();
    let links = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    wheels(links.path());
    let cache_dir = cache.path().to_str().unwrap();
    let mut server = Server::start_with_env(state.path(), &[], &[("UV_CACHE_DIR", cache_dir)]);
    server.initialize().await;
    let first = create(&mut server, 1, "first").await;
    ok(
        &mut server,
        2,
        "environment/install",
        install_params(&first, links.path(), &["wsp-alpha==1.0"]),
    )
    .await;
    let module = site_packages(&first).join("wsp_alpha.py");
    let original = std::fs::read_to_string(&module).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert!(
        std::fs::metadata(&module).unwrap().nlink() > 1,
        "uv did not hard-link from its cache, so this test proves nothing"
    );
    let poison = format!("echo 'POISONED = True' >> {}", module.display());
    sh(&mut server, 3, &first, true, &poison).await;
    assert!(std::fs::read_to_string(&module)
        .unwrap()
        .contains("POISONED"));

    let second = create(&mut server, 4, "second").await;
    ok(
        &mut server,
        5,
        "environment/install",
        install_params(&second, links.path(), &["wsp-alpha==1.0"]),
    )
    .await;
    let fresh = site_packages(&second).join("wsp_alpha.py");
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), original);
}

#[tokio::test]
async fn a_confined_install_reaches_its_index_and_no_other_port() {
    for with in With::BOTH {
        let state = tempfile::tempdir().unwrap();
        let temp = tempfile::tempdir().unwrap();
        let files = wheels(&temp.path().join("wheels"));
        let index =
            crate::install_support::IndexServer::start(&temp.path().join("index"), &files).await;
        let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        other.set_nonblocking(true).unwrap();
        let port = other.local_addr().unwrap().port();
        let mut server = venv_server(state.path(), with, &["--sandbox", "--seed-pip"]);
        server.initialize().await;
        let env = create(&mut server, 1, "indexed").await;
        let pth = format!(
            "echo 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)' > {}/reach.pth",
            site_packages(&env).display()
        );
        sh(&mut server, 2, &env, true, &pth).await;
        let params = json!({"id": env["id"], "packages": ["wsp-beta"], "index_url": index.url});
        let installed = ok(&mut server, 3, "environment/install", params).await;
        assert!(
            crate::install_support::version_of(&installed, "wsp-beta").is_some(),
            "{with:?}: {installed}"
        );
        assert!(
            matches!(other.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{with:?}: the installer reached a port that is not its index's"
        );
    }
}
