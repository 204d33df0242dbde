//! Installs into one environment run one at a time, within a server and across servers sharing
//! a state directory, and a delete waits for an install, over the real binary.
//!
//! Each install is of an sdist whose build backend records when it ran (its build hook writes
//! begin and end times around a one-second sleep, the workload), so overlapping installs would
//! show as overlapping intervals. The delete test's build blocks on a FIFO instead.

use std::path::Path;
use std::time::Duration;

use crate::install_support::{call_collecting, create, mkfifo, ok, version_of, With};
use crate::support::{request, Server};
use serde_json::{json, Value};
use wsp_testing::Distribution;

/// A build hook that appends `<label> begin <time>` and `<label> end <time>` to `log` around a
/// one-second sleep.
fn timed_hook(log: &Path, label: &str) -> String {
    format!(
        "import time\nlog = {log:?}\nopen(log, 'a').write('{label} begin %f\\n' % time.time())\n\
         time.sleep(1.0)\nopen(log, 'a').write('{label} end %f\\n' % time.time())\n",
        log = log.display().to_string()
    )
}

/// The `(begin, end)` interval of each label in `log`.
fn intervals(log: &Path) -> Vec<(String, f64, f64)> {
    let text = std::fs::read_to_string(log).expect("the builds wrote their log");
    let mut found: Vec<(String, f64, f64)> = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (label, what, time) = (parts[0], parts[1], parts[2].parse::<f64>().unwrap());
        match what {
            "begin" => found.push((label.to_owned(), time, f64::NAN)),
            _ => {
                let entry = found
                    .iter_mut()
                    .find(|(l, _, _)| l == label)
                    .expect("began");
                entry.2 = time;
            }
        }
    }
    found
}

fn assert_disjoint(log: &Path) {
    let found = intervals(log);
    assert_eq!(found.len(), 2, "{found:?}");
    let (a, b) = (&found[0], &found[1]);
    assert!(
        a.2 <= b.1 || b.2 <= a.1,
        "the two builds overlapped: {found:?}"
    );
}

/// Servers that keep their package caches in `dir`, so no build is answered from a cache.
fn cache_env(dir: &Path) -> Vec<(&'static str, String)> {
    vec![("XDG_CACHE_HOME", dir.display().to_string())]
}

fn start(state: &Path, cache: &Path, with: With) -> Server {
    crate::install_support::share_seed_cache(state);
    let mut env = cache_env(cache);
    if with == With::Pip {
        env.push(("PATH", crate::install_support::path_without_uv()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start_with_env(state, &[], &env)
}

/// The answers to requests `ids`, in whichever order they come, notifications skipped.
async fn answers(server: &mut Server, ids: &[i64]) -> Vec<Value> {
    let mut found: Vec<Option<Value>> = vec![None; ids.len()];
    while found.iter().any(Option::is_none) {
        let message = server.recv().await;
        if let Some(index) = ids.iter().position(|id| message["id"] == json!(id)) {
            found[index] = Some(message);
        }
    }
    found.into_iter().flatten().collect()
}

#[tokio::test]
async fn installs_into_one_environment_run_one_at_a_time() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let dists = temp.path().join("dists");
        let log = temp.path().join("builds.log");
        let first = Distribution::new("wsp-slow-one", "1.0")
            .write_sdist(&dists, &timed_hook(&log, "one"))
            .unwrap();
        let second = Distribution::new("wsp-slow-two", "1.0")
            .write_sdist(&dists, &timed_hook(&log, "two"))
            .unwrap();
        let mut server = start(&temp.path().join("state"), &temp.path().join("cache"), with);
        server.initialize().await;
        let env = create(&mut server, 1, "serial").await["id"].clone();
        for (id, sdist) in [(2, &first), (3, &second)] {
            let params = json!({"id": env, "packages": [sdist.display().to_string()]});
            server
                .send(&request(id, "environment/install", params))
                .await;
        }
        let both = answers(&mut server, &[2, 3]).await;
        assert!(both.iter().all(|a| a.get("result").is_some()), "{both:?}");
        assert_disjoint(&log);
        let got = ok(&mut server, 4, "environment/get", json!({"id": env})).await;
        assert!(version_of(&got, "wsp-slow-one").is_some(), "{with:?} {got}");
        assert!(version_of(&got, "wsp-slow-two").is_some());
        server.finish().await;
    }
}

#[tokio::test]
async fn servers_sharing_a_state_directory_install_one_at_a_time() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let dists = temp.path().join("dists");
    let log = temp.path().join("builds.log");
    let mut one = start(&state, &temp.path().join("cache-one"), With::Pip);
    let mut two = start(&state, &temp.path().join("cache-two"), With::Pip);
    one.initialize().await;
    two.initialize().await;
    let env = create(&mut one, 1, "shared").await["id"].clone();
    for (server, label) in [(&mut one, "one"), (&mut two, "two")] {
        let sdist = Distribution::new(&format!("wsp-proc-{label}"), "1.0")
            .write_sdist(&dists, &timed_hook(&log, label))
            .unwrap();
        let params = json!({"id": env, "packages": [sdist.display().to_string()]});
        server
            .send(&request(2, "environment/install", params))
            .await;
    }
    let (a, b) = (answers(&mut one, &[2]).await, answers(&mut two, &[2]).await);
    let (a, b) = (&a[0], &b[0]);
    assert!(
        a.get("result").is_some() && b.get("result").is_some(),
        "{a} {b}"
    );
    assert_disjoint(&log);
    one.finish().await;
    two.finish().await;
}

#[tokio::test]
async fn a_delete_waits_for_an_install() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let (started, release) = (temp.path().join("started"), temp.path().join("release"));
        mkfifo(&started);
        mkfifo(&release);
        let hook = format!(
            "open({:?}, 'w').write('started\\n')\nopen({:?}).read()\n",
            started.display().to_string(),
            release.display().to_string()
        );
        let sdist = Distribution::new("wsp-held", "1.0")
            .write_sdist(&temp.path().join("dists"), &hook)
            .unwrap();
        let mut server = start(&temp.path().join("state"), &temp.path().join("cache"), with);
        server.initialize().await;
        let env = create(&mut server, 1, "held").await["id"].clone();
        let params = json!({"id": env, "packages": [sdist.display().to_string()]});
        server
            .send(&request(2, "environment/install", params))
            .await;
        tokio::task::spawn_blocking(move || std::fs::read_to_string(started))
            .await
            .unwrap()
            .expect("the build starts");
        server
            .send(&request(3, "environment/delete", json!({"id": env})))
            .await;
        let early = tokio::time::timeout(Duration::from_millis(500), server.recv()).await;
        assert!(
            early.is_err(),
            "nothing is answered while the install runs: {early:?}"
        );
        tokio::task::spawn_blocking(move || std::fs::write(release, "go\n"))
            .await
            .unwrap()
            .expect("the build is released");
        let installed = server.recv().await;
        assert_eq!(installed["id"], 2, "the install answers first: {installed}");
        let details = &installed["result"];
        assert_eq!(
            version_of(details, "wsp-held").as_deref(),
            Some("1.0"),
            "{with:?}"
        );
        let deleted = server.recv().await;
        assert_eq!(deleted["id"], 3);
        assert_eq!(deleted["result"]["id"], env);
        let (_, after) =
            call_collecting(&mut server, 4, "environment/get", json!({"id": env})).await;
        assert_eq!(crate::support::error_code(&after), -31001);
        server.finish().await;
    }
}
