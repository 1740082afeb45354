//! `[store]`: the embedded store's directory (`path`), or a PostgreSQL database shared by
//! several replicas (`url`), with its password reference, TLS (verify-full unless disabled on
//! loopback) and pool size. Secrets are references here; `app` reads them at start.

use super::secrets::SecretRef;
use super::{Checker, raw, values};
use std::path::PathBuf;
use toml::Spanned;

/// Where the store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// The embedded store, in a directory on disk.
    Directory(PathBuf),
    /// The embedded store in memory, gone at exit (`path = ":memory:"`; development and tests).
    Memory,
    /// A PostgreSQL database (`url = "postgres://…"`), shared by every replica.
    Database(DatabaseSettings),
}

impl StoreLocation {
    /// Whether several gateways share the store.
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::Database(_))
    }
}

/// `[store] url = "postgres://…"` and its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseSettings {
    /// `postgres://user@host:port/database`, never with a password.
    pub url: String,
    /// The password's `env:`/`file:` reference.
    pub password: Option<SecretRef>,
    /// How the server is checked.
    pub tls: DatabaseTls,
    /// The most connections each replica opens (default 16).
    pub pool_size: usize,
}

/// TLS to the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseTls {
    /// Required, with the server's certificate checked against the system roots plus
    /// `ca_file`, and its name against the URL's host (the default).
    VerifyFull {
        /// A PEM bundle of extra trusted roots (a company CA).
        ca_file: Option<PathBuf>,
    },
    /// Plain TCP; allowed only for a database on loopback.
    Disable,
}

/// The default pool size.
const DEFAULT_POOL_SIZE: usize = 16;
/// The largest pool size accepted.
const MAX_POOL_SIZE: i64 = 1024;

impl Checker<'_> {
    /// Replicas on one database must sign and check alike: a session cookie, a handoff or an
    /// approval token made by one is checked by another, so the keys are configured, not
    /// generated per process.
    pub(super) fn shared_store_needs_shared_keys(
        &mut self,
        store: &StoreLocation,
        sso: Option<&super::SsoConfig>,
    ) {
        if !store.is_shared() {
            return;
        }
        match sso {
            None => self.unplaced(
                "store.url",
                "a shared store needs [sso] with session_keys and assertion_keys: replicas sign alike",
            ),
            Some(sso) => {
                for (key, keys) in
                    [("sso.session_keys", &sso.session_keys), ("sso.assertion_keys", &sso.assertion_keys)]
                {
                    if keys.is_empty() {
                        self.unplaced(
                            key,
                            "required with store.url: every replica must check what another signed",
                        );
                    }
                }
            }
        }
    }

    pub(super) fn store(&mut self, raw: Option<&raw::RawStore>) -> Option<StoreLocation> {
        let Some(raw) = raw else { return Some(StoreLocation::Directory(PathBuf::from("toolgate-data"))) };
        match (&raw.path, &raw.url) {
            (Some(_), Some(url)) => {
                self.problem(url, "store.url", "set store.path or store.url, not both");
                None
            }
            (None, None) => {
                self.unplaced("store", "set store.path (the embedded store) or store.url (PostgreSQL)");
                None
            }
            (Some(path), None) => {
                for (key, present) in [("password", raw.password.is_some()), ("tls", raw.tls.is_some())] {
                    if present {
                        self.problem(path, &format!("store.{key}"), "applies only with store.url");
                    }
                }
                if path.get_ref() == ":memory:" {
                    Some(StoreLocation::Memory)
                } else {
                    self.check(path, "store.path", values::absolute_or_relative_path)
                        .map(StoreLocation::Directory)
                }
            }
            (None, Some(url)) => self.database(raw, url).map(StoreLocation::Database),
        }
    }

    fn database(&mut self, raw: &raw::RawStore, url: &Spanned<String>) -> Option<DatabaseSettings> {
        let host = self.check(url, "store.url", database_host);
        let password = match &raw.password {
            None => Some(None),
            Some(value) => self.check(value, "store.password", SecretRef::parse).map(Some),
        };
        let tls = match (raw.tls.as_ref().map(|tls| tls.get_ref().as_str()), &raw.ca_file) {
            (None | Some("verify-full"), ca_file) => {
                let ca_file = match ca_file {
                    None => Some(None),
                    Some(file) => {
                        self.check(file, "store.ca_file", values::absolute_or_relative_path).map(Some)
                    }
                };
                ca_file.map(|ca_file| DatabaseTls::VerifyFull { ca_file })
            }
            (Some("disable"), Some(file)) => {
                self.problem(file, "store.ca_file", "applies only with tls = \"verify-full\"");
                None
            }
            (Some("disable"), None) => match &host {
                Some(host) if !values::is_loopback_host(host) => {
                    let tls = raw.tls.as_ref().unwrap_or(url);
                    self.problem(tls, "store.tls", "\"disable\" is allowed only for a database on loopback");
                    None
                }
                _ => Some(DatabaseTls::Disable),
            },
            (Some(_), _) => {
                let tls = raw.tls.as_ref().unwrap_or(url);
                self.problem(tls, "store.tls", "must be \"verify-full\" or \"disable\"");
                None
            }
        };
        let pool_size = match &raw.pool_size {
            None => Some(DEFAULT_POOL_SIZE),
            Some(value) if (1..=MAX_POOL_SIZE).contains(value.get_ref()) => {
                usize::try_from(*value.get_ref()).ok()
            }
            Some(value) => {
                self.problem(value, "store.pool_size", &format!("must be between 1 and {MAX_POOL_SIZE}"));
                None
            }
        };
        if let Some(cache) = &raw.cache_bytes {
            self.problem(cache, "store.cache_bytes", "applies only to the embedded store (store.path)");
        }
        host?;
        Some(DatabaseSettings {
            url: url.get_ref().clone(),
            password: password?,
            tls: tls?,
            pool_size: pool_size?,
        })
    }
}

/// The host of a `postgres://` URL without a password.
fn database_host(text: &str) -> Result<String, String> {
    if !(text.starts_with("postgres://") || text.starts_with("postgresql://")) {
        return Err("must be a postgres:// URL".to_owned());
    }
    let config: tokio_postgres::Config =
        text.parse().map_err(|_| "is not a valid PostgreSQL URL".to_owned())?;
    if config.get_password().is_some() {
        // The text is not echoed: it holds a password.
        return Err("must not carry a password: use store.password = \"env:…\" or \"file:…\"".to_owned());
    }
    match config.get_hosts() {
        [tokio_postgres::config::Host::Tcp(host)] => Ok(host.clone()),
        [] => Err("must name a host".to_owned()),
        [_] => Err("must name a TCP host (Unix sockets are not supported)".to_owned()),
        _ => Err("must name one host".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    const SSO: &str =
        "[sso]\nissuer = \"https://idp.example\"\nclient_id = \"t\"\nclient_secret = \"env:S\"\n";
    const KEYS: &str = "session_keys = [\"env:K\"]\nassertion_keys = [\"file:/keys/a.pem\"]\n";

    fn config(store: &str, sso: &str) -> Result<Config, String> {
        let text = format!(
            "public_url = \"https://gateway.example\"\n[server]\nlisten = \"127.0.0.1:8080\"\n\
             admin_listen = \"127.0.0.1:9090\"\n[store]\n{store}\n{sso}\n\
             [sites.tasks]\nhost = \"tasks.example\"\nupstream = \"http://127.0.0.1:3000\"\n"
        );
        Config::parse(&text, "t.toml").map_err(|error| error.to_string())
    }

    #[test]
    fn a_database_store_is_verify_full_with_a_pool_of_sixteen_by_default() {
        let parsed = config(
            "url = \"postgres://toolgate@db.corp/toolgate\"\npassword = \"env:DB\"",
            &format!("{SSO}{KEYS}"),
        )
        .expect("valid");
        let StoreLocation::Database(database) = &parsed.store else { panic!("{:?}", parsed.store) };
        assert_eq!(database.tls, DatabaseTls::VerifyFull { ca_file: None });
        assert_eq!((database.pool_size, database.password.is_some()), (16, true));
        assert!(parsed.store.is_shared());
    }

    #[test]
    fn bad_store_settings_are_refused_with_their_key() {
        let shared = format!("{SSO}{KEYS}");
        for (store, sso, expected) in [
            ("url = \"postgres://a@db.corp/t\"\npath = \"data\"", shared.as_str(), "not both"),
            (
                "url = \"postgres://a@db.corp/t\"\ntls = \"disable\"",
                shared.as_str(),
                "only for a database on loopback",
            ),
            (
                "url = \"postgres://a@db.corp/t\"\ntls = \"prefer\"",
                shared.as_str(),
                "\"verify-full\" or \"disable\"",
            ),
            ("url = \"postgres://a:hunter2@db.corp/t\"", shared.as_str(), "must not carry a password"),
            ("url = \"postgres://a@db.corp/t\"\npool_size = 0", shared.as_str(), "store.pool_size"),
            ("url = \"postgres://a@db.corp/t\"\ncache_bytes = 2097152", shared.as_str(), "store.cache_bytes"),
            ("path = \"data\"\npassword = \"env:DB\"", shared.as_str(), "applies only with store.url"),
            ("url = \"postgres://a@db.corp/t\"", SSO, "sso.session_keys"),
            ("url = \"postgres://a@db.corp/t\"", SSO, "sso.assertion_keys"),
        ] {
            let refused = config(store, sso).expect_err(store);
            assert!(refused.contains(expected), "{store}: {refused}");
            assert!(!refused.contains("hunter2"), "{refused}");
        }
        let local =
            config("url = \"postgres://a@127.0.0.1:5432/t\"\ntls = \"disable\"", &shared).expect("loopback");
        assert!(matches!(
            local.store,
            StoreLocation::Database(DatabaseSettings { tls: DatabaseTls::Disable, .. })
        ));
    }

    #[test]
    fn a_url_names_one_tcp_host_and_never_a_password() {
        assert_eq!(database_host("postgres://toolgate@db.corp:5432/toolgate"), Ok("db.corp".to_owned()));
        let refused = database_host("postgres://toolgate:hunter2@db.corp/toolgate").expect_err("password");
        assert!(!refused.contains("hunter2"), "{refused}");
        assert!(database_host("mysql://db.corp/toolgate").is_err());
        assert!(database_host("postgres://a,b/toolgate").is_err());
    }

    #[test]
    fn only_this_machine_counts_as_loopback() {
        let is_loopback = values::is_loopback_host;
        assert!(is_loopback("127.0.0.1") && is_loopback("localhost") && is_loopback("::1"));
        assert!(!is_loopback("db.corp") && !is_loopback("10.0.0.5"));
    }
}
