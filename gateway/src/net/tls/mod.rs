//! TLS, both ways. The user-facing listener (rustls with the aws-lc-rs provider, ALPN offering
//! HTTP/2 and HTTP/1.1, a minimum protocol version, HSTS) takes its certificate from a
//! `ServerCertificate` that reloads without a restart (`certificate.rs`); connections to
//! upstreams trust the system roots or a site's own CA bundle and may present a client
//! certificate (`upstream.rs`); the shared store's database is checked against the system roots
//! and its own CA (`database.rs`). Every file problem names the configuration key it came from.

mod certificate;
pub mod database;
mod provider;
pub mod upstream;

pub use certificate::ServerCertificate;
pub use provider::crypto_provider;
pub(crate) use provider::system_roots;

use crate::config::{Config, TlsVersion};
use http::{HeaderMap, header};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// Why a TLS file or setting could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file is missing, unreadable or holds nothing of the expected kind.
    #[error("{key}: cannot load {what} from {path}: {reason}")]
    File {
        /// The configuration key naming the file (`server.tls.cert`, `sites.hr.tls.ca_file`).
        key: String,
        /// What was expected in it.
        what: &'static str,
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The files load but rustls refuses them (key does not match, unsupported algorithm).
    #[error("{key}: {reason}")]
    Unusable {
        /// The configuration key (`server.tls`, `sites.hr.tls.client_cert`).
        key: String,
        /// What rustls said.
        reason: String,
    },
}

/// The acceptor for the user-facing listener. The certificate is asked for per handshake, so a
/// reloaded one is used by new connections while open ones keep the one they started with.
pub fn acceptor(
    certificate: Arc<ServerCertificate>,
    min_version: TlsVersion,
) -> Result<TlsAcceptor, TlsError> {
    let versions: &[&rustls::SupportedProtocolVersion] = match min_version {
        TlsVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::Tls13 => &[&rustls::version::TLS13],
    };
    let mut config = rustls::ServerConfig::builder_with_provider(crate::net::tls::crypto_provider())
        .with_protocol_versions(versions)
        .map_err(|error| TlsError::Unusable {
            key: "server.tls.min_version".into(),
            reason: error.to_string(),
        })?
        .with_no_client_auth()
        .with_cert_resolver(certificate);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Adds the configured `Strict-Transport-Security` header. Call it only for responses that go
/// out over TLS: browsers must ignore the header over plain HTTP, and the gateway never sends
/// it there.
pub fn add_strict_transport_security(config: &Config, headers: &mut HeaderMap) {
    if let Some(value) = config.server.tls.as_ref().and_then(|tls| tls.hsts.clone()) {
        // The gateway owns TLS for every host it serves: its setting wins over an upstream's.
        headers.insert(header::STRICT_TRANSPORT_SECURITY, value);
    }
}

/// Loads every TLS file a configuration names, as `check-config` and start-up do: the
/// listener's pair and each site's CA bundle and client certificate. Returns every problem.
pub fn check(config: &Config) -> Vec<TlsError> {
    let mut problems = Vec::new();
    if let Some(tls) = &config.server.tls
        && let Err(error) = certificate::load_pair(&tls.cert, &tls.key)
    {
        problems.push(error);
    }
    if let crate::config::StoreLocation::Database(database) = &config.store
        && let Err(error) = database::client_config(&database.tls)
    {
        problems.push(error);
    }
    for site in &config.sites {
        if let Some(tls) = &site.tls
            && let Err(error) = upstream::client_config(&site.id, tls)
        {
            problems.push(error);
        }
    }
    problems
}

/// A certificate chain (leaf first) from a PEM file; at least one certificate.
pub(crate) fn load_chain(key: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    load_certificates(key, "certificates", path)
}

/// Every certificate of a PEM file, at least one; `what` names them in errors.
pub(crate) fn load_certificates(
    key: &str,
    what: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let failure = |reason: String| TlsError::File {
        key: key.to_owned(),
        what,
        path: path.display().to_string(),
        reason,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|certificates| certificates.collect::<Result<_, _>>())
        .map_err(|error| failure(error.to_string()))?;
    if chain.is_empty() {
        return Err(failure("no certificate found".into()));
    }
    Ok(chain)
}

/// A private key (PKCS#8, PKCS#1 or SEC1) from a PEM file.
pub(crate) fn load_key(key: &str, path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|error| TlsError::File {
        key: key.to_owned(),
        what: "a private key",
        path: path.display().to_string(),
        reason: error.to_string(),
    })
}
