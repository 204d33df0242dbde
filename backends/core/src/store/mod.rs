//! The state store: the environment index, locks and sweeping.
