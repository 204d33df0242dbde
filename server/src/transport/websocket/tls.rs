//! TLS for `wss://`: a rustls server configuration from PEM files.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;

/// A TLS server configuration (rustls, ring) from a PEM certificate chain and a PEM private
/// key; each failure names its file.
pub fn tls_from_pem(certificates: &Path, key: &Path) -> io::Result<Arc<ServerConfig>> {
    let named = |path: &Path, error: &dyn std::fmt::Display| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {error}", path.display()),
        )
    };
    let chain = CertificateDer::pem_file_iter(certificates)
        .map_err(|e| named(certificates, &e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| named(certificates, &e))?;
    if chain.is_empty() {
        return Err(named(certificates, &"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| named(key, &e))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(Arc::new(config))
}
