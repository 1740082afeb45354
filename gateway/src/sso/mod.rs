//! Corporate single sign-on: OpenID Connect login for browsers, bearer JWTs for API clients,
//! server-side sessions behind sealed cookies, and the identity handed to sites.
//!
//! The login dance (all redirects, no JavaScript):
//! 1. A site host sees no session: it sets a pending cookie (a random binding value) and
//!    redirects to `{public_url}/.toolgate/login?return=<site URL>&bind=<value>`.
//! 2. The gateway host reuses its own session if it has one, else stores a pending login
//!    (PKCE verifier, nonce, return target) under the OIDC `state`, sets a login cookie and
//!    redirects to the provider.
//! 3. `/.toolgate/callback` checks state against the login cookie, exchanges the code, verifies
//!    the ID token, creates the session and issues a one-time handoff ticket for the site.
//! 4. The site host's `/.toolgate/session` takes the ticket (single use, bound to that origin
//!    and to the pending cookie), sets its own session cookie and returns to the path.
//!
//! Layer 3 of the gateway (ARCHITECTURE.md, "Code map"): may import `audit`, `config`, `http`,
//! `metrics`, `net`, `store`, `support`.

pub mod assertion;
pub mod audit_api;
pub mod backchannel;
pub mod bearer;
pub mod cookies;
pub mod http;
pub mod identity;
pub mod keys;
pub mod login;
pub mod oidc;
pub mod return_url;
pub mod session;
pub mod session_cache;

use crate::config::{Config, SsoConfig};
use crate::store::{StoreError, StoreHandle, Table};
use crate::support::clock::unix_now;
use crate::support::keyed_lock::KeyedLocks;
use ::http::HeaderMap;
use assertion::{AssertionKeyError, AssertionSigner};
use cookies::CookieKind;
use identity::Identity;
use keys::{KeyError, KeyRing};
use oidc::{Oidc, OidcError};
use session::{SessionId, SessionRecord};
use std::sync::Arc;

/// Why single sign-on could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SsoStartError {
    /// The client secret could not be read.
    #[error("sso.client_secret: {0}")]
    Secret(#[from] crate::config::secrets::SecretError),
    /// The session keys are unusable.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// The assertion keys are unusable.
    #[error(transparent)]
    Assertion(#[from] AssertionKeyError),
    /// Another configuration problem.
    #[error("{0}")]
    Config(String),
}

/// A request's session.
pub struct Session {
    /// Its id.
    pub id: SessionId,
    /// Its record.
    pub record: SessionRecord,
}

/// Why a request has no usable session.
#[derive(Debug)]
pub enum SessionFailure {
    /// No cookie, or one that does not lead to a live session: sign in.
    Missing,
    /// The store or the provider is unavailable: refuse (503), never let the request through.
    Unavailable,
}

/// Everything single sign-on needs at run time.
pub struct Sso {
    /// The `[sso]` settings.
    pub config: SsoConfig,
    /// The relying party.
    pub oidc: Oidc,
    /// Session cookie keys.
    pub keys: Arc<KeyRing>,
    /// Upstream assertion signer.
    pub assertion: AssertionSigner,
    /// Where sessions live.
    pub store: StoreHandle,
    /// Hosts of configured sites and the dashboard (for return URL checks); replaced when the
    /// configuration reloads.
    site_hosts: std::sync::RwLock<Vec<String>>,
    /// `scheme://host[:port]` of the gateway itself.
    pub public_origin: String,
    /// Counts sign-in events.
    pub metrics: crate::metrics::Metrics,
    /// Records sign-ins, failures and sign-outs.
    pub audit: Arc<crate::audit::AuditLog>,
    /// Bearer tokens already verified (API clients reuse a token for its whole lifetime).
    verified_tokens: bearer::VerifiedTokens,
    /// One refresh per session at a time; different sessions never wait on each other.
    refresh_locks: KeyedLocks<SessionId>,
    /// Back-channel logout tokens already used.
    used_logout_tokens: backchannel::UsedTokens,
    /// Session records read in the last second (`session_cache`).
    sessions: session_cache::SessionCache,
}

impl Sso {
    /// Reads secrets and keys and prepares the relying party.
    pub fn new(
        config: &Config,
        sso: &SsoConfig,
        store: StoreHandle,
        audit: Arc<crate::audit::AuditLog>,
        metrics: crate::metrics::Metrics,
    ) -> Result<Self, SsoStartError> {
        let public_origin = origin_of(&config.public_url);
        let oidc = Oidc::new(sso, sso.client_secret.read()?, &format!("{public_origin}/.toolgate/callback"))
            .map_err(SsoStartError::Config)?;
        Ok(Self {
            config: sso.clone(),
            oidc,
            keys: Arc::new(KeyRing::from_secrets(&sso.session_keys)?),
            assertion: AssertionSigner::new(&sso.assertion_keys, public_origin.clone())?,
            store,
            site_hosts: std::sync::RwLock::new(return_hosts(config)),
            public_origin,
            metrics,
            audit,
            verified_tokens: bearer::VerifiedTokens::default(),
            refresh_locks: KeyedLocks::default(),
            used_logout_tokens: backchannel::UsedTokens::default(),
            sessions: session_cache::SessionCache::default(),
        })
    }

    /// Hosts a sign-in may return to.
    pub fn site_hosts(&self) -> Vec<String> {
        self.site_hosts.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Replaces the hosts a sign-in may return to (after a configuration reload).
    pub fn set_site_hosts(&self, hosts: Vec<String>) {
        *self.site_hosts.write().unwrap_or_else(std::sync::PoisonError::into_inner) = hosts;
    }

    /// The session a request's cookie points to, refreshed with the provider when due; `secure`
    /// says whether the browser used HTTPS (which cookie name counts).
    pub async fn session(&self, headers: &HeaderMap, secure: bool) -> Result<Session, SessionFailure> {
        let sealed = cookies::read(headers, CookieKind::Session, secure).ok_or(SessionFailure::Missing)?;
        let id: SessionId = self
            .keys
            .open(CookieKind::Session.purpose(), &sealed)
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or(SessionFailure::Missing)?;
        let now = unix_now();
        let read_at = std::time::Instant::now();
        let record = match self.sessions.get(&id, read_at) {
            Some(record) if record.expires_at > now => record,
            Some(_) => return Err(SessionFailure::Missing),
            None => {
                let epoch = self.sessions.epoch();
                // Boxed, like the refresh below: both are rare, and inline they would grow the
                // future of every signed-in request.
                let record: SessionRecord = Box::pin(session::get(&self.store, Table::Sessions, &id, now))
                    .await
                    .map_err(store_unavailable)?
                    .ok_or(SessionFailure::Missing)?;
                self.sessions.keep(id, record.clone(), epoch, read_at);
                record
            }
        };
        if record.refresh_after.is_some_and(|due| due <= now) {
            return Box::pin(self.refresh(id, now)).await;
        }
        Ok(Session { id, record })
    }

    /// Verifies a bearer token and returns who it is for. A token verified in the last minute
    /// (and not expired since) is not verified again.
    pub async fn bearer_identity(&self, token: &str) -> Result<Identity, bearer::BearerError> {
        let now = unix_now();
        if let Some(identity) = self.verified_tokens.get(token, now) {
            return Ok(identity);
        }
        let claims = bearer::verify(&self.oidc, &self.config.audiences, token).await?;
        let identity = Identity::from_claims(&claims, &self.config.claims)
            .map_err(|error| bearer::BearerError::Invalid(error.to_string()))?;
        let expires = claims.get("exp").and_then(serde_json::Value::as_u64).unwrap_or(now);
        self.verified_tokens.insert(token, identity.clone(), expires, now);
        Ok(identity)
    }

    /// Creates a session for a verified sign-in.
    pub async fn create_session(
        &self,
        identity: Identity,
        tokens: &oidc::Tokens,
    ) -> Result<SessionId, StoreError> {
        let now = unix_now();
        let id = crate::support::random::random_bytes::<32>();
        let claim = |name: &str| {
            let claims = tokens.claims.as_ref()?;
            claims.get(name).and_then(serde_json::Value::as_str).map(str::to_owned)
        };
        let record = SessionRecord {
            identity,
            created_at: now,
            expires_at: now + self.config.session_lifetime.as_secs(),
            refresh_after: tokens.refresh_token.as_ref().map(|_| refresh_due(tokens.expires_at, now)),
            refresh_token: tokens
                .refresh_token
                .as_deref()
                .map(|token| self.seal(REFRESH_TOKEN_PURPOSE, token)),
            subject: claim("sub"),
            provider_session: claim("sid"),
            id_token: tokens.id_token.as_deref().map(|token| self.seal(ID_TOKEN_PURPOSE, token)),
        };
        session::put(&self.store, Table::Sessions, &id, &record).await?;
        Ok(id)
    }

    /// Ends a session everywhere (every cookie pointing to it stops working).
    pub async fn revoke(&self, id: &SessionId) -> Result<(), StoreError> {
        self.sessions.forget(id);
        let deleted = self.store.delete(Table::Sessions, id).await;
        self.sessions.forget(id);
        deleted
    }

    /// Removes expired records; run periodically.
    pub async fn sweep(&self) -> Result<usize, StoreError> {
        let now = unix_now();
        let store = &self.store;
        Ok(session::sweep::<SessionRecord>(store, Table::Sessions, now).await?
            + session::sweep::<session::PendingLogin>(store, Table::PendingLogins, now).await?
            + session::sweep::<session::Handoff>(store, Table::Handoffs, now).await?)
    }

    /// Provider tokens are sealed at rest: a copy of the store yields none of them.
    fn seal(&self, purpose: &str, token: &str) -> String {
        self.keys.seal(purpose, token.as_bytes())
    }

    fn open(&self, purpose: &str, sealed: &str) -> Option<String> {
        String::from_utf8(self.keys.open(purpose, sealed)?).ok()
    }

    /// Where to send the browser after a sign-out so the provider's session ends too
    /// (RP-initiated logout): its `end_session_endpoint` with `id_token_hint`, `client_id` and
    /// `post_logout_redirect_uri`. `None` when `sso.provider_logout` is off or the provider
    /// publishes no such endpoint.
    pub async fn provider_logout_url(&self, record: &SessionRecord) -> Option<String> {
        if !self.config.provider_logout {
            return None;
        }
        let endpoint = self.oidc.end_session_endpoint().await?;
        let mut url =
            url::Url::parse(&endpoint).ok().filter(|url| matches!(url.scheme(), "https" | "http"))?;
        {
            let mut query = url.query_pairs_mut();
            if let Some(id_token) =
                record.id_token.as_deref().and_then(|sealed| self.open(ID_TOKEN_PURPOSE, sealed))
            {
                query.append_pair("id_token_hint", &id_token);
            }
            query.append_pair("client_id", &self.config.client_id);
            query.append_pair("post_logout_redirect_uri", &self.signed_out_url());
        }
        Some(url.into())
    }

    /// The page the provider returns to after signing the user out
    /// (`{public_url}/.toolgate/signed-out`); register it with the provider.
    pub fn signed_out_url(&self) -> String {
        format!("{}{}", self.public_origin, login::SIGNED_OUT_PATH)
    }

    /// A keyed digest of a session id for audit records (the id itself is a credential).
    pub fn session_digest(&self, id: &SessionId) -> String {
        self.audit.digest("session", id)
    }

    /// The origin browsers use for a site host: every host is served by the gateway's one
    /// listener, so it has `public_url`'s scheme and port. Never taken from a request.
    pub fn site_origin(&self, host: &str) -> String {
        let (scheme, rest) = self.public_origin.split_once("://").unwrap_or(("https", ""));
        let port = rest
            .rsplit_once(':')
            .map(|(_, port)| port)
            .filter(|port| port.bytes().all(|b| b.is_ascii_digit()));
        match port {
            Some(port) => format!("{scheme}://{host}:{port}"),
            None => format!("{scheme}://{host}"),
        }
    }

    /// Counts a sign-in event (`outcome` is one of a fixed set).
    pub fn record(&self, outcome: &'static str) {
        self.metrics.sign_ins.with_label_values(&[outcome]).inc();
    }

    /// Refreshes a session's tokens. One refresh per session at a time: a page's parallel
    /// requests wait for the first, then see its result. The record is written back only if
    /// nobody changed or removed it meanwhile (a logout while the provider answered stays a
    /// logout).
    async fn refresh(&self, id: SessionId, now: u64) -> Result<Session, SessionFailure> {
        let _turn = self.refresh_locks.lock(id).await;
        // Whatever happens next changes the record (or ends it): no kept copy may answer for it.
        self.sessions.forget(&id);
        let (mut record, stored): (SessionRecord, Vec<u8>) =
            session::get_with_bytes(&self.store, Table::Sessions, &id, now)
                .await
                .map_err(store_unavailable)?
                .ok_or(SessionFailure::Missing)?;
        if record.refresh_after.is_none_or(|due| due > now) {
            // Another request refreshed while this one waited.
            return Ok(Session { id, record });
        }
        let Some(refresh_token) =
            record.refresh_token.as_deref().and_then(|sealed| self.open(REFRESH_TOKEN_PURPOSE, sealed))
        else {
            self.end_session_if_unchanged(&id, &stored).await;
            return Err(SessionFailure::Missing);
        };
        match self.oidc.refresh(&refresh_token).await {
            Ok(tokens) => {
                if let Some(claims) = &tokens.claims {
                    match Identity::from_claims(claims, &self.config.claims) {
                        // The provider may not switch the session to another user.
                        Ok(identity) if identity.user == record.identity.user => record.identity = identity,
                        _ => {
                            self.end_session_if_unchanged(&id, &stored).await;
                            return Err(SessionFailure::Missing);
                        }
                    }
                }
                record.refresh_token =
                    tokens.refresh_token.as_deref().map(|token| self.seal(REFRESH_TOKEN_PURPOSE, token));
                if let Some(id_token) = &tokens.id_token {
                    record.id_token = Some(self.seal(ID_TOKEN_PURPOSE, id_token));
                }
                record.refresh_after = Some(refresh_due(tokens.expires_at, now));
                let replaced = session::replace(&self.store, Table::Sessions, &id, &stored, &record)
                    .await
                    .map_err(store_unavailable)?;
                self.sessions.forget(&id);
                if !replaced {
                    // Signed out (or revoked) while the provider answered.
                    return Err(SessionFailure::Missing);
                }
                self.record("refreshed");
                tracing::info!(outcome = "refreshed", "session tokens refreshed");
                Ok(Session { id, record })
            }
            Err(error) => {
                // A failed refresh ends the session and sends the user through sign-in again
                // (which itself fails closed while the provider is down).
                let reason = match error {
                    OidcError::Unavailable(_) => "provider_unavailable",
                    OidcError::Misconfigured(_) => "provider_misconfigured",
                    OidcError::Rejected(_) => "rejected",
                };
                self.record("refresh_failed");
                tracing::info!(outcome = "refresh_failed", reason, "session ended: token refresh failed");
                self.end_session_if_unchanged(&id, &stored).await;
                Err(SessionFailure::Missing)
            }
        }
    }

    async fn end_session_if_unchanged(&self, id: &SessionId, stored: &[u8]) {
        let ended = self.store.compare_and_swap(Table::Sessions, id, Some(stored), None).await;
        self.sessions.forget(id);
        if let Err(error) = ended {
            tracing::error!(error = %error, "could not end a session after a failed refresh");
        }
    }
}

/// The purpose refresh tokens are sealed for in the store.
const REFRESH_TOKEN_PURPOSE: &str = "toolgate refresh token";
/// The purpose ID tokens are sealed for in the store.
const ID_TOKEN_PURPOSE: &str = "toolgate id token";

/// When to refresh: a minute before expiry, or half-way through a token shorter than two
/// minutes, and never in the past.
fn refresh_due(expires_at: u64, now: u64) -> u64 {
    let lifetime = expires_at.saturating_sub(now);
    expires_at.saturating_sub(60.min(lifetime / 2)).max(now + 1)
}

fn store_unavailable(error: StoreError) -> SessionFailure {
    tracing::error!(error = %error, "session store unavailable");
    SessionFailure::Unavailable
}

/// The hosts a sign-in may return to: every site's, and the dashboard's (it signs in like a site
/// host does, with a handoff ticket to its own cookie).
pub fn return_hosts(config: &Config) -> Vec<String> {
    let sites = config.sites.iter().map(|site| site.host.clone());
    sites.chain(config.dashboard.iter().map(|dashboard| dashboard.host.clone())).collect()
}

/// `scheme://host[:port]` of a URI.
pub fn origin_of(uri: &::http::Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("https");
    let authority = uri.authority().map_or("", |authority| authority.as_str());
    crate::http::client::origin(scheme, authority)
}
