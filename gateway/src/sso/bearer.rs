//! Bearer tokens for API clients: JWTs from the corporate identity provider, verified with
//! jsonwebtoken against the provider's published keys. Algorithms are pinned by configuration
//! (never taken from the token), embedded keys (`jwk`, `jku`, `x5u`, `x5c`) are refused, and
//! `iss`, `aud`, `exp` and `nbf` are checked with a small leeway.

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
        Err(OidcError::Unavailable(_)) => return Err(BearerError::Unavailable),
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

/// Key ids are short identifiers; anything else (paths, URLs, megabytes) cannot name a key.
fn plausible_key_id(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= 128
        && kid.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.=+/".contains(&b))
        && !kid.contains("..")
}
