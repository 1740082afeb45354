//! Bearer tokens for API clients: JWTs from the corporate identity provider, verified with
//! jsonwebtoken against the provider's published keys. Algorithms are pinned by configuration
//! (never taken from the token), embedded keys (`jwk`, `jku`, `x5u`, `x5c`) are refused, and
//! `iss`, `aud`, `exp` and `nbf` are checked with a small leeway. A verified token is
//! remembered (by its hash) for at most a minute and never past its `exp`.

use super::identity::Identity;
use super::oidc::{Oidc, OidcError};
use jsonwebtoken::{DecodingKey, Validation};

/// Largest token accepted; real access tokens are a few kilobytes.
const MAX_TOKEN: usize = 16 * 1024;
/// Clock skew tolerated on `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 30;

/// Why a bearer token was refused. Every variant answers 401, except `Unavailable` (503).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BearerError {
    /// Larger than any real token.
    #[error("token too large")]
    TooLarge,
    /// Not a JWT, or a header jsonwebtoken cannot read (including `alg: none`).
    #[error("malformed token")]
    Malformed,
    /// An algorithm the configuration does not accept.
    #[error("algorithm not accepted")]
    Algorithm,
    /// The token tries to bring its own key.
    #[error("embedded keys are not accepted")]
    EmbeddedKey,
    /// No key id, or one the provider does not publish.
    #[error("unknown signing key")]
    UnknownKey,
    /// Signature, issuer, audience or time checks failed.
    #[error("token rejected: {0}")]
    Invalid(String),
    /// The provider's keys cannot be fetched.
    #[error("identity provider unavailable")]
    Unavailable,
}

/// Verifies `token` and returns its claims.
pub async fn verify(
    oidc: &Oidc,
    audiences: &[String],
    token: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, BearerError> {
    if token.len() > MAX_TOKEN {
        return Err(BearerError::TooLarge);
    }
    let header = jsonwebtoken::decode_header(token).map_err(|_| BearerError::Malformed)?;
    if !oidc.algorithms().contains(&header.alg) {
        return Err(BearerError::Algorithm);
    }
    if header.jwk.is_some() || header.jku.is_some() || header.x5u.is_some() || header.x5c.is_some() {
        return Err(BearerError::EmbeddedKey);
    }
    let kid = header.kid.as_deref().filter(|kid| plausible_key_id(kid)).ok_or(BearerError::UnknownKey)?;
    let key = match oidc.key(kid).await {
        Ok(Some(key)) => key,
        Ok(None) => return Err(BearerError::UnknownKey),
        Err(OidcError::Unavailable(_) | OidcError::Misconfigured(_)) => return Err(BearerError::Unavailable),
        Err(OidcError::Rejected(_)) => return Err(BearerError::UnknownKey),
    };
    verify_with_key(token, &header, &key, oidc.issuer(), audiences)
}

/// The checks after the key is known: the key's declared algorithm, signature, `iss`, `aud`,
/// `exp` and `nbf`. Pure and synchronous (the per-request cost; benchmarked).
pub fn verify_with_key(
    token: &str,
    header: &jsonwebtoken::Header,
    key: &jsonwebtoken::jwk::Jwk,
    issuer: &str,
    audiences: &[String],
) -> Result<serde_json::Map<String, serde_json::Value>, BearerError> {
    // A published key that declares another algorithm must not verify this one.
    if key.common.key_algorithm.is_some_and(|declared| declared.to_string() != format!("{:?}", header.alg)) {
        return Err(BearerError::Algorithm);
    }
    let decoding = DecodingKey::from_jwk(key).map_err(|_| BearerError::UnknownKey)?;
    let mut validation = Validation::new(header.alg);
    validation.algorithms = vec![header.alg];
    validation.leeway = LEEWAY_SECONDS;
    validation.validate_nbf = true;
    validation.set_issuer(&[issuer]);
    validation.set_audience(audiences);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    let claims =
        jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &decoding, &validation)
            .map(|data| data.claims)
            .map_err(|error| BearerError::Invalid(error.to_string()))?;
    // jsonwebtoken also accepts an array of issuers containing ours; RFC 7519 makes `iss` one
    // string, and a token naming several issuers is not ours.
    if claims.get("iss").and_then(serde_json::Value::as_str) != Some(issuer) {
        return Err(BearerError::Invalid("iss must be exactly the provider's issuer".into()));
    }
    Ok(claims)
}

/// A verified token is trusted again without verification for at most this long, so a key the
/// provider withdraws stops working within a minute.
const REUSE_SECONDS: u64 = 60;
/// Most tokens remembered; the cache is emptied when it grows past this.
const MAX_REMEMBERED: usize = 100_000;

/// Tokens verified recently, by SHA-256 of the token (the token itself is not kept).
#[derive(Default)]
pub struct VerifiedTokens {
    entries: std::sync::Mutex<std::collections::HashMap<[u8; 32], (Identity, u64)>>,
}

impl VerifiedTokens {
    /// The identity of a token verified recently and still valid at `now`.
    pub fn get(&self, token: &str, now: u64) -> Option<Identity> {
        let entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (identity, valid_until) = entries.get(&fingerprint(token))?;
        (now < *valid_until).then(|| identity.clone())
    }

    /// Remembers a verified token until its `exp` or for `REUSE_SECONDS`, whichever is sooner.
    pub fn insert(&self, token: &str, identity: Identity, expires: u64, now: u64) {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if entries.len() >= MAX_REMEMBERED {
            entries.clear();
        }
        entries.insert(fingerprint(token), (identity, expires.min(now + REUSE_SECONDS)));
    }
}

fn fingerprint(token: &str) -> [u8; 32] {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
    let mut fingerprint = [0u8; 32];
    fingerprint.copy_from_slice(digest.as_ref());
    fingerprint
}

/// Key ids are short identifiers; anything else (paths, URLs, megabytes) cannot name a key.
fn plausible_key_id(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= 128
        && kid.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.=+/".contains(&b))
        && !kid.contains("..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_tokens_expire_with_the_token_and_within_a_minute() {
        let remembered = VerifiedTokens::default();
        let alice = Identity { user: "alice".into(), email: None, groups: vec![], name: None };
        remembered.insert("short", alice.clone(), 1010, 1000);
        remembered.insert("long", alice.clone(), 5000, 1000);
        assert_eq!(remembered.get("short", 1009), Some(alice.clone()));
        assert_eq!(remembered.get("short", 1010), None, "never past exp");
        assert_eq!(remembered.get("long", 1059), Some(alice));
        assert_eq!(remembered.get("long", 1060), None, "at most a minute without verification");
        assert_eq!(remembered.get("unknown", 1000), None);
    }
}
