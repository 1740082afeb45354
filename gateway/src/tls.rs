//! TLS for the user-facing listener: rustls with the aws-lc-rs provider, certificate chain and
//! key from PEM files, ALPN offering HTTP/2 and HTTP/1.1.

use crate::config::TlsFiles;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// Why the TLS configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// The certificate file is missing, unreadable or holds no certificate.
    #[error("server.tls.cert: cannot load certificates from {path}: {reason}")]
    Certificate {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The key file is missing, unreadable or holds no private key.
    #[error("server.tls.key: cannot load a private key from {path}: {reason}")]
    Key {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// rustls refused the pair (key does not match, unsupported algorithm).
    #[error("server.tls: certificate and key are not usable together: {0}")]
    Config(#[from] rustls::Error),
}

/// Loads the certificate and key and builds the acceptor.
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, TlsError> {
    let cert_path = files.cert.display().to_string();
    let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certificates| certificates.collect::<Result<_, _>>())
        .map_err(|error| TlsError::Certificate { path: cert_path.clone(), reason: error.to_string() })?;
    if certificates.is_empty() {
        return Err(TlsError::Certificate { path: cert_path, reason: "no certificate found".into() });
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|error| TlsError::Key {
        path: files.key.display().to_string(),
        reason: error.to_string(),
    })?;
    let mut config = rustls::ServerConfig::builder_with_provider(crate::upstream::crypto_provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certificates, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
