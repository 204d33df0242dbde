//! The venv environment backend of WSP.
#![warn(missing_docs)]
