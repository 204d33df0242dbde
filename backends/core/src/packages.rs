//! Scanning installed distributions.
