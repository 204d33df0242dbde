//! The Content-Length framing codec.
