//! The provider's signing key: a P-256 key generated at start and kept only in memory, so every
//! run of the demo has a fresh key and nothing secret is ever written to disk. It signs ID and
//! access tokens with ES256, verifies access tokens for `/userinfo` and publishes its public
//! half as a JWK set whose `kid` is the RFC 7638 thumbprint.

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, TokenData, Validation};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why the signing key could not be made.
#[derive(Debug, thiserror::Error)]
pub(super) enum KeyError {
    #[error("cannot generate a P-256 key pair")]
    Generate,
    #[error("the generated public key is not an uncompressed P-256 point")]
    PublicPoint,
    #[error("cannot build a verification key from the public point")]
    Verification(#[source] jsonwebtoken::errors::Error),
}

/// What a signed token is, written to its `typ` header so one kind cannot pass for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TokenKind {
    /// An OpenID Connect ID token (`typ: JWT`).
    Id,
    /// An RFC 9068 access token (`typ: at+jwt`).
    Access,
}

impl TokenKind {
    pub(super) fn header_type(self) -> &'static str {
        match self {
            Self::Id => "JWT",
            Self::Access => "at+jwt",
        }
    }
}

/// The public half of the key, as published at `/jwks`.
#[derive(Debug, Clone, Serialize)]
pub(super) struct PublicJwk {
    kty: &'static str,
    crv: &'static str,
    x: String,
    y: String,
    kid: String,
    #[serde(rename = "use")]
    usage: &'static str,
    alg: &'static str,
}

/// The signing key and everything derived from it.
pub(super) struct SigningKey {
    encoding: EncodingKey,
    decoding: DecodingKey,
    jwk: PublicJwk,
}

impl SigningKey {
    /// Generates a fresh P-256 key pair.
    pub(super) fn generate() -> Result<Self, KeyError> {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .map_err(|_| KeyError::Generate)?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .map_err(|_| KeyError::Generate)?;
        // An uncompressed P-256 point is 0x04 followed by the 32-byte x and y coordinates.
        let (x, y) = match pair.public_key().as_ref() {
            [0x04, coordinates @ ..] if coordinates.len() == 64 => coordinates.split_at(32),
            _ => return Err(KeyError::PublicPoint),
        };
        let x = URL_SAFE_NO_PAD.encode(x);
        let y = URL_SAFE_NO_PAD.encode(y);
        let decoding = DecodingKey::from_ec_components(&x, &y).map_err(KeyError::Verification)?;
        let kid = thumbprint(&x, &y);
        Ok(Self {
            encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
            decoding,
            jwk: PublicJwk { kty: "EC", crv: "P-256", x, y, kid, usage: "sig", alg: "ES256" },
        })
    }

    /// The JWK set served at `/jwks`.
    pub(super) fn jwks(&self) -> serde_json::Value {
        serde_json::json!({ "keys": [&self.jwk] })
    }

    /// Signs `claims` as a token of `kind`.
    pub(super) fn sign(
        &self,
        kind: TokenKind,
        claims: &impl Serialize,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some(kind.header_type().to_owned());
        header.kid = Some(self.jwk.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding)
    }

    /// Verifies a token of `kind` signed by this key, with the checks in `validation`.
    pub(super) fn verify<T: DeserializeOwned>(
        &self,
        kind: TokenKind,
        token: &str,
        validation: &Validation,
    ) -> Option<TokenData<T>> {
        let data = jsonwebtoken::decode::<T>(token, &self.decoding, validation).ok()?;
        (data.header.typ.as_deref() == Some(kind.header_type())).then_some(data)
    }
}

/// The RFC 7638 JWK thumbprint: SHA-256 over the required members in lexicographic order.
fn thumbprint(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    URL_SAFE_NO_PAD.encode(digest(&SHA256, canonical.as_bytes()))
}
