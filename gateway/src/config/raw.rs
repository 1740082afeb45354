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
    pub compression: RawCompression,
    #[serde(default)]
    pub sites: BTreeMap<Spanned<String>, RawSite>,
    #[serde(default)]
    pub llm: Option<RawLlm>,
    #[serde(default)]
    pub agent: RawAgent,
    #[serde(default)]
    pub dashboard: Option<RawDashboard>,
}

/// `[dashboard]`: the policy administration dashboard, on a host of its own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDashboard {
    pub host: Spanned<String>,
    pub admin_groups: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    pub auditor_groups: Vec<Spanned<String>>,
    #[serde(default)]
    pub approver_groups: Vec<Spanned<String>>,
}

/// `[llm]`: the OpenAI-compatible model server.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLlm {
    pub base_url: Spanned<String>,
    pub model: Spanned<String>,
    #[serde(default)]
    pub api_key: Option<Spanned<String>>,
    #[serde(default)]
    pub connect_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub first_token_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub idle_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub max_retries: Option<Spanned<i64>>,
    #[serde(default)]
    pub max_tokens: Option<Spanned<i64>>,
    #[serde(default)]
    pub model_aliases: Vec<Spanned<String>>,
}

/// `[agent]`: limits of the agent loop.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    #[serde(default)]
    pub max_rounds: Option<Spanned<i64>>,
    #[serde(default)]
    pub max_concurrent_turns: Option<Spanned<i64>>,
    #[serde(default)]
    pub tokens_per_hour: Option<Spanned<i64>>,
    #[serde(default)]
    pub approval_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub tool_timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub history_tokens: Option<Spanned<i64>>,
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
    /// Request headers that carry an identity some apps trust, dropped from every request
    /// (besides the gateway's own); none: the built-in list.
    #[serde(default)]
    pub identity_headers: Option<Vec<Spanned<String>>>,
}

/// `[server.tls]`: certificate chain and private key (PEM files), minimum version, HSTS.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTls {
    pub cert: Spanned<String>,
    pub key: Spanned<String>,
    #[serde(default)]
    pub min_version: Option<Spanned<String>>,
    #[serde(default)]
    pub hsts_max_age: Option<Spanned<String>>,
    #[serde(default)]
    pub hsts_include_subdomains: Option<Spanned<bool>>,
}

/// `[sites.<id>.tls]`: the CA bundle the upstream is checked against, the client certificate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSiteTls {
    #[serde(default)]
    pub ca_file: Option<Spanned<String>>,
    #[serde(default)]
    pub client_cert: Option<Spanned<String>>,
    #[serde(default)]
    pub client_key: Option<Spanned<String>>,
}

/// `[store]`: where the embedded store keeps its files, or which PostgreSQL database is shared.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStore {
    #[serde(default)]
    pub path: Option<Spanned<String>>,
    #[serde(default)]
    pub cache_bytes: Option<Spanned<i64>>,
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    #[serde(default)]
    pub password: Option<Spanned<String>>,
    #[serde(default)]
    pub tls: Option<Spanned<String>>,
    #[serde(default)]
    pub ca_file: Option<Spanned<String>>,
    #[serde(default)]
    pub pool_size: Option<Spanned<i64>>,
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
    #[serde(default)]
    pub provider_logout: Option<bool>,
}

/// `[sso.claims]`: which token claims carry the user id, email, groups and display name.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClaims {
    pub user: Option<Spanned<String>>,
    pub email: Option<Spanned<String>>,
    pub groups: Option<Spanned<String>>,
    pub name: Option<Spanned<String>>,
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
    #[serde(default)]
    pub file: Option<Spanned<String>>,
    /// `file` (default: the file is the policy, edited elsewhere) or `dashboard` (versions live
    /// in the store; the file, if any, seeds the first version).
    #[serde(default)]
    pub managed_by: Option<Spanned<String>>,
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
    pub max_connections: Option<Spanned<i64>>,
    pub max_connections_per_ip: Option<Spanned<i64>>,
}

/// `[compression]`: the codings rewritten pages may be compressed with, their levels, and the
/// smallest page worth compressing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCompression {
    pub codings: Option<Vec<Spanned<String>>>,
    pub brotli_level: Option<Spanned<i64>>,
    pub zstd_level: Option<Spanned<i64>>,
    pub gzip_level: Option<Spanned<i64>>,
    pub min_size: Option<Spanned<i64>>,
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
    /// Page tools for agents on this site (default on); off strips every tool and context and
    /// sends `Permissions-Policy: tools=()`.
    #[serde(default = "enabled")]
    pub page_tools: bool,
    /// Legacy forms that become agent tools.
    #[serde(default)]
    pub forms: Option<RawForms>,
    /// TLS to the upstream: a private CA, a client certificate.
    #[serde(default)]
    pub tls: Option<RawSiteTls>,
}

/// `[sites.<id>.forms]`: form rules and auto mode.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawForms {
    /// Derive tools for forms no rule matches.
    #[serde(default)]
    pub auto: bool,
    /// `[[sites.<id>.forms.rule]]`
    #[serde(default, rename = "rule")]
    pub rules: Vec<Spanned<RawFormRule>>,
}

/// One form rule: CSS selector → tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFormRule {
    pub selector: String,
    pub name: String,
    pub description: String,
    /// Control name → parameter description, or a table with a description and JSON Schema
    /// keywords (checked in `forms.rs`).
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, serde_json::Value>,
    /// Submit without waiting for the user (otherwise the user presses submit: a human gate).
    #[serde(default)]
    pub autosubmit: bool,
    /// The pages the rule applies to: one URL path glob or a list; none: every page.
    #[serde(default)]
    pub path: Option<OneOrMany>,
    /// Only forms submitted with this method (`GET` or `POST`); none: any.
    #[serde(default)]
    pub method: Option<String>,
    /// Only forms whose action resolves to a path matching this glob (or one of a list); none:
    /// any action.
    #[serde(default)]
    pub action: Option<OneOrMany>,
    /// A CSS selector for the site's own error messages on the page that answers a submission,
    /// in addition to the built-in markers (`outcomes`).
    #[serde(default)]
    pub error_selector: Option<String>,
}

/// One string or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings, in order.
    pub fn items(&self) -> &[String] {
        match self {
            Self::One(one) => std::slice::from_ref(one),
            Self::Many(many) => many,
        }
    }
}

fn enabled() -> bool {
    true
}
