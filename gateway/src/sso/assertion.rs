//! The identity assertion sites receive: a short-lived ES256 JWT (audience = the site id) in
//! `X-Toolgate-Assertion`, so a site can verify who the user is instead of trusting plain
//! headers. The public keys are served at `/.toolgate/jwks.json` on every host.

use super::identity::Identity;
use super::keys::random_bytes;
use crate::secrets::SecretRef;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;
use serde_json::json;

/// How long an assertion is valid: long enough for one request to reach its site.
const LIFETIME_SECONDS: u64 = 60;

/// Why the assertion keys could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AssertionKeyError {
    /// The secret could not be read.
    #[error("sso.assertion_keys: {0}")]
    Secret(#[from] crate::secrets::SecretError),
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
        Ok(Self { issuer, keys, jwks: bytes::Bytes::from(jwks.to_string()) })
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
        let kid = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, point)
            .as_ref()
            .iter()
            .take(8)
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>();
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
    fn assertions_verify_with_the_published_keys_for_their_site_only() {
        let signer = AssertionSigner::new(&[], "https://gateway.test".into()).expect("signer");
        let identity =
            Identity { user: "alice".into(), email: Some("alice@corp".into()), groups: vec!["eng".into()] };
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
