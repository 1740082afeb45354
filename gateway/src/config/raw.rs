//! The configuration file exactly as written: serde structs that reject unknown keys.
//!
//! Nothing here is trusted or interpreted; `typed.rs` converts these once into checked values.
//! Values that need validation keep their source span so a problem can name its line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub public_url: Spanned<String>,
    pub server: RawServer,
    #[serde(default)]
    pub store: Option<RawStore>,
    #[serde(default)]
    pub sso: Option<RawSso>,
    #[serde(default)]
    pub policy: Option<RawPolicy>,
    #[serde(default)]
    pub audit: Option<RawAudit>,
    #[serde(default)]
    pub timeouts: RawTimeouts,
    #[serde(default)]
    pub limits: RawLimits,
    #[serde(default)]
    pub sites: BTreeMap<Spanned<String>, RawSite>,
}

/// `[server]`: where the gateway listens and how it logs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    pub listen: Spanned<String>,
    pub admin_listen: Spanned<String>,
    #[serde(default)]
    pub tls: Option<RawTls>,
    #[serde(default)]
    pub trusted_proxies: Vec<Spanned<String>>,
    #[serde(default)]
    pub log_format: Option<Spanned<String>>,
    /// Development only: serve without single sign-on (every user is anonymous).
    #[serde(default)]
    pub insecure_no_sso: bool,
}

/// `[server.tls]`: certificate chain and private key, PEM files.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTls {
    pub cert: Spanned<String>,
    pub key: Spanned<String>,
}

/// `[store]`: where the embedded store keeps its files.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStore {
    pub path: Spanned<String>,
}

/// `[sso]`: the corporate identity provider (OpenID Connect).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSso {
    pub issuer: Spanned<String>,
    pub client_id: Spanned<String>,
    pub client_secret: Spanned<String>,
    #[serde(default)]
    pub scopes: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub algorithms: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub audiences: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub claims: RawClaims,
    #[serde(default)]
    pub session_lifetime: Option<Spanned<String>>,
    #[serde(default)]
    pub key_refetch_interval: Option<Spanned<String>>,
    #[serde(default)]
    pub session_keys: Vec<Spanned<String>>,
    #[serde(default)]
    pub assertion_keys: Vec<Spanned<String>>,
}

/// `[sso.claims]`: which token claims carry the user id, email and groups.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClaims {
    pub user: Option<Spanned<String>>,
    pub email: Option<Spanned<String>>,
    pub groups: Option<Spanned<String>>,
}

/// `[audit]`: the audit log's key and who may read it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAudit {
    #[serde(default)]
    pub key: Option<Spanned<String>>,
    #[serde(default)]
    pub reader_groups: Vec<Spanned<String>>,
}

/// `[policy]`: the policy document the gateway enforces.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub file: Spanned<String>,
}

/// `[timeouts]`: durations written as `500ms`, `10s`, `5m` or `1h`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTimeouts {
    pub header_read: Option<Spanned<String>>,
    pub upstream_connect: Option<Spanned<String>>,
    pub upstream_headers: Option<Spanned<String>>,
    pub body_idle: Option<Spanned<String>>,
    pub shutdown_grace: Option<Spanned<String>>,
}

/// `[limits]`: sizes in bytes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub max_header_bytes: Option<Spanned<i64>>,
    pub max_headers: Option<Spanned<i64>>,
    pub rewrite_memory: Option<Spanned<i64>>,
}

/// `[sites.<id>]`: one internal web site behind the gateway.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSite {
    pub host: Spanned<String>,
    pub upstream: Spanned<String>,
    #[serde(default)]
    pub preserve_host: bool,
    /// Groups allowed to open the site at all; absent means every signed-in user.
    #[serde(default)]
    pub allow_groups: Option<Vec<Spanned<String>>>,
    /// Keep the texts of this site's audit records (prompts, arguments) for this long.
    #[serde(default)]
    pub capture_content: Option<Spanned<String>>,
}
