//! The checks the fuzz targets run, shared with `tests/wire/fuzz_corpus.rs`, which replays the
//! checked-in corpora through them as a plain test. Each check module names the codec as
//! `super::codec`: here and in the test that is `wsp_server::codec`. The upgrade's checks name
//! tungstenite `super::tungstenite` the same way.
#![forbid(unsafe_code)]

pub use tungstenite;
pub use wsp_server::codec;

pub mod codec_checks;
#[cfg(feature = "conda")]
pub mod conda_checks;
pub mod message_checks;
pub mod params_checks;
pub mod ws_upgrade_checks;
