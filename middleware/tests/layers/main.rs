//! The session stack's layers: catch-panic, drain, the lifecycle, the stack itself, trace
//! and params validation.

#[path = "../common/mod.rs"]
mod common;

mod catch_panic;
mod drain;
mod lifecycle;
mod stack;
mod trace;
mod validation;
