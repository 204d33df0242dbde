//! What the benches share: their runtime, the interpreter they measure with, and quiet
//! commands.

use std::process::{Command, Stdio};

use wsp_interpreters::{InterpreterInfo, Inventory, InventoryConfig};

/// A two-worker runtime, as the machine has two cores.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Python 3.12 from the environment's interpreters.
pub fn interpreter(rt: &tokio::runtime::Runtime) -> InterpreterInfo {
    let inventory = Inventory::new(InventoryConfig::from_env());
    rt.block_on(inventory.resolve(&"3.12".parse().expect("a version")))
        .expect("Python 3.12 is installed")
}

/// Runs `command` with no output; panics if it fails.
pub fn run_quietly(command: &mut Command) {
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("runs");
    assert!(status.success(), "{command:?} failed");
}
