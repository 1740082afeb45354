//! The discovery document (OpenID Connect Discovery 1.0 §3): what a client such as
//! openidconnect-rs reads first to find the endpoints, the signing algorithm and what the
//! provider supports. It advertises only what the provider actually enforces.

use super::Provider;
use super::responses::{self, Body};
use http::{Response, StatusCode};

/// The scopes the provider knows; others are ignored, as OIDC Core §3.1.2.1 recommends.
pub(super) const SUPPORTED_SCOPES: &[&str] = &["openid", "profile", "email", "groups", "offline_access"];

/// The claims the provider's ID tokens carry.
const SUPPORTED_CLAIMS: &[&str] =
    &["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "name", "email", "email_verified", "groups"];

/// `GET /.well-known/openid-configuration`.
pub(super) fn document(provider: &Provider) -> Response<Body> {
    let issuer = &provider.issuer;
    responses::json(
        StatusCode::OK,
        &serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "userinfo_endpoint": format!("{issuer}/userinfo"),
            "end_session_endpoint": format!("{issuer}/end_session"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "scopes_supported": SUPPORTED_SCOPES,
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "claims_supported": SUPPORTED_CLAIMS,
            "claims_parameter_supported": false,
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
        }),
    )
}
