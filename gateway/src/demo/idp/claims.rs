//! The claims of the tokens the provider signs: ID tokens for the relying party (OIDC Core §2)
//! and JWT access tokens (RFC 9068) that API clients can present as bearer tokens and that
//! `/userinfo` accepts. Every token carries the user's email, name and groups.

use super::users::DemoUser;
use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// Who, for whom and when, common to both kinds of token.
pub(super) struct Issuance<'a> {
    pub(super) issuer: &'a str,
    pub(super) client_id: &'a str,
    pub(super) user: &'static DemoUser,
    /// Seconds since the Unix epoch.
    pub(super) now: u64,
    pub(super) lifetime_seconds: u64,
    pub(super) auth_time: u64,
}

/// The claims of an ID token.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct IdTokenClaims {
    pub(super) iss: String,
    pub(super) sub: String,
    pub(super) aud: String,
    pub(super) exp: u64,
    pub(super) iat: u64,
    pub(super) auth_time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) nonce: Option<String>,
    /// Binds the ID token to the access token issued with it (OIDC Core §3.1.3.6).
    pub(super) at_hash: String,
    pub(super) email: String,
    pub(super) email_verified: bool,
    pub(super) name: String,
    pub(super) groups: Vec<String>,
}

impl IdTokenClaims {
    /// ID token claims for the tokens issued with `access_token`; `nonce` is present on the code
    /// grant and absent after a refresh.
    pub(super) fn new(issuance: &Issuance<'_>, nonce: Option<&str>, access_token: &str) -> Self {
        let user = issuance.user;
        Self {
            iss: issuance.issuer.to_owned(),
            sub: user.id.to_owned(),
            aud: issuance.client_id.to_owned(),
            exp: issuance.now + issuance.lifetime_seconds,
            iat: issuance.now,
            auth_time: issuance.auth_time,
            nonce: nonce.map(str::to_owned),
            at_hash: access_token_hash(access_token),
            email: user.email.to_owned(),
            // The demo domain is reserved and the users are fixed, so the provider vouches for it.
            email_verified: true,
            name: user.name.to_owned(),
            groups: groups(user),
        }
    }
}

/// The claims of an access token.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct AccessTokenClaims {
    pub(super) iss: String,
    pub(super) sub: String,
    pub(super) aud: String,
    pub(super) client_id: String,
    pub(super) exp: u64,
    pub(super) iat: u64,
    pub(super) auth_time: u64,
    pub(super) scope: String,
    pub(super) email: String,
    pub(super) name: String,
    pub(super) groups: Vec<String>,
}

impl AccessTokenClaims {
    pub(super) fn new(issuance: &Issuance<'_>, scope: &str) -> Self {
        let user = issuance.user;
        Self {
            iss: issuance.issuer.to_owned(),
            sub: user.id.to_owned(),
            aud: issuance.client_id.to_owned(),
            client_id: issuance.client_id.to_owned(),
            exp: issuance.now + issuance.lifetime_seconds,
            iat: issuance.now,
            auth_time: issuance.auth_time,
            scope: scope.to_owned(),
            email: user.email.to_owned(),
            name: user.name.to_owned(),
            groups: groups(user),
        }
    }
}

/// The `/userinfo` response (OIDC Core §5.3.2).
#[derive(Debug, Serialize)]
pub(super) struct UserInfo {
    pub(super) sub: String,
    pub(super) name: String,
    pub(super) email: String,
    pub(super) email_verified: bool,
    pub(super) groups: Vec<String>,
}

impl UserInfo {
    pub(super) fn new(user: &DemoUser) -> Self {
        Self {
            sub: user.id.to_owned(),
            name: user.name.to_owned(),
            email: user.email.to_owned(),
            email_verified: true,
            groups: groups(user),
        }
    }
}

/// `at_hash` for ES256: the left half of the SHA-256 of the access token, base64url.
fn access_token_hash(access_token: &str) -> String {
    let hash = digest(&SHA256, access_token.as_bytes());
    let (left, _) = hash.as_ref().split_at(16);
    URL_SAFE_NO_PAD.encode(left)
}

fn groups(user: &DemoUser) -> Vec<String> {
    user.groups.iter().map(|group| (*group).to_owned()).collect()
}
