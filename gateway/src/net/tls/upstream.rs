//! TLS settings for connections to one upstream (`[sites.<id>.tls]`): its own CA bundle, which
//! *replaces* the system roots for that site (a private CA pins the site to that CA; to trust a
//! public CA as well, put it in the bundle), and an optional client certificate for upstreams
//! that require mutual TLS. Sites without the table use `upstream::client_tls_config()`.

use super::{TlsError, load_certificates, load_chain, load_key};
use crate::config::{SiteId, UpstreamTls};
use std::path::Path;

/// The rustls client configuration for a site with `[sites.<id>.tls]`; reads every file it
/// names (errors name the key, e.g. `sites.hr.tls.ca_file`).
pub fn client_config(site: &SiteId, tls: &UpstreamTls) -> Result<rustls::ClientConfig, TlsError> {
    let prefix = format!("sites.{site}.tls");
    let roots = match &tls.ca_file {
        Some(path) => ca_bundle(&format!("{prefix}.ca_file"), path)?,
        None => crate::net::tls::system_roots(),
    };
    let builder = rustls::ClientConfig::builder_with_provider(crate::net::tls::crypto_provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::Unusable { key: prefix.clone(), reason: error.to_string() })?
        .with_root_certificates(roots);
    let Some(identity) = &tls.client_identity else { return Ok(builder.with_no_client_auth()) };
    let chain = load_chain(&format!("{prefix}.client_cert"), &identity.cert)?;
    let key = load_key(&format!("{prefix}.client_key"), &identity.key)?;
    builder.with_client_auth_cert(chain, key).map_err(|error| TlsError::Unusable {
        key: format!("{prefix}.client_cert"),
        reason: format!("client certificate and key are not usable together: {error}"),
    })
}

/// Every certificate of a PEM bundle as a trust anchor. A bundle with a certificate that cannot
/// be used is refused whole: a silently skipped CA would surface later as an upstream outage.
fn ca_bundle(key: &str, path: &Path) -> Result<std::sync::Arc<rustls::RootCertStore>, TlsError> {
    let failure = |reason: String| TlsError::File {
        key: key.to_owned(),
        what: "CA certificates",
        path: path.display().to_string(),
        reason,
    };
    let certificates = load_certificates(key, "CA certificates", path)?;
    let mut roots = rustls::RootCertStore::empty();
    for (index, certificate) in certificates.into_iter().enumerate() {
        roots
            .add(certificate)
            .map_err(|error| failure(format!("certificate {} is not usable: {error}", index + 1)))?;
    }
    Ok(std::sync::Arc::new(roots))
}
