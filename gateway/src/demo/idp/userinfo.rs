//! The UserInfo endpoint (OIDC Core §5.3): answers the claims of the user an access token was
//! issued to. It accepts only this provider's access tokens (checked signature, `typ`, issuer,
//! audience and expiry), never an ID token.

use super::Provider;
use super::claims::{AccessTokenClaims, UserInfo};
use super::keys::TokenKind;
use super::responses::{self, Body};
use super::users;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use jsonwebtoken::{Algorithm, Validation};

/// `GET` or `POST /userinfo` with `Authorization: Bearer <access token>`.
pub(super) fn respond(provider: &Provider, headers: &HeaderMap) -> Response<Body> {
    let Some(token) = crate::http::bearer_token(headers) else {
        // RFC 6750 §3.1: a request without credentials gets the challenge but no error code.
        return unauthorized(
            r#"Bearer realm="toolgate-development-idp""#,
            serde_json::json!({ "error_description": "an access token is required" }),
        );
    };
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_issuer(&[&provider.issuer]);
    validation.set_audience(&[provider.client.id()]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let user = provider
        .key
        .verify::<AccessTokenClaims>(TokenKind::Access, token, &validation)
        .and_then(|data| users::find(&data.claims.sub));
    match user {
        Some(user) => responses::json(StatusCode::OK, &UserInfo::new(user)),
        None => unauthorized(
            r#"Bearer realm="toolgate-development-idp", error="invalid_token""#,
            serde_json::json!({
                "error": "invalid_token",
                "error_description": "the access token is invalid or expired",
            }),
        ),
    }
}

fn unauthorized(challenge: &'static str, body: serde_json::Value) -> Response<Body> {
    let mut response = responses::json(StatusCode::UNAUTHORIZED, &body);
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    response
}
