//! The typed TLS settings: `[server.tls]` (the listener's certificate files, its minimum
//! protocol version, the HSTS header) and `[sites.<id>.tls]` (the CA bundle an upstream is
//! checked against, the client certificate for mutual TLS). Files are only named here; the
//! `tls` module loads them, at start-up, in `check-config` and on every reload.

use super::{Config, raw, values};
use http::HeaderValue;
use std::path::PathBuf;
use toml::Spanned;

/// `[server.tls]`: TLS on the user-facing listener.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// Certificate chain, leaf first (PEM). Re-read when it changes.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1 PEM). Re-read when it changes.
    pub key: PathBuf,
    /// The oldest protocol version offered.
    pub min_version: TlsVersion,
    /// The `Strict-Transport-Security` value sent on every response over TLS; `None`: not sent.
    pub hsts: Option<HeaderValue>,
}

/// A TLS protocol version (`"1.2"` or `"1.3"` in the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    /// TLS 1.2 and 1.3 (the default).
    Tls12,
    /// TLS 1.3 only.
    Tls13,
}

/// `[sites.<id>.tls]`: how the gateway speaks TLS to one upstream. Sites with equal settings
/// share one connection pool; sites without the table share the default one (system roots).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UpstreamTls {
    /// A PEM bundle that *replaces* the system roots for this upstream; `None`: system roots.
    pub ca_file: Option<PathBuf>,
    /// The certificate the gateway presents to an upstream that asks for one (mutual TLS).
    pub client_identity: Option<ClientIdentity>,
}

/// A client certificate chain and its private key (PEM files).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientIdentity {
    /// Certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

impl Config {
    /// Every TLS file the configuration names, for resolving relative paths.
    pub(super) fn tls_paths_mut(&mut self) -> Vec<&mut PathBuf> {
        let mut paths = Vec::new();
        if let Some(tls) = &mut self.server.tls {
            paths.extend([&mut tls.cert, &mut tls.key]);
        }
        for tls in self.sites.iter_mut().filter_map(|site| site.tls.as_mut()) {
            paths.extend(tls.ca_file.as_mut());
            if let Some(identity) = &mut tls.client_identity {
                paths.extend([&mut identity.cert, &mut identity.key]);
            }
        }
        paths
    }
}

impl super::Checker<'_> {
    /// `Some(None)`: no `[server.tls]`; `None`: a problem was recorded.
    pub(super) fn server_tls(&mut self, raw: Option<&raw::RawTls>) -> Option<Option<ServerTls>> {
        let Some(raw) = raw else { return Some(None) };
        let cert = self.check(&raw.cert, "server.tls.cert", values::absolute_or_relative_path);
        let key = self.check(&raw.key, "server.tls.key", values::absolute_or_relative_path);
        let min_version = match &raw.min_version {
            None => Some(TlsVersion::Tls12),
            Some(value) => self.check(value, "server.tls.min_version", |text| match text {
                "1.2" => Ok(TlsVersion::Tls12),
                "1.3" => Ok(TlsVersion::Tls13),
                other => Err(format!("`{other}` is not a TLS version; use \"1.2\" or \"1.3\"")),
            }),
        };
        let subdomains = raw.hsts_include_subdomains.as_ref();
        let hsts = match (&raw.hsts_max_age, subdomains) {
            (None, Some(flag)) => {
                self.problem(flag, "server.tls.hsts_include_subdomains", "needs server.tls.hsts_max_age");
                None
            }
            (None, None) => Some(None),
            (Some(value), _) => {
                let include = subdomains.is_some_and(|flag| *flag.get_ref());
                self.check(value, "server.tls.hsts_max_age", |text| hsts_value(text, include)).map(Some)
            }
        };
        Some(Some(ServerTls { cert: cert?, key: key?, min_version: min_version?, hsts: hsts? }))
    }

    /// `Some(None)`: no `[sites.<id>.tls]`; `None`: a problem was recorded.
    pub(super) fn site_tls(
        &mut self,
        key: &str,
        raw: Option<&raw::RawSiteTls>,
    ) -> Option<Option<UpstreamTls>> {
        let Some(raw) = raw else { return Some(None) };
        let mut path = |value: &Option<Spanned<String>>, name: &str| match value {
            None => Some(None),
            Some(value) => {
                self.check(value, &format!("{key}.tls.{name}"), values::absolute_or_relative_path).map(Some)
            }
        };
        let ca_file = path(&raw.ca_file, "ca_file");
        let cert = path(&raw.client_cert, "client_cert");
        let private_key = path(&raw.client_key, "client_key");
        let client_identity = match (cert?, private_key?) {
            (Some(cert), Some(key)) => Some(ClientIdentity { cert, key }),
            (None, None) => None,
            (Some(_), None) => {
                let value = raw.client_cert.as_ref()?;
                self.problem(value, &format!("{key}.tls.client_cert"), "needs client_key beside it");
                return None;
            }
            (None, Some(_)) => {
                let value = raw.client_key.as_ref()?;
                self.problem(value, &format!("{key}.tls.client_key"), "needs client_cert beside it");
                return None;
            }
        };
        let ca_file = ca_file?;
        if ca_file.is_none() && client_identity.is_none() {
            self.problems.push(super::Problem {
                line: None,
                key: format!("{key}.tls"),
                message: "is empty: set ca_file, or client_cert and client_key".into(),
            });
            return None;
        }
        Some(Some(UpstreamTls { ca_file, client_identity }))
    }
}

/// `max-age=<seconds>[; includeSubDomains]` from a duration like `365d`.
fn hsts_value(text: &str, include_subdomains: bool) -> Result<HeaderValue, String> {
    let max_age = values::duration(text)?.as_secs();
    let suffix = if include_subdomains { "; includeSubDomains" } else { "" };
    HeaderValue::try_from(format!("max-age={max_age}{suffix}")).map_err(|error| error.to_string())
}
