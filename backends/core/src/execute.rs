//! Running commands inside environments.
