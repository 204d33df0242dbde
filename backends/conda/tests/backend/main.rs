//! The conda backend against a local `file://` channel built from pyenv's interpreters: no
//! network, no conda installation. One test binary: each links rattler, ~13 s of build apiece.

mod common;
mod conformance;
mod environment;
mod install;
mod linker_panics;
mod provision;
