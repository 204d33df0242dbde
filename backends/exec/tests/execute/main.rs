//! Running commands: argv, cwd, exit statuses, memory and output limits, options, and
//! containment (cgroups and PID namespaces) in every mode this machine has.

#[path = "../execute_support/mod.rs"]
mod execute_support;

mod execute;
mod execute_containment;
mod execute_cwd;
mod execute_exit;
mod execute_interactive;
mod execute_memory;
mod execute_options;
