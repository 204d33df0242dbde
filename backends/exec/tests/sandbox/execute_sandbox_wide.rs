//! A hidden path whose parent holds many entries: every sibling is still readable, with no
//! more descriptors open at once than a low `RLIMIT_NOFILE` allows (its own binary, since the
//! limit is the whole process's).

use crate::execute_sandbox_support::{python3, BOUND};
use std::collections::BTreeMap;
use wsp_exec::{
    containment_mode, resolve_cwd, run_with_stack, Activation, RunOptions, RunSpec, SandboxPolicy,
};

const SIBLINGS: usize = 1000;

#[tokio::test]
async fn every_sibling_of_a_hidden_path_stays_readable_under_a_low_descriptor_limit() {
    let parent = tempfile::TempDir::new().unwrap();
    for n in 0..SIBLINGS {
        let dir = parent.path().join(format!("sibling-{n:04}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("file.txt"), "readable\n").unwrap();
    }
    let state = parent.path().join("state");
    let root = state.join("environments").join("env-cccccccccccc");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(state.join("index.json"), "{}\n").unwrap();
    let script = root.join("attempt.py");
    std::fs::write(
        &script,
        "import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p).read(); print('ok')\n    except OSError as e:\n        print(e.errno)\n",
    )
    .unwrap();

    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(256),
            maximum: limit.maximum,
        },
    )
    .unwrap();

    let last = parent
        .path()
        .join(format!("sibling-{:04}/file.txt", SIBLINGS - 1));
    let python = python3();
    let argv: Vec<String> = [
        python.to_str().unwrap(),
        script.to_str().unwrap(),
        last.to_str().unwrap(),
        state.join("index.json").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let activation = Activation::venv(&root);
    let cwd = resolve_cwd(&root, None).unwrap();
    let env = BTreeMap::new();
    let spec = RunSpec {
        activation: &activation,
        environment_id: "env-cccccccccccc",
        argv: &argv,
        cwd: &cwd,
        env: &env,
        options: RunOptions {
            sandbox: Some(SandboxPolicy::offline(root.clone(), vec![state.clone()])),
            containment: Some(containment_mode()),
            ..RunOptions::default()
        },
    };
    let result = tokio::time::timeout(BOUND, run_with_stack(spec, &[]))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.exit_code, 0, "{result:?}");
    assert_eq!(
        result.stdout, "ok\n13\n",
        "the last sibling is readable, the state is not"
    );
}
