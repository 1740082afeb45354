//! The listener's certificate, replaceable while the gateway runs. rustls asks the resolver for
//! a certificate at every handshake; the resolver answers with the pair in force, an
//! `Arc<CertifiedKey>` behind a lock. A reload reads both files again and swaps the pair only
//! when it is complete and consistent (the key matches the leaf), so a half-written or broken
//! pair never replaces a working one. Connections already open keep the pair they started with.

use super::{TlsError, load_chain, load_key};
use crate::config::ServerTls;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::SystemTime;

/// The certificate in force and the files it came from.
pub struct ServerCertificate {
    cert: PathBuf,
    key: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
    /// What the files looked like when last read (modification time and size of each).
    last_seen: Mutex<Option<Stamp>>,
}

type Stamp = [(SystemTime, u64); 2];

impl ServerCertificate {
    /// Loads the pair `[server.tls]` names.
    pub fn load(tls: &ServerTls) -> Result<Self, TlsError> {
        let stamp = stamp(&tls.cert, &tls.key);
        let pair = load_pair(&tls.cert, &tls.key)?;
        Ok(Self {
            cert: tls.cert.clone(),
            key: tls.key.clone(),
            current: RwLock::new(Arc::new(pair)),
            last_seen: Mutex::new(stamp),
        })
    }

    /// The certificate file (for logs and audit records; the key file is never named there).
    pub fn cert_path(&self) -> &Path {
        &self.cert
    }

    /// The pair in force.
    pub fn current(&self) -> Arc<CertifiedKey> {
        // A poisoned lock still holds a whole pair: writers only ever store complete values.
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether either file changed (modification time or size) since it was last read.
    /// Polling `stat` also sees the symlink swaps Kubernetes uses for mounted Secrets.
    pub fn changed(&self) -> bool {
        let now = stamp(&self.cert, &self.key);
        now.is_some() && now != *self.last_seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads both files again and puts the pair in force if it is usable; otherwise the pair
    /// in force stays. A rejected version is not retried until a file changes again.
    pub fn reload(&self) -> Result<(), TlsError> {
        *self.last_seen.lock().unwrap_or_else(PoisonError::into_inner) = stamp(&self.cert, &self.key);
        let pair = load_pair(&self.cert, &self.key)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(pair);
        Ok(())
    }
}

impl ResolvesServerCert for ServerCertificate {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

impl std::fmt::Debug for ServerCertificate {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Paths only: the key material stays out of every log line.
        formatter.debug_struct("ServerCertificate").field("cert", &self.cert).finish_non_exhaustive()
    }
}

/// Loads a certificate chain and its key and checks that they belong together.
pub(super) fn load_pair(cert: &Path, key: &Path) -> Result<CertifiedKey, TlsError> {
    let chain = load_chain("server.tls.cert", cert)?;
    let key = load_key("server.tls.key", key)?;
    CertifiedKey::from_der(chain, key, &crate::net::tls::crypto_provider()).map_err(|error| {
        TlsError::Unusable {
            key: "server.tls".into(),
            reason: format!("certificate and key are not usable together: {error}"),
        }
    })
}

fn stamp(cert: &Path, key: &Path) -> Option<Stamp> {
    use crate::support::clock::file_stamp;
    Some([file_stamp(cert)?, file_stamp(key)?])
}
