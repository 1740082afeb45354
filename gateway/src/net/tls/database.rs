//! TLS to the shared store's database (`[store] tls`, `ca_file`): verify-full against the system
//! roots *plus* the configured CA bundle (a company CA usually signs the database, and a public
//! CA may too), with the host name checked by rustls. Disabled only where the configuration
//! allowed it (a database on loopback).

use super::{TlsError, load_certificates};
use crate::config::DatabaseTls;
use std::sync::Arc;

/// The client configuration for the database; `None` when TLS is disabled.
pub fn client_config(tls: &DatabaseTls) -> Result<Option<Arc<rustls::ClientConfig>>, TlsError> {
    let DatabaseTls::VerifyFull { ca_file } = tls else { return Ok(None) };
    let key = "store.ca_file";
    let mut roots = rustls::RootCertStore::clone(&super::system_roots());
    if let Some(path) = ca_file {
        for (index, certificate) in load_certificates(key, "CA certificates", path)?.into_iter().enumerate() {
            roots.add(certificate).map_err(|error| TlsError::File {
                key: key.to_owned(),
                what: "CA certificates",
                path: path.display().to_string(),
                reason: format!("certificate {} is not usable: {error}", index + 1),
            })?;
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(super::crypto_provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::Unusable { key: "store.tls".to_owned(), reason: error.to_string() })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Some(Arc::new(config)))
}
