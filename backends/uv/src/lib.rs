//! The uv environment backend of WSP.
#![warn(missing_docs)]
