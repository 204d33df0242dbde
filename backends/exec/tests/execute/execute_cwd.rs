//! Working directories: resolved once to an open directory beneath the root, and entered by
//! that handle, so a path swapped for a symlink after the check cannot move the command.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::execute_support::Env;
use rustix::fs::{renameat_with, RenameFlags, CWD};
use tempfile::TempDir;
use wsp_exec::{resolve_cwd, run, RunSpec, WorkingDir};

const ID: &str = "env-0123456789ab";

async fn pwd(env: &Env, cwd: &WorkingDir) -> String {
    let argv = vec!["pwd".to_owned(), "-P".to_owned()];
    let spec = RunSpec {
        activation: &env.activation,
        environment_id: ID,
        argv: &argv,
        cwd,
        env: &Default::default(),
        options: Default::default(),
    };
    let result = run(spec).await.unwrap();
    assert_eq!(result.exit_code, 0, "{result:?}");
    result.stdout.trim_end().to_owned()
}

#[test]
fn cwd_rules() {
    let env = Env::new();
    let root = env.root().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let outside = TempDir::new().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(root.join("sub"), root.join("inner-link")).unwrap();
    std::os::unix::fs::symlink("/", root.join("to-slash")).unwrap();
    std::fs::write(root.join("file"), "").unwrap();
    let at = |p: &Path| resolve_cwd(env.root(), Some(p.to_str().unwrap()));
    let path = |resolved: Result<WorkingDir, String>| resolved.unwrap().path().to_owned();

    assert_eq!(path(resolve_cwd(env.root(), None)), root);
    assert_eq!(path(at(&root.join("sub"))), root.join("sub"));
    assert_eq!(path(at(&root.join("inner-link"))), root.join("sub"));
    assert_eq!(path(at(&root)), root);
    assert!(resolve_cwd(env.root(), Some("sub")).is_err());
    assert!(at(outside.path()).is_err());
    assert!(at(&root.join("escape")).is_err());
    assert!(at(&root.join("to-slash")).is_err());
    assert!(at(&root.join("sub/../..")).is_err());
    let message = at(&root.join("missing")).unwrap_err();
    assert!(message.contains("missing"), "{message}");
    let message = at(&root.join("file")).unwrap_err();
    assert!(message.contains("not a directory"), "{message}");
}

#[tokio::test]
async fn command_runs_in_the_given_cwd() {
    let env = Env::new();
    let root = env.root().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let sub = resolve_cwd(&root, Some(root.join("sub").to_str().unwrap())).unwrap();
    assert_eq!(pwd(&env, &sub).await, root.join("sub").to_str().unwrap());
    let default = resolve_cwd(&root, None).unwrap();
    assert_eq!(pwd(&env, &default).await, root.to_str().unwrap());
}

#[tokio::test]
async fn the_checked_directory_is_entered_even_after_its_path_is_swapped() {
    let env = Env::new();
    let root = env.root().canonicalize().unwrap();
    std::fs::create_dir(root.join("d")).unwrap();
    let checked = resolve_cwd(&root, Some(root.join("d").to_str().unwrap())).unwrap();
    // After the check, `d` becomes a symlink to `/` and the directory moves away.
    std::fs::rename(root.join("d"), root.join("moved")).unwrap();
    std::os::unix::fs::symlink("/", root.join("d")).unwrap();
    assert_eq!(
        pwd(&env, &checked).await,
        root.join("moved").to_str().unwrap()
    );
}

#[tokio::test]
async fn a_racing_symlink_swap_never_moves_a_command_outside_the_root() {
    // Runs that got past the check; refusals do not count.
    const RUNS: usize = 200;
    let env = Env::new();
    let root = env.root().canonicalize().unwrap();
    let (dir, flip) = (root.join("d"), root.join("flip"));
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink("/", &flip).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, dir, flip) = (stop.clone(), dir.clone(), flip.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if renameat_with(CWD, &dir, CWD, &flip, RenameFlags::EXCHANGE).is_err() {
                    break;
                }
                swaps += 1;
                // Each state lasts about as long as a spawn, so checks and spawns straddle
                // swaps often.
                std::thread::sleep(std::time::Duration::from_micros(500));
            }
            swaps
        })
    };
    let (mut ran, mut refused) = (0, 0);
    let start = std::time::Instant::now();
    while ran < RUNS {
        assert!(
            start.elapsed() < crate::execute_support::BOUND,
            "{ran} runs only"
        );
        match resolve_cwd(&root, Some(dir.to_str().unwrap())) {
            Ok(cwd) => {
                let inside = pwd(&env, &cwd).await;
                assert!(
                    Path::new(&inside).starts_with(&root),
                    "run {ran} ran in {inside}, outside {}",
                    root.display()
                );
                ran += 1;
            }
            Err(_) => refused += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    println!("{ran} ran inside, {refused} refused, {swaps} swaps");
    assert!(
        swaps > RUNS as u64,
        "the swapper raced the runs ({swaps} swaps)"
    );
}
