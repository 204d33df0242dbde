//! Creates one environment: `create <python> <root> [native|stdlib] [seed-cache-dir]`, and
//! prints how long it took. Useful for timing and for looking at what gets written.

use std::path::PathBuf;
use std::time::Instant;

use wsp_backend_venv::{create_venv, VenvMode, VenvOptions};

const QUERY: &str = "import json, os, sys; print(json.dumps({'executable': os.path.realpath(sys.executable), 'version': dict(zip(['major', 'minor', 'patch'], sys.version_info[:3])), 'base_prefix': sys.base_prefix, 'base_exec_prefix': sys.base_exec_prefix, 'implementation': sys.implementation.name, 'abiflags': sys.abiflags}))";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let usage = "usage: create <python> <root> [native|stdlib] [seed-cache-dir]";
    let python = PathBuf::from(args.next().ok_or(usage)?);
    let root = PathBuf::from(args.next().ok_or(usage)?);
    let mode = match args.next().as_deref().and_then(|m| m.to_str()) {
        None | Some("native") => VenvMode::Native,
        Some("stdlib") => VenvMode::Stdlib,
        Some(other) => return Err(format!("unknown mode {other}; {usage}").into()),
    };
    let seed_cache_dir = args.next().map(PathBuf::from);
    let output = std::process::Command::new(&python)
        .args(["-c", QUERY])
        .output()?;
    let info = serde_json::from_slice(&output.stdout)?;
    let options = VenvOptions {
        mode,
        seed_pip: seed_cache_dir.is_some(),
        seed_cache_dir,
        prompt: None,
    };
    let started = Instant::now();
    let created = create_venv(&root, &info, &options).await?;
    eprintln!(
        "created {} in {:?} (seed: {:?})",
        created.interpreter_path.display(),
        started.elapsed(),
        created.seed
    );
    Ok(())
}
