//! The conda backend against a local `file://` channel built from pyenv's interpreters: no
//! network, no conda installation.

mod common;
mod environment;
mod provision;
