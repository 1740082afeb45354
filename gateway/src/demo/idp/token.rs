//! The token endpoint (RFC 6749 §3.2, §4.1.3, §6; RFC 7636 §4.6): authenticates the client,
//! redeems an authorization code (checking redirect URI and PKCE verifier) or rotates a refresh
//! token, and answers with signed ID and access tokens. Errors are RFC 6749 §5.2 JSON.

use super::Provider;
use super::claims::{AccessTokenClaims, IdTokenClaims, Issuance};
use super::form::{self, Parameters};
use super::grants::RefreshGrant;
use super::keys::TokenKind;
use super::responses::{self, Body};
use super::users::DemoUser;
use aws_lc_rs::constant_time::verify_slices_are_equal;
use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use serde::Serialize;

/// `POST /token`.
pub(super) fn exchange(provider: &Provider, headers: &HeaderMap, body: &[u8]) -> Response<Body> {
    match grant_tokens(provider, headers, body) {
        Ok(tokens) => responses::json(StatusCode::OK, &tokens),
        Err(error) => {
            tracing::info!(reason = error.code(), "development provider refused a token request");
            error_response(&error)
        }
    }
}

/// A successful token response (RFC 6749 §5.1, OIDC Core §3.1.3.3).
#[derive(Debug, Serialize)]
struct TokenResponse {
    access_token: String,
    token_type: &'static str,
    expires_in: u64,
    id_token: String,
    refresh_token: String,
    scope: String,
}

/// Why a token request is refused.
#[derive(Debug, thiserror::Error)]
enum TokenError {
    #[error("{0}")]
    InvalidRequest(&'static str),
    #[error("client authentication failed")]
    InvalidClient,
    #[error("{0}")]
    InvalidGrant(&'static str),
    #[error("the requested scope exceeds the scope originally granted")]
    InvalidScope,
    #[error("grant_type must be authorization_code or refresh_token")]
    UnsupportedGrantType,
    #[error("too many grants are outstanding; try again in a minute")]
    TemporarilyUnavailable,
    #[error("the provider cannot sign tokens")]
    ServerError,
}

impl TokenError {
    fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant(_) => "invalid_grant",
            Self::InvalidScope => "invalid_scope",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
            Self::ServerError => "server_error",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            Self::InvalidClient => StatusCode::UNAUTHORIZED,
            Self::TemporarilyUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

fn grant_tokens(provider: &Provider, headers: &HeaderMap, body: &[u8]) -> Result<TokenResponse, TokenError> {
    let is_form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(TokenError::InvalidRequest("the body must be application/x-www-form-urlencoded"));
    }
    let parameters = Parameters::parse(body);
    if parameters.has_repeated() {
        return Err(TokenError::InvalidRequest("a parameter was sent more than once"));
    }
    let client_id = authenticate_client(provider, headers, &parameters)?;
    match parameters.get("grant_type") {
        Some("authorization_code") => redeem_code(provider, &client_id, &parameters),
        Some("refresh_token") => refresh(provider, &client_id, &parameters),
        Some(_) => Err(TokenError::UnsupportedGrantType),
        None => Err(TokenError::InvalidRequest("grant_type is required")),
    }
}

/// Authenticates the client by exactly one of HTTP Basic or `client_secret_post`, and returns
/// its id.
fn authenticate_client(
    provider: &Provider,
    headers: &HeaderMap,
    parameters: &Parameters,
) -> Result<String, TokenError> {
    let (client_id, secret) = match headers.get(header::AUTHORIZATION) {
        Some(authorization) => {
            if parameters.get("client_secret").is_some() {
                return Err(TokenError::InvalidRequest("use one client authentication method, not two"));
            }
            let (client_id, secret) = basic_credentials(authorization).ok_or(TokenError::InvalidClient)?;
            if parameters.get("client_id").is_some_and(|form_id| form_id != client_id) {
                return Err(TokenError::InvalidRequest("client_id differs from the authenticated client"));
            }
            (client_id, secret)
        }
        None => match (parameters.get("client_id"), parameters.get("client_secret")) {
            (Some(client_id), Some(secret)) => (client_id.to_owned(), secret.to_owned()),
            _ => return Err(TokenError::InvalidClient),
        },
    };
    if provider.client.authenticates(&client_id, &secret) {
        Ok(client_id)
    } else {
        Err(TokenError::InvalidClient)
    }
}

/// `Basic base64(urlencode(client_id) ":" urlencode(secret))`, per RFC 6749 §2.3.1.
fn basic_credentials(authorization: &HeaderValue) -> Option<(String, String)> {
    let (scheme, encoded) = authorization.to_str().ok()?.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (client_id, secret) = decoded.split_once(':')?;
    Some((form::decode_component(client_id)?, form::decode_component(secret)?))
}

fn redeem_code(
    provider: &Provider,
    client_id: &str,
    parameters: &Parameters,
) -> Result<TokenResponse, TokenError> {
    let code = parameters.get("code").ok_or(TokenError::InvalidRequest("code is required"))?;
    let redirect_uri =
        parameters.get("redirect_uri").ok_or(TokenError::InvalidRequest("redirect_uri is required"))?;
    let verifier = parameters
        .get("code_verifier")
        .ok_or(TokenError::InvalidRequest("code_verifier is required (PKCE)"))?;
    // Redeeming removes the code, so a failed check below also spends it: one attempt per code.
    let grant = provider
        .codes
        .redeem(code)
        .ok_or(TokenError::InvalidGrant("the code is unknown, expired or already used"))?;
    if grant.client_id != client_id {
        return Err(TokenError::InvalidGrant("the code was issued to another client"));
    }
    if grant.redirect_uri != redirect_uri {
        return Err(TokenError::InvalidGrant("redirect_uri differs from the authorization request"));
    }
    if !pkce_matches(verifier, &grant.code_challenge) {
        return Err(TokenError::InvalidGrant("code_verifier does not match the code_challenge"));
    }
    issue(provider, grant.user, client_id, &grant.scope, grant.auth_time, Some(&grant.nonce))
}

fn refresh(
    provider: &Provider,
    client_id: &str,
    parameters: &Parameters,
) -> Result<TokenResponse, TokenError> {
    let token =
        parameters.get("refresh_token").ok_or(TokenError::InvalidRequest("refresh_token is required"))?;
    // Rotation: the old token is spent whatever happens next.
    let grant = provider
        .refresh_tokens
        .redeem(token)
        .ok_or(TokenError::InvalidGrant("the refresh token is unknown, expired or already used"))?;
    if grant.client_id != client_id {
        return Err(TokenError::InvalidGrant("the refresh token was issued to another client"));
    }
    // A client may narrow the scope of one refresh (RFC 6749 §6), never widen it.
    let scope = match parameters.get("scope") {
        Some(requested)
            if requested.split(' ').all(|item| grant.scope.split(' ').any(|held| held == item)) =>
        {
            requested
        }
        Some(_) => return Err(TokenError::InvalidScope),
        None => grant.scope.as_str(),
    };
    issue(provider, grant.user, client_id, scope, grant.auth_time, None)
}

/// RFC 7636 §4.6: BASE64URL-NOPAD(SHA256(ASCII(verifier))) == challenge, for a verifier of 43 to
/// 128 unreserved characters.
fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-._~".contains(&byte));
    let computed = URL_SAFE_NO_PAD.encode(digest(&SHA256, verifier.as_bytes()));
    well_formed && verify_slices_are_equal(computed.as_bytes(), challenge.as_bytes()).is_ok()
}

fn issue(
    provider: &Provider,
    user: &'static DemoUser,
    client_id: &str,
    scope: &str,
    auth_time: u64,
    nonce: Option<&str>,
) -> Result<TokenResponse, TokenError> {
    let lifetime_seconds = provider.token_lifetime.as_secs();
    let issuance = Issuance {
        issuer: &provider.issuer,
        client_id,
        user,
        now: jsonwebtoken::get_current_timestamp(),
        lifetime_seconds,
        auth_time,
    };
    let access_token = sign(provider, TokenKind::Access, &AccessTokenClaims::new(&issuance, scope))?;
    let id_token = sign(provider, TokenKind::Id, &IdTokenClaims::new(&issuance, nonce, &access_token))?;
    let refresh_grant =
        RefreshGrant { client_id: client_id.to_owned(), scope: scope.to_owned(), user, auth_time };
    let refresh_token = provider.refresh_tokens.issue(refresh_grant).map_err(|error| {
        tracing::warn!(%error, "development provider cannot issue a refresh token");
        TokenError::TemporarilyUnavailable
    })?;
    Ok(TokenResponse {
        access_token,
        token_type: "Bearer",
        expires_in: lifetime_seconds,
        id_token,
        refresh_token,
        scope: scope.to_owned(),
    })
}

/// An access token for `user` from the demo's own client, valid for `lifetime`: what the
/// provider would issue after a sign-in, minus the ID and refresh tokens.
pub(super) fn access_token(
    provider: &Provider,
    user: &'static DemoUser,
    lifetime: std::time::Duration,
) -> Result<String, String> {
    let now = jsonwebtoken::get_current_timestamp();
    let issuance = Issuance {
        issuer: &provider.issuer,
        client_id: provider.client.id(),
        user,
        now,
        lifetime_seconds: lifetime.as_secs(),
        auth_time: now,
    };
    let claims = AccessTokenClaims::new(&issuance, "openid email profile");
    provider.key.sign(TokenKind::Access, &claims).map_err(|error| error.to_string())
}

fn sign(provider: &Provider, kind: TokenKind, claims: &impl Serialize) -> Result<String, TokenError> {
    provider.key.sign(kind, claims).map_err(|error| {
        tracing::error!(%error, "development provider cannot sign a token");
        TokenError::ServerError
    })
}

fn error_response(error: &TokenError) -> Response<Body> {
    let mut response = responses::json(
        error.status(),
        &serde_json::json!({ "error": error.code(), "error_description": error.to_string() }),
    );
    if matches!(error, TokenError::InvalidClient) {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(r#"Basic realm="toolgate-development-idp""#),
        );
    }
    response
}
