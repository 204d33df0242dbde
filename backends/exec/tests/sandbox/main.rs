//! The sandbox: what a sandboxed command may read and write, metadata and setuid files, a
//! kernel without Landlock, a private TMPDIR in the state directory, and a sandbox as wide
//! as the machine allows.

#[path = "../execute_sandbox_support/mod.rs"]
mod execute_sandbox_support;

mod execute_sandbox;
mod execute_sandbox_metadata;
mod execute_sandbox_setuid;
mod execute_sandbox_tmp;
mod execute_sandbox_unavailable;
mod execute_sandbox_wide;
