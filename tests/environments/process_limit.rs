//! `limits.processes` over the real binary: it binds a root server's commands too (through
//! `pids.max` of a cgroup of the command's own), in every containment mode, and a server that
//! has no way to enforce it says so in `initialize` and refuses it.

use std::path::{Path, PathBuf};

use crate::support::{error_code, Server};
use serde_json::{json, Value};
use wsp_testing::FORK_60;

const MODE_VAR: &str = "WSP_TEST_CONTAINMENT";

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Initializes `server` and creates an environment; returns `process_limit` and the env.
async fn prepare(server: &mut Server) -> (Option<String>, Value) {
    let init = server.initialize().await;
    let how = init["result"]["process_limit"].as_str().map(str::to_owned);
    let env = server.create_environment(1, "forks").await;
    (how, env)
}

async fn fork_60(server: &mut Server, id: i64, env: &Value, processes: Option<u64>) -> Value {
    fork_60_in(server, id, env, processes, false).await
}

async fn fork_60_in(
    server: &mut Server,
    id: i64,
    env: &Value,
    processes: Option<u64>,
    sandbox: bool,
) -> Value {
    let mut params =
        json!({"id": env["id"], "argv": ["python", "-c", FORK_60], "sandbox": sandbox});
    if let Some(processes) = processes {
        params["limits"] = json!({"processes": processes});
    }
    server.call(id, "environment/execute", params).await
}

fn forked(answer: &Value) -> u64 {
    assert_eq!(answer["result"]["exit_code"], 0, "{answer}");
    let stdout = answer["result"]["stdout"].as_str().expect("stdout");
    stdout.trim().parse().expect("a count")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_process_limit_binds_in_every_mode() {
    let modes: &[&str] = if is_root() {
        &[
            "cgroup",
            "pid-namespace",
            "pid-namespace-user",
            "process-group",
        ]
    } else {
        &[""]
    };
    for mode in modes {
        let temp = tempfile::tempdir().expect("temp");
        let mut server =
            Server::start_with_env(&temp.path().join("state"), &[], &[(MODE_VAR, mode)]);
        let (how, env) = prepare(&mut server).await;
        let limited = fork_60(&mut server, 2, &env, Some(10)).await;
        check_limited(mode, how.as_deref(), &limited);
        // A sandboxed command too, where the sandbox works.
        let sandboxed = fork_60_in(&mut server, 4, &env, Some(10), true).await;
        if sandboxed["error"]["data"]["reason"] != "sandbox-unavailable" {
            check_limited(mode, how.as_deref(), &sandboxed);
        }
        let unlimited = fork_60(&mut server, 3, &env, None).await;
        assert_eq!(forked(&unlimited), 60, "{mode}: {unlimited}");
        let (code, log) = server.finish().await;
        assert_eq!(code, 0, "{log}");
    }
}

/// Checks the answer to a `processes: 10` run of [`FORK_60`] against what `initialize` said.
fn check_limited(mode: &str, how: Option<&str>, limited: &Value) {
    if limited.get("error").is_some() {
        assert_eq!(error_code(limited), -31004, "{mode}: {limited}");
        assert_eq!(limited["error"]["data"]["reason"], "limit-unavailable");
        assert_eq!(how, Some("unavailable"), "{mode}");
    } else if is_root() {
        // Ten tasks: Python itself and nine children.
        assert_eq!(
            forked(limited),
            9,
            "{mode}: the limit binds root: {limited}"
        );
        assert_eq!(how, Some("cgroup"), "{mode}");
    } else {
        // RLIMIT_NPROC counts every process of the user, so it allows fewer.
        assert!(forked(limited) <= 9, "{mode}: {limited}");
        assert!(matches!(how, Some("cgroup" | "rlimit")), "{mode}");
    }
}

/// Where the cgroup v1 hierarchy of the `pids` controller is mounted, if it is.
fn v1_pids_mount() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let (fields, rest) = line.split_once(" - ")?;
        let mut rest = rest.split(' ');
        let (kind, _, options) = (rest.next()?, rest.next()?, rest.next()?);
        (kind == "cgroup" && options.split(',').any(|option| option == "pids")).then_some(())?;
        fields.split(' ').nth(4).map(PathBuf::from)
    })
}

/// Whether the cgroup v2 hierarchy offers the `pids` controller at its root.
fn v2_has_pids() -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|line| {
            let (fields, rest) = line.split_once(" - ")?;
            rest.starts_with("cgroup2 ").then_some(())?;
            fields.split(' ').nth(4).map(PathBuf::from)
        })
        .any(|mount| {
            std::fs::read_to_string(Path::new(&mount).join("cgroup.controllers"))
                .is_ok_and(|text| text.split_whitespace().any(|name| name == "pids"))
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_pids_cgroup_a_root_server_refuses_a_process_limit() {
    if !is_root() || v2_has_pids() {
        eprintln!("skipped: needs root, and a machine whose cgroup v2 has no pids controller");
        return;
    }
    // The server runs in a mount namespace of its own without the v1 pids hierarchy.
    let unmount = v1_pids_mount()
        .map(|mount| format!("umount -l '{}' && ", mount.display()))
        .unwrap_or_default();
    let script = format!("{unmount}exec \"$@\"");
    let wrapper = ["unshare", "--mount", "sh", "-c", &script, "sh"];
    let temp = tempfile::tempdir().expect("temp");
    let mut server = Server::start_wrapped(&wrapper, &temp.path().join("state"), &[], &[]);
    let (how, env) = prepare(&mut server).await;
    let refused = fork_60(&mut server, 2, &env, Some(10)).await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "limit-unavailable");
    let detail = refused["error"]["data"]["detail"].as_str().expect("detail");
    assert!(detail.contains("limits.processes"), "{detail}");
    assert_eq!(how.as_deref(), Some("unavailable"), "initialize says so");
    let unlimited = fork_60(&mut server, 3, &env, None).await;
    assert_eq!(forked(&unlimited), 60, "{unlimited}");
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
}
