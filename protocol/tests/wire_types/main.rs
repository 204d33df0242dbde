//! The wire types: every params type's validation (every violation listed) and its schema
//! agreeing with it, ids, payload paths, wide integers and messages.

#[allow(dead_code)]
#[path = "../agreement/mod.rs"]
mod agreement;

mod execute_params;
mod execute_sandbox_params;
mod id_params;
mod ids;
mod install_params;
mod messages;
mod payload_paths;
mod schema_agreement;
mod wide_integers;
