//! OpenID Connect Back-Channel Logout 1.0: when a user signs out at the provider (or an
//! administrator ends their provider session), the provider POSTs a logout token to
//! `{public_url}/.toolgate/backchannel-logout`, and the gateway ends every session it names.
//!
//! The logout token is verified like a bearer token (pinned algorithms, the provider's keys,
//! `iss`, `aud` = the client id, `exp`), then as the specification's section 2.6 asks: an
//! `events` member with the back-channel logout event, `iat` and `jti`, `sid` or `sub`, and no
//! `nonce` (so an ID token can never pass for one). A token is used once.

use super::session::{self, SessionRecord};
use super::{Sso, bearer};
use crate::audit::event::{AuditEvent, EventKind};

use crate::http::body::ProxyBody;
use crate::support::clock::unix_now;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// The path on the gateway's own host; register `{public_url}` followed by it at the provider.
pub const PATH: &str = "/.toolgate/backchannel-logout";
/// The event a logout token must carry.
pub const LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";
/// Largest request body: one form field holding a token of a few kilobytes.
const MAX_BODY: usize = 32 * 1024;
/// Logout tokens remembered (by `jti`) until they expire; emptied past this many.
const MAX_REMEMBERED: usize = 10_000;

/// Whom a verified logout token signs out.
#[derive(Debug, PartialEq, Eq)]
pub struct LogoutTarget {
    /// The provider's user (`sub`), when the token names one.
    pub subject: Option<String>,
    /// The provider's session (`sid`), when the token names one.
    pub session: Option<String>,
}

impl LogoutTarget {
    /// Whether a gateway session belongs to what the token signs out.
    pub fn matches(&self, record: &SessionRecord) -> bool {
        let subject_ok = self.subject.as_ref().is_none_or(|sub| record.subject.as_ref() == Some(sub));
        let session_ok =
            self.session.as_ref().is_none_or(|sid| record.provider_session.as_ref() == Some(sid));
        subject_ok && session_ok
    }
}

/// Logout tokens already used, by `jti`, until their `exp`.
#[derive(Default)]
pub struct UsedTokens {
    entries: Mutex<HashMap<String, u64>>,
}

impl UsedTokens {
    /// Records `jti`; `false` when it was used before and has not expired.
    fn first_use(&self, jti: &str, expires: u64, now: u64) -> bool {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|_, until| *until > now);
        if entries.len() >= MAX_REMEMBERED {
            entries.clear();
        }
        entries.insert(jti.to_owned(), expires).is_none_or(|until| until <= now)
    }
}

/// The checks of section 2.6 after the signature, `iss`, `aud` and `exp` verified.
pub fn check_claims(claims: &Map<String, Value>) -> Result<LogoutTarget, &'static str> {
    let event = claims.get("events").and_then(Value::as_object).and_then(|events| events.get(LOGOUT_EVENT));
    if !event.is_some_and(Value::is_object) {
        return Err("the token has no back-channel logout event");
    }
    if claims.contains_key("nonce") {
        return Err("a logout token must not carry a nonce");
    }
    if !claims.get("iat").is_some_and(Value::is_number) {
        return Err("the token has no iat");
    }
    if claims.get("jti").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err("the token has no jti");
    }
    let text = |name: &str| claims.get(name).and_then(Value::as_str).filter(|value| !value.is_empty());
    let target =
        LogoutTarget { subject: text("sub").map(str::to_owned), session: text("sid").map(str::to_owned) };
    if target.subject.is_none() && target.session.is_none() {
        return Err("the token names neither sid nor sub");
    }
    Ok(target)
}

/// Answers the provider's POST: 200 when the named sessions are gone, 400 (with an OAuth-style
/// error) when the token does not verify, 503 when the provider's keys cannot be fetched.
pub async fn handle(sso: &Sso, request: Request<Incoming>) -> Response<ProxyBody> {
    if request.method() != Method::POST {
        return refused(StatusCode::METHOD_NOT_ALLOWED, "use POST");
    }
    let Ok(body) = Limited::new(request.into_body(), MAX_BODY).collect().await else {
        return refused(StatusCode::BAD_REQUEST, "the body is not a form of at most 32 KiB");
    };
    let body = body.to_bytes();
    let mut tokens = url::form_urlencoded::parse(&body).filter(|(name, _)| name == "logout_token");
    let (Some((_, token)), None) = (tokens.next(), tokens.next()) else {
        return refused(StatusCode::BAD_REQUEST, "exactly one logout_token is required");
    };
    let claims = match bearer::verify(&sso.oidc, std::slice::from_ref(&sso.config.client_id), &token).await {
        Ok(claims) => claims,
        Err(bearer::BearerError::Unavailable) => {
            return refused(StatusCode::SERVICE_UNAVAILABLE, "the provider's keys cannot be fetched");
        }
        Err(error) => {
            tracing::info!(reason = %error, "back-channel logout token refused");
            sso.record("backchannel_refused");
            return refused(StatusCode::BAD_REQUEST, "the logout token does not verify");
        }
    };
    let target = match check_claims(&claims) {
        Ok(target) => target,
        Err(reason) => {
            tracing::info!(reason, "back-channel logout token refused");
            sso.record("backchannel_refused");
            return refused(StatusCode::BAD_REQUEST, reason);
        }
    };
    let now = unix_now();
    let jti = claims.get("jti").and_then(Value::as_str).unwrap_or_default();
    let expires = claims.get("exp").and_then(Value::as_u64).unwrap_or(now);
    if !sso.used_logout_tokens.first_use(jti, expires, now) {
        sso.record("backchannel_refused");
        return refused(StatusCode::BAD_REQUEST, "the logout token was used before");
    }
    match end_sessions(sso, target, now).await {
        Ok(ended) => {
            sso.record("backchannel_logout");
            tracing::info!(outcome = "backchannel_logout", sessions = ended, "provider signed the user out");
            let mut response = crate::http::text(StatusCode::OK, "");
            response
                .headers_mut()
                .insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
            response
        }
        Err(()) => refused(StatusCode::SERVICE_UNAVAILABLE, "the session store is unavailable"),
    }
}

/// Ends every live session the target names, each audited as a sign-out first; how many.
async fn end_sessions(sso: &Sso, target: LogoutTarget, now: u64) -> Result<usize, ()> {
    let found = session::find_sessions(&sso.store, now, &|record| target.matches(record)).await;
    let sessions = match found {
        Ok(sessions) => sessions,
        Err(error) => {
            tracing::error!(error = %error, "session store unavailable during a back-channel logout");
            return Err(());
        }
    };
    for (id, record) in &sessions {
        let identity = &record.identity;
        let mut event = AuditEvent::new(EventKind::Logout)
            .actor(&identity.user, identity.email.as_deref(), &identity.groups)
            .decision("success", "backchannel_logout");
        event.session = Some(sso.session_digest(id));
        // Ending the session matters more than its record: a failed audit write is logged and
        // the session still ends.
        sso.audit.record_or_log(event).await;
        if let Err(error) = sso.revoke(id).await {
            tracing::error!(error = %error, "could not end a session named by a back-channel logout");
            return Err(());
        }
    }
    Ok(sessions.len())
}

fn refused(status: StatusCode, description: &str) -> Response<ProxyBody> {
    crate::http::json(status, &json!({ "error": "invalid_request", "error_description": description }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    fn good() -> Value {
        json!({ "iat": 1, "jti": "j1", "sid": "s1", "sub": "alice", "events": { LOGOUT_EVENT: {} } })
    }

    #[test]
    fn a_logout_token_needs_the_event_iat_jti_and_a_subject_or_session() {
        assert_eq!(
            check_claims(&claims(good())),
            Ok(LogoutTarget { subject: Some("alice".into()), session: Some("s1".into()) })
        );
        let broken: [(&str, Value); 7] = [
            ("events", Value::Null),
            ("events", json!({ LOGOUT_EVENT: "yes" })),
            ("events", json!({ "http://schemas.openid.net/event/other": {} })),
            ("iat", Value::Null),
            ("jti", json!("")),
            ("nonce", json!("n")),
            ("sid", Value::Null),
        ];
        for (name, value) in broken {
            let mut token = good();
            if value.is_null() {
                token.as_object_mut().expect("object").remove(name);
            } else {
                token[name] = value;
            }
            if name == "sid" {
                token.as_object_mut().expect("object").remove("sub");
            }
            assert!(check_claims(&claims(token.clone())).is_err(), "{token}");
        }
    }

    #[test]
    fn a_target_matches_sessions_by_sid_and_sub() {
        let record = |sub: &str, sid: &str| SessionRecord {
            identity: crate::sso::identity::Identity {
                user: sub.into(),
                email: None,
                groups: vec![],
                name: None,
            },
            created_at: 0,
            expires_at: 10,
            refresh_token: None,
            refresh_after: None,
            subject: Some(sub.into()),
            provider_session: Some(sid.into()),
            id_token: None,
        };
        let by_sid = LogoutTarget { subject: None, session: Some("s1".into()) };
        assert!(by_sid.matches(&record("alice", "s1")) && !by_sid.matches(&record("alice", "s2")));
        let by_sub = LogoutTarget { subject: Some("alice".into()), session: None };
        assert!(by_sub.matches(&record("alice", "s1")) && !by_sub.matches(&record("bob", "s1")));
        let both = LogoutTarget { subject: Some("alice".into()), session: Some("s1".into()) };
        assert!(both.matches(&record("alice", "s1")) && !both.matches(&record("bob", "s1")));
    }

    #[test]
    fn a_logout_token_is_used_once_until_it_expires() {
        let used = UsedTokens::default();
        assert!(used.first_use("j1", 100, 50));
        assert!(!used.first_use("j1", 100, 60), "a replay is refused");
        assert!(used.first_use("j2", 100, 60));
    }
}
