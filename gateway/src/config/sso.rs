//! The typed `[sso]` section: the identity provider, the client, pinned algorithms, claim
//! names, session lifetime and the key rings for session cookies and upstream assertions.

use super::{raw, values};
use crate::config::secrets::SecretRef;
use jsonwebtoken::Algorithm;
use std::time::Duration;
use toml::Spanned;

/// Single sign-on settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SsoConfig {
    /// The issuer URL; discovery is fetched from `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    /// The gateway's client id at the provider.
    pub client_id: String,
    /// The client secret, read from the environment or a file at start-up.
    pub client_secret: SecretRef,
    /// Scopes requested at login (always including `openid`).
    pub scopes: Vec<String>,
    /// The only signature algorithms accepted on ID tokens and bearer tokens.
    pub algorithms: Vec<Algorithm>,
    /// Audiences accepted on bearer tokens (default: the client id).
    pub audiences: Vec<String>,
    /// Claim names for the user id, email and groups.
    pub claims: ClaimNames,
    /// The longest a session lives, whatever the tokens say.
    pub session_lifetime: Duration,
    /// A token naming an unknown key refetches the provider's keys at most this often.
    pub key_refetch_interval: Duration,
    /// Session cookie keys, current first; older keys still open cookies (rotation overlap).
    /// Empty: a random key per process (sessions do not survive a restart).
    pub session_keys: Vec<SecretRef>,
    /// Upstream assertion signing keys (PKCS#8 PEM, P-256), current first; all are published.
    /// Empty: a random key per process.
    pub assertion_keys: Vec<SecretRef>,
    /// Signing out also ends the provider's session (RP-initiated logout at its
    /// `end_session_endpoint`, when it publishes one). Default on.
    pub provider_logout: bool,
}

/// Which claims carry the identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimNames {
    /// The stable user id (default `sub`).
    pub user: String,
    /// The email address (default `email`).
    pub email: String,
    /// The list of groups (default `groups`).
    pub groups: String,
    /// The display name (default `name`).
    pub name: String,
}

impl Default for ClaimNames {
    fn default() -> Self {
        Self { user: "sub".into(), email: "email".into(), groups: "groups".into(), name: "name".into() }
    }
}

impl super::Checker<'_> {
    pub(super) fn sso(&mut self, raw: &raw::RawSso) -> Option<SsoConfig> {
        let issuer = self.check(&raw.issuer, "sso.issuer", issuer);
        let client_id = self.check(&raw.client_id, "sso.client_id", |text| {
            if text.is_empty() { Err("must not be empty".to_owned()) } else { Ok(text.to_owned()) }
        });
        let client_secret = self.check(&raw.client_secret, "sso.client_secret", SecretRef::parse);
        let list = |values: &Option<Vec<Spanned<String>>>| {
            values
                .as_ref()
                .map(|values| values.iter().map(|value| value.get_ref().clone()).collect::<Vec<_>>())
        };
        let mut scopes =
            list(&raw.scopes).unwrap_or_else(|| vec!["openid".into(), "email".into(), "profile".into()]);
        if !scopes.iter().any(|scope| scope == "openid") {
            scopes.insert(0, "openid".into());
        }
        let algorithms = match &raw.algorithms {
            None => vec![jsonwebtoken::Algorithm::RS256, jsonwebtoken::Algorithm::ES256],
            Some(values) => values
                .iter()
                .enumerate()
                .filter_map(|(index, value)| {
                    self.check(value, &format!("sso.algorithms[{index}]"), algorithm)
                })
                .collect(),
        };
        if algorithms.is_empty() {
            self.problem(&raw.issuer, "sso.algorithms", "at least one algorithm must be accepted");
        }
        let mut claims = ClaimNames::default();
        for (value, key, target) in [
            (&raw.claims.user, "user", &mut claims.user),
            (&raw.claims.email, "email", &mut claims.email),
            (&raw.claims.groups, "groups", &mut claims.groups),
            (&raw.claims.name, "name", &mut claims.name),
        ] {
            if let Some(value) = value
                && let Some(name) = self.check(value, &format!("sso.claims.{key}"), claim_name)
            {
                *target = name;
            }
        }
        let session_lifetime = match &raw.session_lifetime {
            None => Some(Duration::from_secs(12 * 3600)),
            Some(value) => self.check(value, "sso.session_lifetime", lifetime),
        };
        let key_refetch_interval = match &raw.key_refetch_interval {
            None => Some(Duration::from_secs(30)),
            Some(value) => self.check(value, "sso.key_refetch_interval", lifetime),
        };
        let mut keys = |values: &Vec<Spanned<String>>, key: &str| -> Vec<SecretRef> {
            values
                .iter()
                .enumerate()
                .filter_map(|(index, value)| {
                    self.check(value, &format!("sso.{key}[{index}]"), SecretRef::parse)
                })
                .collect()
        };
        let session_keys = keys(&raw.session_keys, "session_keys");
        let assertion_keys = keys(&raw.assertion_keys, "assertion_keys");
        let client_id = client_id?;
        Some(SsoConfig {
            issuer: issuer?,
            audiences: list(&raw.audiences).unwrap_or_else(|| vec![client_id.clone()]),
            client_id,
            client_secret: client_secret?,
            scopes,
            algorithms,
            claims,
            session_lifetime: session_lifetime?,
            key_refetch_interval: key_refetch_interval?,
            session_keys,
            assertion_keys,
            provider_logout: raw.provider_logout.unwrap_or(true),
        })
    }
}

pub(super) fn algorithm(text: &str) -> Result<Algorithm, String> {
    // Only asymmetric algorithms: a shared secret would let anyone holding it mint tokens, and
    // accepting HS* next to RS* is the classic key-confusion hole.
    match text {
        "RS256" => Ok(Algorithm::RS256),
        "RS384" => Ok(Algorithm::RS384),
        "RS512" => Ok(Algorithm::RS512),
        "PS256" => Ok(Algorithm::PS256),
        "PS384" => Ok(Algorithm::PS384),
        "PS512" => Ok(Algorithm::PS512),
        "ES256" => Ok(Algorithm::ES256),
        "ES384" => Ok(Algorithm::ES384),
        "EdDSA" => Ok(Algorithm::EdDSA),
        other => Err(format!(
            "`{other}` is not an accepted signature algorithm (RS256/384/512, PS256/384/512, ES256/384, EdDSA)"
        )),
    }
}

pub(super) fn issuer(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|_| format!("`{text}` is not a URL"))?;
    let loopback = url.host_str().is_some_and(super::values::is_loopback_host);
    match url.scheme() {
        "https" => {}
        // Plain HTTP only for a provider on this machine (development and tests).
        "http" if loopback => {}
        _ => return Err("must be an https:// URL (http:// only on loopback)".into()),
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not have a query or fragment".into());
    }
    // Exactly as configured: discovery compares the provider's `issuer` with it byte for byte,
    // and some providers (Auth0, Authentik) publish theirs with a trailing `/`.
    Ok(text.to_owned())
}

pub(super) fn claim_name(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > 128 || text.chars().any(char::is_control) {
        return Err("must be a claim name".into());
    }
    Ok(text.to_owned())
}

pub(super) fn lifetime(text: &str) -> Result<Duration, String> {
    values::duration(text)
}
