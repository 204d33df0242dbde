//! The checks the fuzz targets run, shared with `tests/fuzz_corpus.rs`, which replays the checked-in
//! corpora through them as a plain test. Each check module names the codec as `crate::codec`, so
//! here that is the codec's own source and in the test it is `wsp::codec`.

/// The `wsp` crate's codec, compiled from its source.
#[path = "../../src/codec/mod.rs"]
#[allow(dead_code)]
pub mod codec;

pub mod codec_checks;
pub mod message_checks;
pub mod params_checks;
