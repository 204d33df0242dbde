//! Tower layers of a WSP server.
#![warn(missing_docs)]
