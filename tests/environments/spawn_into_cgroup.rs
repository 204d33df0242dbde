//! In `cgroup` mode each command runs in a cgroup of its own below its server's subtree,
//! `wsp-<server pid>/<n>`: started inside it (`clone3` with `CLONE_INTO_CGROUP`, the default),
//! or forked and moved there by itself before its exec (`WSP_TEST_SPAWN=fork`, as where
//! `clone3` is refused). Either way its output, its exit code and its input come back.

use std::path::Path;

use crate::support::Server;
use serde_json::json;

async fn cgroups_of_two_commands(spawn: Option<&str>) -> (u32, [String; 2]) {
    let state = tempfile::tempdir().expect("a state dir");
    let mut env = vec![("WSP_TEST_CONTAINMENT", "cgroup")];
    env.extend(spawn.map(|spawn| ("WSP_TEST_SPAWN", spawn)));
    let mut server = Server::start_with_env(state.path(), &[], &env);
    server.initialize().await;
    let environment = server.create_environment(1, "spawned").await;
    let server_pid = server.child.id().expect("the server runs");
    let mut cgroups = [String::new(), String::new()];
    for (n, cgroup) in cgroups.iter_mut().enumerate() {
        let params = json!({
            "id": environment["id"],
            "argv": ["sh", "-c", "read line; echo \"$line\"; grep '^0::' /proc/self/cgroup; exit 7"],
            "stdin": "input\n",
        });
        let answer = server
            .call(10 + n as i64, "environment/execute", params)
            .await;
        let result = &answer["result"];
        assert_eq!(result["exit_code"], 7, "{answer}");
        let stdout = result["stdout"].as_str().unwrap_or_default();
        let (echoed, line) = stdout.split_once('\n').unwrap_or_default();
        assert_eq!(echoed, "input", "{answer}");
        *cgroup = line.trim().trim_start_matches("0::").to_owned();
    }
    server.close();
    server.finish().await;
    (server_pid, cgroups)
}

fn assert_own_cgroups(server_pid: u32, cgroups: &[String; 2], spawn: &str) {
    for cgroup in cgroups {
        let path = Path::new(cgroup);
        let parent = path.parent().and_then(Path::file_name);
        assert_eq!(
            parent.and_then(|name| name.to_str()),
            Some(format!("wsp-{server_pid}").as_str()),
            "{spawn}: {cgroups:?}"
        );
        let leaf = path.file_name().and_then(|name| name.to_str());
        assert!(
            leaf.is_some_and(|leaf| leaf.parse::<u64>().is_ok()),
            "{spawn}: {cgroups:?}"
        );
    }
    assert_ne!(cgroups[0], cgroups[1], "{spawn}: one cgroup per command");
}

fn cgroup_mode_works() -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("skipped: cgroup mode needs root here");
    }
    root
}

#[tokio::test]
async fn a_command_started_inside_its_cgroup_runs_there() {
    if !cgroup_mode_works() {
        return;
    }
    let (server_pid, cgroups) = cgroups_of_two_commands(None).await;
    assert_own_cgroups(server_pid, &cgroups, "clone3");
}

#[tokio::test]
async fn a_forked_command_moves_itself_into_its_cgroup() {
    if !cgroup_mode_works() {
        return;
    }
    let (server_pid, cgroups) = cgroups_of_two_commands(Some("fork")).await;
    assert_own_cgroups(server_pid, &cgroups, "fork");
}
