//! The `Content-Length` codec: its recovery rules, its limits, and its properties under split
//! and corrupted input.

mod common;
mod corruption;
mod limits;
mod properties;
mod recovery;
