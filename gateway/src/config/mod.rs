//! Gateway configuration: one TOML file, parsed once into typed values.
//!
//! `raw.rs` mirrors the file and rejects unknown keys; this module converts it into `Config`,
//! collecting every semantic problem with its line and key instead of stopping at the first.
//! Secrets never live in this file (later issues read them from files or the environment).
//!
//! Layer 0 of the gateway (ARCHITECTURE.md, "Code map"): imports nothing from the crate.

pub mod secrets;

mod agent;
mod compression;
mod dashboard;
mod document;
pub mod forms;
mod llm;
mod problem;
mod raw;
mod site;
mod sso;
mod store;
mod tls;
mod values;

pub use agent::AgentConfig;
pub use compression::CompressionConfig;
pub use dashboard::DashboardConfig;
pub use llm::LlmConfig;
pub use problem::{ConfigError, Problem};
pub use site::{Site, Upstream};
pub use sso::{ClaimNames, SsoConfig};
pub use store::{DatabaseSettings, DatabaseTls, StoreLocation};
pub use tls::{ClientIdentity, ServerTls, TlsVersion, UpstreamTls};

use crate::config::secrets::SecretRef;
use ipnet::IpNet;
use problem::LineIndex;
use raw::RawConfig;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// Site identifiers are shared with the policy engine, which names sites in its rules.
pub use policy::SiteId;

/// The checked configuration the gateway runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// The gateway's own public URL (login callbacks and links use it).
    pub public_url: http::Uri,
    /// Listeners, TLS and logging.
    pub server: ServerConfig,
    /// Where the embedded store keeps sessions (and, from later issues, approvals and audit).
    pub store: StoreLocation,
    /// The embedded store's page cache in bytes (`store.cache_bytes`); `None`: the store's
    /// default (64 MiB).
    pub store_cache_bytes: Option<u64>,
    /// The policy file; without one, the built-in policy denies every tool and context. With
    /// `policy_in_store` it only seeds the first stored version.
    pub policy_file: Option<PathBuf>,
    /// The dashboard manages the policy: its versions live in the store (`[policy] managed_by`).
    pub policy_in_store: bool,
    /// A policy compiled into the binary, used instead of `policy_file`. Never read from a
    /// configuration file: only `toolgate demo` sets it, for its embedded demo policy.
    pub embedded_policy: Option<&'static str>,
    /// Single sign-on; `None` only when `server.insecure_no_sso` says so (development).
    pub sso: Option<SsoConfig>,
    /// The audit log's settings.
    pub audit: AuditConfig,
    /// Timeouts for clients and upstreams.
    pub timeouts: Timeouts,
    /// Size limits.
    pub limits: Limits,
    /// How rewritten pages are compressed for the browser.
    pub compression: CompressionConfig,
    /// The internal sites, in id order.
    pub sites: Vec<Site>,
    /// The model server; `None`: the agent answers that no model is configured.
    pub llm: Option<LlmConfig>,
    /// Limits of the agent loop.
    pub agent: AgentConfig,
    /// The policy administration dashboard; `None`: not served.
    pub dashboard: Option<DashboardConfig>,
    /// The file this was loaded from (`None` when parsed from text): SIGHUP reads it again.
    pub source: Option<PathBuf>,
}

/// `[audit]`.
#[derive(Debug, Clone, Default)]
pub struct AuditConfig {
    /// The key for digests and prune checkpoints; without one, a key is generated once and kept
    /// in the store.
    pub key: Option<SecretRef>,
    /// Groups allowed to read the audit log through the query API.
    pub reader_groups: Vec<String>,
}

/// The smallest page cache the store accepts (1 MiB).
const MIN_STORE_CACHE_BYTES: u64 = 1024 * 1024;

/// `[server]`.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where users connect.
    pub listen: SocketAddr,
    /// Health and metrics; never exposed to users.
    pub admin_listen: SocketAddr,
    /// Certificate and key, minimum version, HSTS; plain HTTP when absent.
    pub tls: Option<ServerTls>,
    /// Peers whose `X-Forwarded-*` headers are believed.
    pub trusted_proxies: Vec<IpNet>,
    /// How logs are written.
    pub log_format: LogFormat,
    /// Identity headers other proxies set, which clients may never send to a site (lower case).
    pub identity_headers: Vec<String>,
}

/// The identity headers oauth2-proxy, Apache `mod_auth_*`, Authelia and similar set, which apps
/// migrated from them trust: dropped from every request unless `server.identity_headers` says
/// otherwise. (The gateway's own `X-Forwarded-User`/`-Email`/`-Groups` and `X-Toolgate-*` are
/// always dropped.)
pub const DEFAULT_IDENTITY_HEADERS: [&str; 14] = [
    "remote-user",
    "remote-email",
    "remote-groups",
    "remote-name",
    "x-remote-user",
    "x-remote-email",
    "x-remote-groups",
    "x-auth-request-user",
    "x-auth-request-email",
    "x-auth-request-groups",
    "x-auth-request-preferred-username",
    "x-auth-request-access-token",
    "x-forwarded-preferred-username",
    "x-webauth-user",
];

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line, for log shippers.
    Json,
    /// Human-readable lines, for terminals.
    Pretty,
}

/// Timeouts. There is deliberately no total request timeout: long streams must work.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// A client must finish sending request headers within this time.
    pub header_read: Duration,
    /// Establishing the TCP (and TLS) connection to an upstream.
    pub upstream_connect: Duration,
    /// From sending the request to receiving the upstream's response headers.
    pub upstream_headers: Duration,
    /// The longest silence allowed inside a request or response body.
    pub body_idle: Duration,
    /// How long in-flight requests may take to finish after SIGTERM.
    pub shutdown_grace: Duration,
}

/// Size limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request head (request line and headers) in bytes; more gets 431.
    pub max_header_bytes: usize,
    /// Most request header fields; more gets 431.
    pub max_headers: usize,
    /// Memory one HTML rewriter may use before it fails closed.
    pub rewrite_memory: usize,
    /// Open user connections at most; further ones are closed at once (and counted).
    pub max_connections: usize,
    /// Open user connections from one client address at most (a trusted proxy counts as one
    /// address: raise it, or the total, for a load balancer in front).
    pub max_connections_per_ip: usize,
}

impl Config {
    /// Reads and checks a configuration file. Relative paths in it are relative to the
    /// file's own directory, so a config and its policy can move together.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|error| ConfigError::whole_file(&name, format!("cannot read: {error}")))?;
        let mut config = Self::parse(&text, &name)?;
        if let Some(directory) = path.parent() {
            config.resolve_relative_to(directory);
        }
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// The ids of every configured site, for validating policies.
    pub fn site_ids(&self) -> Vec<SiteId> {
        self.sites.iter().map(|site| site.id.clone()).collect()
    }

    fn resolve_relative_to(&mut self, directory: &Path) {
        let resolve = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = directory.join(&*path);
            }
        };
        match &mut self.store {
            StoreLocation::Directory(path) => resolve(path),
            StoreLocation::Database(DatabaseSettings {
                tls: DatabaseTls::VerifyFull { ca_file: Some(path) },
                ..
            }) => {
                resolve(path);
            }
            _ => {}
        }
        if let StoreLocation::Database(DatabaseSettings { password: Some(password), .. }) = &mut self.store {
            password.resolve_relative_to(directory);
        }
        if let Some(file) = &mut self.policy_file {
            resolve(file);
        }
        self.tls_paths_mut().into_iter().for_each(resolve);
        if let Some(key) = &mut self.audit.key {
            key.resolve_relative_to(directory);
        }
        if let Some(sso) = &mut self.sso {
            sso.client_secret.resolve_relative_to(directory);
            for key in sso.session_keys.iter_mut().chain(sso.assertion_keys.iter_mut()) {
                key.resolve_relative_to(directory);
            }
        }
    }

    /// The host the gateway answers for itself (login callback), from `public_url`.
    pub fn gateway_host(&self) -> String {
        self.public_url.host().unwrap_or_default().to_ascii_lowercase()
    }

    /// Parses configuration text; `file` names it in problems.
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        let lines = LineIndex::new(text);
        let (raw, unknown_keys) = document::deserialize(text, &lines)
            .map_err(|problems| ConfigError { file: file.to_owned(), problems })?;
        let mut checker = Checker { lines: &lines, problems: unknown_keys };
        let config = checker.convert(raw);
        match config {
            Some(config) if checker.problems.is_empty() => Ok(config),
            _ => {
                checker.problems.sort_by_key(|problem| problem.line);
                Err(ConfigError { file: file.to_owned(), problems: checker.problems })
            }
        }
    }

    /// The site whose host is `host` (lower-case, without port).
    pub fn site_for_host(&self, host: &str) -> Option<&Site> {
        self.sites.iter().find(|site| site.host == host)
    }
}

/// Semantic checks: every problem is collected, the conversion goes on past each one.
pub(crate) struct Checker<'a> {
    lines: &'a LineIndex,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn convert(&mut self, raw: RawConfig) -> Option<Config> {
        let public_url = self.check(&raw.public_url, "public_url", values::public_url);
        let listen = self.check(&raw.server.listen, "server.listen", values::socket_addr);
        let admin_listen = self.check(&raw.server.admin_listen, "server.admin_listen", values::socket_addr);
        let tls = self.server_tls(raw.server.tls.as_ref());
        let trusted_proxies: Vec<_> = raw
            .server
            .trusted_proxies
            .iter()
            .enumerate()
            .filter_map(|(index, value)| {
                self.check(value, &format!("server.trusted_proxies[{index}]"), values::ip_net)
            })
            .collect();
        let identity_headers = match &raw.server.identity_headers {
            None => DEFAULT_IDENTITY_HEADERS.iter().map(|name| (*name).to_owned()).collect(),
            Some(names) => names
                .iter()
                .enumerate()
                .filter_map(|(index, name)| {
                    self.check(name, &format!("server.identity_headers[{index}]"), values::header_name)
                })
                .collect(),
        };
        let log_format = match &raw.server.log_format {
            None => Some(LogFormat::Pretty),
            Some(value) => self.check(value, "server.log_format", values::log_format),
        };
        let store = self.store(raw.store.as_ref());
        let store_cache_bytes = match raw.store.as_ref().and_then(|store| store.cache_bytes.as_ref()) {
            None => Some(None),
            Some(value) => match u64::try_from(*value.get_ref()) {
                Ok(bytes) if bytes >= MIN_STORE_CACHE_BYTES => Some(Some(bytes)),
                _ => {
                    self.problem(
                        value,
                        "store.cache_bytes",
                        &format!("must be at least {MIN_STORE_CACHE_BYTES}"),
                    );
                    None
                }
            },
        };
        let llm = match &raw.llm {
            Some(llm) => self.llm(llm).map(Some),
            None => Some(None),
        };
        let agent = self.agent(&raw.agent);
        let policy_source = self.policy_source(raw.policy.as_ref());
        let dashboard = match &raw.dashboard {
            Some(dashboard) => self.dashboard(dashboard, !raw.server.insecure_no_sso).map(Some),
            None => Some(None),
        };
        let sso = match (&raw.sso, raw.server.insecure_no_sso) {
            (Some(sso), false) => self.sso(sso).map(Some),
            (None, true) => Some(None),
            (Some(_), true) => {
                self.problems.push(Problem {
                    line: None,
                    key: "server.insecure_no_sso".into(),
                    message: "cannot be combined with an [sso] section".into(),
                });
                None
            }
            (None, false) => {
                self.problems.push(Problem {
                    line: None,
                    key: "sso".into(),
                    message: "every user must sign in: add an [sso] section (or, for development only, \
                              `insecure_no_sso = true` under [server])"
                        .into(),
                });
                None
            }
        };
        let audit = match &raw.audit {
            None => Some(AuditConfig::default()),
            Some(audit) => {
                let key = match &audit.key {
                    None => Some(None),
                    Some(value) => self.check(value, "audit.key", SecretRef::parse).map(Some),
                };
                key.map(|key| AuditConfig {
                    key,
                    reader_groups: audit.reader_groups.iter().map(|group| group.get_ref().clone()).collect(),
                })
            }
        };
        let timeouts = self.timeouts(&raw.timeouts);
        let limits = self.limits(&raw.limits);
        let compression = self.compression(&raw.compression);
        let sites = self.sites(&raw);
        if let Some(url) = &public_url {
            let gateway_host = url.host().unwrap_or_default().to_ascii_lowercase();
            if sites.iter().any(|site| site.host == gateway_host) {
                self.problem(
                    &raw.public_url,
                    "public_url",
                    "the gateway's own host must not be a site's host (sign-in lives there)",
                );
            }
        }
        if let (Some(Some(config)), Some(raw_dashboard)) = (&dashboard, &raw.dashboard) {
            self.dashboard_host_is_its_own(config, raw_dashboard, public_url.as_ref(), &sites);
        }
        if let (Some(store), Some(sso)) = (&store, &sso) {
            self.shared_store_needs_shared_keys(store, sso.as_ref());
        }
        if listen.is_some() && listen == admin_listen && listen.is_some_and(|a| a.port() != 0) {
            self.problem(&raw.server.admin_listen, "server.admin_listen", "must differ from server.listen");
        }
        Some(Config {
            public_url: public_url?,
            server: ServerConfig {
                listen: listen?,
                admin_listen: admin_listen?,
                tls: tls?,
                trusted_proxies,
                log_format: log_format?,
                identity_headers,
            },
            store: store?,
            store_cache_bytes: store_cache_bytes?,
            policy_file: policy_source.as_ref()?.0.clone(),
            policy_in_store: policy_source?.1,
            embedded_policy: None,
            sso: sso?,
            audit: audit?,
            timeouts: timeouts?,
            limits: limits?,
            compression: compression?,
            sites,
            llm: llm?,
            agent: agent?,
            dashboard: dashboard?,
            source: None,
        })
    }

    fn timeouts(&mut self, raw: &raw::RawTimeouts) -> Option<Timeouts> {
        let mut duration = |value: &Option<Spanned<String>>, key: &str, default: Duration| match value {
            None => Some(default),
            Some(value) => self.check(value, &format!("timeouts.{key}"), values::duration),
        };
        Some(Timeouts {
            header_read: duration(&raw.header_read, "header_read", Duration::from_secs(10))?,
            upstream_connect: duration(&raw.upstream_connect, "upstream_connect", Duration::from_secs(5))?,
            upstream_headers: duration(&raw.upstream_headers, "upstream_headers", Duration::from_secs(60))?,
            body_idle: duration(&raw.body_idle, "body_idle", Duration::from_secs(60))?,
            shutdown_grace: duration(&raw.shutdown_grace, "shutdown_grace", Duration::from_secs(30))?,
        })
    }

    fn limits(&mut self, raw: &raw::RawLimits) -> Option<Limits> {
        let mut size = |value: &Option<Spanned<i64>>, key: &str, default: usize, min: usize| {
            let Some(value) = value else { return Some(default) };
            let number = *value.get_ref();
            match usize::try_from(number) {
                Ok(number) if number >= min => Some(number),
                _ => {
                    self.problem(value, &format!("limits.{key}"), &format!("must be at least {min}"));
                    None
                }
            }
        };
        Some(Limits {
            // hyper's HTTP/1 read buffer cannot be smaller than 8 KiB.
            max_header_bytes: size(&raw.max_header_bytes, "max_header_bytes", 16 * 1024, 8192)?,
            max_headers: size(&raw.max_headers, "max_headers", 100, 16)?,
            rewrite_memory: size(&raw.rewrite_memory, "rewrite_memory", 4 * 1024 * 1024, 64 * 1024)?,
            max_connections: size(&raw.max_connections, "max_connections", 10_000, 1)?,
            max_connections_per_ip: size(&raw.max_connections_per_ip, "max_connections_per_ip", 512, 1)?,
        })
    }

    /// Converts one spanned value, recording a problem when the conversion fails.
    fn check<R>(
        &mut self,
        value: &Spanned<String>,
        key: &str,
        convert: impl FnOnce(&str) -> Result<R, String>,
    ) -> Option<R> {
        match convert(value.get_ref()) {
            Ok(converted) => Some(converted),
            Err(message) => {
                self.problem(value, key, &message);
                None
            }
        }
    }

    /// A problem with no one line to point at (a missing section, a combination).
    fn unplaced(&mut self, key: &str, message: &str) {
        self.problems.push(Problem { line: None, key: key.to_owned(), message: message.to_owned() });
    }

    fn problem<T>(&mut self, value: &Spanned<T>, key: &str, message: &str) {
        self.problems.push(Problem {
            line: Some(self.lines.line_of(value.span().start)),
            key: key.to_owned(),
            message: message.to_owned(),
        });
    }
}

#[cfg(test)]
mod tests;
