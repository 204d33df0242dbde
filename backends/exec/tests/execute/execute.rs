//! The execute runner against real processes: environment, lookup, exit codes, output
//! decoding and process-group cleanup.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::execute_support::write_script;
use tempfile::TempDir;
use wsp_backend::BackendError;
use wsp_exec::{
    resolve_cwd, run, run_with_stack, Activation, RunSpec, ENVIRONMENT_ID_VAR,
    ENVIRONMENT_STACK_VAR,
};
use wsp_protocol::ExecuteResult;

const ID: &str = "env-0123456789ab";
const BOUND: Duration = Duration::from_secs(10);

/// An environment root with an empty `bin` directory.
struct Env {
    dir: TempDir,
    activation: Activation,
}

impl Env {
    fn new() -> Self {
        let dir = TempDir::new().unwrap();
        let activation = Activation::venv(dir.path());
        std::fs::create_dir(&activation.bin_dir).unwrap();
        Env { dir, activation }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn script(&self, name: &str, body: &str) -> PathBuf {
        write_script(&self.activation.bin_dir, name, body)
    }

    async fn run_env(
        &self,
        argv: &[&str],
        env: &[(&str, &str)],
        stack: &[String],
    ) -> Result<ExecuteResult, BackendError> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let spec = RunSpec {
            activation: &self.activation,
            environment_id: ID,
            argv: &argv,
            cwd: &resolve_cwd(self.root(), None).unwrap(),
            env: &env,
            options: Default::default(),
        };
        tokio::time::timeout(BOUND, run_with_stack(spec, stack))
            .await
            .expect("run finished in time")
    }

    async fn sh(&self, script: &str) -> ExecuteResult {
        self.run_env(&["sh", "-c", script], &[], &[]).await.unwrap()
    }
}

fn spawn_failed_detail(result: Result<ExecuteResult, BackendError>) -> String {
    match result {
        Err(BackendError::Failed { reason, detail, .. }) if reason == "spawn-failed" => detail,
        other => panic!("expected spawn-failed, got {other:?}"),
    }
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

async fn assert_dies(pid: i32) {
    let start = Instant::now();
    while alive(pid) {
        assert!(start.elapsed() < BOUND, "process {pid} still alive");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn stdin_is_the_null_device() {
    let env = Env::new();
    let result = env.run_env(&["cat"], &[], &[]).await.unwrap();
    assert_eq!((result.exit_code, result.stdout.as_str()), (0, ""));
}

#[tokio::test]
async fn activation_sets_variables_and_puts_bin_first_on_path() {
    let env = Env::new();
    let result = env.sh(r#"printf '%s\n%s\n' "$VIRTUAL_ENV" "$PATH""#).await;
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(lines[0], env.root().to_str().unwrap());
    let inherited = std::env::var("PATH").unwrap();
    let expected = format!("{}:{inherited}", env.activation.bin_dir.display());
    assert_eq!(lines[1], expected);
}

#[tokio::test]
async fn request_env_overrides_activation_but_not_wsp_variables() {
    let env = Env::new();
    let vars = [
        ("VIRTUAL_ENV", "from-request"),
        ("EXTRA", "x y"),
        (ENVIRONMENT_ID_VAR, "env-forged"),
        (ENVIRONMENT_STACK_VAR, ""),
    ];
    let script = r#"printf '%s|%s|%s|%s' "$VIRTUAL_ENV" "$EXTRA" "$WSP_ENVIRONMENT_ID" "$WSP_ENVIRONMENT_STACK""#;
    let result = env.run_env(&["sh", "-c", script], &vars, &[]).await;
    assert_eq!(
        result.unwrap().stdout,
        format!("from-request|x y|{ID}|{ID}")
    );
}

#[tokio::test]
async fn bare_argv0_prefers_bin_dir_then_path() {
    let env = Env::new();
    let shadow = env.script("python3", r#"echo "shadowed $0 $1""#);
    let result = env.run_env(&["python3", "arg"], &[], &[]).await.unwrap();
    assert_eq!(
        result.stdout,
        format!("shadowed {} arg\n", shadow.display())
    );

    // A non-executable file in bin does not shadow the real program.
    std::fs::write(env.activation.bin_dir.join("true"), "not a program").unwrap();
    let result = env.run_env(&["true"], &[], &[]).await.unwrap();
    assert_eq!(result.exit_code, 0);
}

#[tokio::test]
async fn bare_argv0_searches_the_request_path() {
    let env = Env::new();
    let other = TempDir::new().unwrap();
    write_script(other.path(), "hello", "echo from-request-path");
    let path = other.path().to_str().unwrap();
    let result = env.run_env(&["hello"], &[("PATH", path)], &[]).await;
    assert_eq!(result.unwrap().stdout, "from-request-path\n");
    assert!(env.run_env(&["hello"], &[], &[]).await.is_err());
    // The bin directory comes first even when the request replaces PATH.
    env.script("hello", "echo from-bin");
    let result = env.run_env(&["hello"], &[("PATH", path)], &[]).await;
    assert_eq!(result.unwrap().stdout, "from-bin\n");
}

#[tokio::test]
async fn exit_codes_and_signals() {
    let env = Env::new();
    assert_eq!(env.sh("exit 3").await.exit_code, 3);
    assert_eq!(env.sh("kill -9 $$").await.exit_code, -9);
    assert_eq!(env.sh("kill -15 $$").await.exit_code, -15);
}

#[tokio::test]
async fn programs_that_cannot_start_are_spawn_failed() {
    let env = Env::new();
    let detail = spawn_failed_detail(env.run_env(&["no-such-program-wsp"], &[], &[]).await);
    assert!(detail.contains("no-such-program-wsp"), "{detail}");

    let detail = spawn_failed_detail(env.run_env(&["/nonexistent/prog"], &[], &[]).await);
    assert!(detail.contains("/nonexistent/prog"), "{detail}");

    let plain = env.root().join("plain");
    std::fs::write(&plain, "data").unwrap();
    let detail = spawn_failed_detail(env.run_env(&[plain.to_str().unwrap()], &[], &[]).await);
    assert!(detail.contains("plain"), "{detail}");

    spawn_failed_detail(env.run_env(&[], &[], &[]).await);
}

#[tokio::test]
async fn output_is_captured_whole_and_decoded_lossily() {
    let env = Env::new();
    let result = env.sh(r"printf '\377ok\n'; printf 'e\376' >&2").await;
    assert_eq!(result.stdout, "\u{FFFD}ok\n");
    assert_eq!(result.stderr, "e\u{FFFD}");

    let result = env.sh("head -c 3000000 /dev/zero | tr '\\0' a").await;
    assert_eq!(result.stdout.len(), 3_000_000);
    assert!(result.stdout.bytes().all(|b| b == b'a'));
}

#[tokio::test]
async fn stack_variables_nest_inside_the_inherited_stack() {
    let env = Env::new();
    let script = r#"printf '%s|%s' "$WSP_ENVIRONMENT_ID" "$WSP_ENVIRONMENT_STACK""#;
    let alone = env.run_env(&["sh", "-c", script], &[], &[]).await.unwrap();
    assert_eq!(alone.stdout, format!("{ID}|{ID}"));
    let outer = vec!["env-aaaaaaaaaaaa".to_owned(), "env-bbbbbbbbbbbb".to_owned()];
    let nested = env
        .run_env(&["sh", "-c", script], &[], &outer)
        .await
        .unwrap();
    assert_eq!(
        nested.stdout,
        format!("{ID}|env-aaaaaaaaaaaa:env-bbbbbbbbbbbb:{ID}")
    );
}

const INNER: &str = "WSP_EXECUTE_TEST_INNER";
const INNER_MARKER: &str = "inner-test-ran";

/// Runs in a copy of this test binary started by `run_inherits_this_process_stack`, whose
/// environment carries a stack and a `PYTHONHOME`; does nothing in an ordinary test run.
#[tokio::test]
async fn inner_run_in_a_process_with_a_stack() {
    if std::env::var_os(INNER).is_none() {
        return;
    }
    let env = Env::new();
    let argv: Vec<String> = [
        "sh",
        "-c",
        r#"printf '%s|%s' "$WSP_ENVIRONMENT_STACK" "${PYTHONHOME-unset}""#,
    ]
    .map(String::from)
    .to_vec();
    let spec = RunSpec {
        activation: &env.activation,
        environment_id: ID,
        argv: &argv,
        cwd: &resolve_cwd(env.root(), None).unwrap(),
        env: &BTreeMap::new(),
        options: Default::default(),
    };
    let result = run(spec).await.unwrap();
    assert_eq!(result.stdout, format!("env-outer000000:{ID}|unset"));
    // This process's stdin is a pipe that stays open: the command must not inherit it.
    let stdin = env.sh("readlink /proc/self/fd/0").await;
    assert_eq!(stdin.stdout, "/dev/null\n");
    println!("{INNER_MARKER}");
}

#[test]
fn run_inherits_this_process_stack_and_drops_pythonhome() {
    let mut inner = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "execute::inner_run_in_a_process_with_a_stack",
            "--nocapture",
        ])
        .env(INNER, "1")
        .env(ENVIRONMENT_STACK_VAR, "env-outer000000")
        .env("PYTHONHOME", "/bogus")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let open_stdin = inner.stdin.take();
    let output = inner.wait_with_output().unwrap();
    drop(open_stdin);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(INNER_MARKER), "{stdout}");
}

#[tokio::test]
async fn dropping_the_future_kills_the_whole_group() {
    let env = Env::new();
    let pidfile = env.root().join("pids");
    let script = format!(
        "sleep 300 & echo $$ $! > {0}.tmp && mv {0}.tmp {0}; wait",
        pidfile.display()
    );
    let argv = ["sh", "-c", &script];
    let running = env.run_env(&argv, &[], &[]);
    let pids = async {
        loop {
            if let Ok(text) = std::fs::read_to_string(&pidfile) {
                let pids: Vec<i32> = text
                    .split_whitespace()
                    .map(|p| p.parse().unwrap())
                    .collect();
                return pids;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let pids = tokio::select! {
        result = running => panic!("the command finished: {result:?}"),
        pids = tokio::time::timeout(BOUND, pids) => pids.expect("pidfile written"),
    };
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert_dies(pid).await;
    }
}

#[tokio::test]
async fn background_grandchild_holding_stdout_does_not_hang() {
    let env = Env::new();
    let start = Instant::now();
    // Killed along with the group when sh exits, the second job never gets to write.
    let result = env
        .sh("sleep 300 & echo $!; (sleep 0.3; echo late) &")
        .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(!result.stdout.contains("late"), "{}", result.stdout);
    let grandchild: i32 = result.stdout.trim().parse().unwrap();
    assert_dies(grandchild).await;
}
