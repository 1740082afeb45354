//! The identity assertion sites receive: a short-lived ES256 JWT (audience = the site id) in
//! `X-Toolgate-Assertion`, so a site can verify who the user is instead of trusting plain
//! headers. The public keys are served at `/.toolgate/jwks.json` on every host.

use super::identity::Identity;
use crate::config::secrets::SecretRef;
use crate::support::random::random_bytes;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;
use serde_json::json;

/// How long an assertion is valid: long enough for one request to reach its site.
const LIFETIME_SECONDS: u64 = 60;
/// A signed assertion is reused for the same session and site for this long (half its life),
/// so a busy user costs one ECDSA signature per site every half minute, not one per request.
const REUSE_SECONDS: u64 = LIFETIME_SECONDS / 2;
/// Most cached assertions; the cache is emptied when it grows past this.
const MAX_CACHED: usize = 100_000;

/// Why the assertion keys could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AssertionKeyError {
    /// The secret could not be read.
    #[error("sso.assertion_keys: {0}")]
    Secret(#[from] crate::config::secrets::SecretError),
    /// Not a PKCS#8 PEM P-256 private key.
    #[error(
        "sso.assertion_keys: {0} is not a PKCS#8 PEM P-256 key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)"
    )]
    Malformed(String),
}

struct SigningKey {
    kid: String,
    encoding: EncodingKey,
    public_jwk: serde_json::Value,
}

/// Signs assertions with the first key; publishes all.
pub struct AssertionSigner {
    issuer: String,
    keys: Vec<SigningKey>,
    jwks: bytes::Bytes,
    cache: std::sync::Mutex<std::collections::HashMap<(Vec<u8>, String), Cached>>,
}

/// An assertion already signed for a session and site.
struct Cached {
    identity: Identity,
    token: String,
    issued_at: u64,
}

impl AssertionSigner {
    /// Loads the keys (a random key for this process when none are configured).
    pub fn new(references: &[SecretRef], issuer: String) -> Result<Self, AssertionKeyError> {
        let mut keys = Vec::new();
        for reference in references {
            let pem = reference.read()?;
            let malformed = || AssertionKeyError::Malformed(reference.to_string());
            let PrivateKeyDer::Pkcs8(der) =
                PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|_| malformed())?
            else {
                return Err(malformed());
            };
            keys.push(SigningKey::from_pkcs8(der.secret_pkcs8_der()).ok_or_else(malformed)?);
        }
        if keys.is_empty() {
            let rng = aws_lc_rs::rand::SystemRandom::new();
            let generated = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                .map_err(|_| AssertionKeyError::Malformed("<generated>".into()))?;
            keys.push(
                SigningKey::from_pkcs8(generated.as_ref())
                    .ok_or_else(|| AssertionKeyError::Malformed("<generated>".into()))?,
            );
        }
        let jwks = json!({ "keys": keys.iter().map(|key| key.public_jwk.clone()).collect::<Vec<_>>() });
        Ok(Self { issuer, keys, jwks: bytes::Bytes::from(jwks.to_string()), cache: Default::default() })
    }

    /// The assertion for a session's `identity` going to `site`: the one signed for this session
    /// and site less than half a lifetime ago if the identity is unchanged, else a new one.
    pub fn for_session(&self, session: &[u8], identity: &Identity, site: &str, now: u64) -> Option<String> {
        let key = (session.to_vec(), site.to_owned());
        let cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(cached) = cache.get(&key)
            && cached.identity == *identity
            && now < cached.issued_at + REUSE_SECONDS
        {
            return Some(cached.token.clone());
        }
        // Signing happens with the lock released: it is the expensive part.
        drop(cache);
        let token = self.sign(identity, site, now)?;
        let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(key, Cached { identity: identity.clone(), token: token.clone(), issued_at: now });
        Some(token)
    }

    /// The assertion for `identity` going to `site`.
    pub fn sign(&self, identity: &Identity, site: &str, now: u64) -> Option<String> {
        let key = &self.keys[0];
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(key.kid.clone());
        let claims = json!({
            "iss": self.issuer,
            "aud": site,
            "sub": identity.user,
            "email": identity.email,
            "groups": identity.groups,
            "iat": now,
            "nbf": now,
            "exp": now + LIFETIME_SECONDS,
            "jti": URL_SAFE_NO_PAD.encode(random_bytes::<12>()),
        });
        jsonwebtoken::encode(&header, &claims, &key.encoding).ok()
    }

    /// The JWKS document with every public key.
    pub fn jwks(&self) -> bytes::Bytes {
        self.jwks.clone()
    }
}

impl SigningKey {
    fn from_pkcs8(der: &[u8]) -> Option<Self> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der).ok()?;
        // An uncompressed P-256 point: 0x04, then 32 bytes of x and 32 of y.
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return None;
        }
        let kid =
            crate::http::hex(&aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, point).as_ref()[..8]);
        let public_jwk = json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Some(Self { kid, encoding: EncodingKey::from_ec_der(der), public_jwk })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertions_are_reused_per_session_and_site_for_half_their_life() {
        let signer = AssertionSigner::new(&[], "https://gateway.test".into()).expect("signer");
        let alice = Identity { user: "alice".into(), email: None, groups: vec!["eng".into()], name: None };
        let first = signer.for_session(b"session-1", &alice, "tasks", 1000).expect("signed");
        assert_eq!(signer.for_session(b"session-1", &alice, "tasks", 1029).as_ref(), Some(&first), "reused");
        assert_ne!(
            signer.for_session(b"session-1", &alice, "payroll", 1001).as_ref(),
            Some(&first),
            "per site"
        );
        assert_ne!(
            signer.for_session(b"session-2", &alice, "tasks", 1001).as_ref(),
            Some(&first),
            "per session"
        );
        let regrouped = Identity { groups: vec!["ops".into()], ..alice.clone() };
        assert_ne!(
            signer.for_session(b"session-1", &regrouped, "tasks", 1002).as_ref(),
            Some(&first),
            "identity changed"
        );
        assert_ne!(
            signer.for_session(b"session-1", &alice, "tasks", 1030).as_ref(),
            Some(&first),
            "renewed at half life"
        );
    }

    #[test]
    fn assertions_verify_with_the_published_keys_for_their_site_only() {
        let signer = AssertionSigner::new(&[], "https://gateway.test".into()).expect("signer");
        let identity = Identity {
            user: "alice".into(),
            email: Some("alice@corp".into()),
            groups: vec!["eng".into()],
            name: None,
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let token = signer.sign(&identity, "tasks", now).expect("signed");
        let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_slice(&signer.jwks()).expect("jwks");
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwks.keys[0]).expect("key");
        let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
        validation.set_audience(&["tasks"]);
        validation.set_issuer(&["https://gateway.test"]);
        let claims =
            jsonwebtoken::decode::<serde_json::Value>(&token, &key, &validation).expect("verifies").claims;
        assert_eq!(claims["sub"], "alice");
        assert_eq!(claims["groups"][0], "eng");
        validation.set_audience(&["payroll"]);
        assert!(
            jsonwebtoken::decode::<serde_json::Value>(&token, &key, &validation).is_err(),
            "audience binds the site"
        );
    }
}
