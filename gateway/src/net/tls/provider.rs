//! The process's one rustls crypto provider and its one set of system roots, for the listener
//! and every client alike.

/// The one crypto provider of the whole binary (aws-lc-rs), shared by the listener and clients.
pub fn crypto_provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    static PROVIDER: std::sync::LazyLock<std::sync::Arc<rustls::crypto::CryptoProvider>> =
        std::sync::LazyLock::new(|| std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    PROVIDER.clone()
}

/// The operating system's certificate roots (`SSL_CERT_FILE`/`SSL_CERT_DIR` are honoured), read
/// once per process: every client (sites, the model, the identity provider) and every
/// configuration reload shares them; a changed system store takes a restart.
pub(crate) fn system_roots() -> std::sync::Arc<rustls::RootCertStore> {
    static ROOTS: std::sync::LazyLock<std::sync::Arc<rustls::RootCertStore>> =
        std::sync::LazyLock::new(|| {
            let mut roots = rustls::RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            for error in &found.errors {
                tracing::warn!(error = %error, "could not read some system certificate roots");
            }
            let (added, ignored) = roots.add_parsable_certificates(found.certs);
            tracing::debug!(added, ignored, "loaded system certificate roots for upstream TLS");
            std::sync::Arc::new(roots)
        });
    ROOTS.clone()
}
