//! The authorization endpoint (OIDC Core §3.1.2, RFC 7636): checks the request, shows the
//! development sign-in page, and once a demo user is chosen issues a single-use code bound to the
//! client, redirect URI, nonce, PKCE challenge and user. A request whose client or redirect URI
//! cannot be trusted gets an error page; it is never redirected anywhere.

use super::Provider;
use super::discovery::SUPPORTED_SCOPES;
use super::form::Parameters;
use super::grants::AuthorizationGrant;
use super::pages;
use super::responses::{self, Body};
use super::users::{self, DEMO_USERS, DemoUser};
use http::{Response, StatusCode};
use url::Url;

/// The longest `state` or `nonce` accepted; they are echoed and stored, so they are bounded.
const MAX_OPAQUE_LENGTH: usize = 1024;

/// `GET /authorize`: the sign-in page for a valid request.
pub(super) fn show(provider: &Provider, query: &[u8]) -> Response<Body> {
    let parameters = Parameters::parse(query);
    match validate(provider, &parameters) {
        Ok(request) => match provider.auto_sign_in {
            // The demo was started with a fixed user: no page, straight back with a code.
            Some(user) => issue_code(provider, &request, user),
            None => responses::html(
                StatusCode::OK,
                pages::sign_in(request.client_id, &request.form_fields(), DEMO_USERS),
            ),
        },
        Err(refusal) => refuse(refusal),
    }
}

/// `POST /authorize/choose`: the sign-in page's form, with the chosen `user` and the original
/// request, which is checked again since it came back through the browser.
pub(super) fn choose(provider: &Provider, body: &[u8]) -> Response<Body> {
    let parameters = Parameters::parse(body);
    let request = match validate(provider, &parameters) {
        Ok(request) => request,
        Err(refusal) => return refuse(refusal),
    };
    let Some(user) = parameters.get("user").and_then(users::find) else {
        return refuse(Refusal::Page(PageError::UnknownUser));
    };
    issue_code(provider, &request, user)
}

/// Signs `user` in for a checked request: a code back to the client.
fn issue_code(
    provider: &Provider,
    request: &AuthorizationRequest<'_>,
    user: &'static DemoUser,
) -> Response<Body> {
    let grant = AuthorizationGrant {
        client_id: request.client_id.to_owned(),
        redirect_uri: request.redirect_uri.to_owned(),
        nonce: request.nonce.to_owned(),
        code_challenge: request.code_challenge.to_owned(),
        scope: request.granted_scope(),
        user,
        auth_time: jsonwebtoken::get_current_timestamp(),
    };
    match provider.codes.issue(grant) {
        Ok(code) => {
            tracing::info!(user = user.id, "development provider signed in a demo user");
            redirect_to_client(request.redirect_uri, &[("code", &code), ("state", request.state)])
        }
        Err(error) => {
            tracing::warn!(%error, "development provider cannot issue an authorization code");
            refuse(Refusal::Redirect {
                redirect_uri: request.redirect_uri.to_owned(),
                state: Some(request.state.to_owned()),
                error: RedirectError::TemporarilyUnavailable,
            })
        }
    }
}

/// A checked authorization request; the fields borrow the request's parameters.
struct AuthorizationRequest<'a> {
    client_id: &'a str,
    redirect_uri: &'a str,
    response_type: &'a str,
    scope: &'a str,
    state: &'a str,
    nonce: &'a str,
    code_challenge: &'a str,
    code_challenge_method: &'a str,
}

impl AuthorizationRequest<'_> {
    /// The requested scopes the provider knows, each once, in the order asked.
    fn granted_scope(&self) -> String {
        let mut granted: Vec<&str> = Vec::new();
        for scope in self.scope.split(' ') {
            if SUPPORTED_SCOPES.contains(&scope) && !granted.contains(&scope) {
                granted.push(scope);
            }
        }
        granted.join(" ")
    }

    /// The request as the sign-in form carries it to `/authorize/choose`.
    fn form_fields(&self) -> [(&str, &str); 8] {
        [
            ("client_id", self.client_id),
            ("redirect_uri", self.redirect_uri),
            ("response_type", self.response_type),
            ("scope", self.scope),
            ("state", self.state),
            ("nonce", self.nonce),
            ("code_challenge", self.code_challenge),
            ("code_challenge_method", self.code_challenge_method),
        ]
    }
}

/// Why an authorization request is refused, and so where the refusal goes.
enum Refusal {
    /// The client or redirect URI cannot be trusted: the person sees a page.
    Page(PageError),
    /// Reported to the client at its registered redirect URI (RFC 6749 §4.1.2.1).
    Redirect { redirect_uri: String, state: Option<String>, error: RedirectError },
}

/// Refusals shown as a page.
#[derive(Debug, thiserror::Error)]
enum PageError {
    #[error("The client_id is missing, repeated or not the one registered with the development provider.")]
    UnknownClient,
    #[error(
        "The redirect_uri is missing, repeated or not registered for this client, \
         so the provider will not send you there."
    )]
    UnregisteredRedirect,
    #[error("Choose one of the listed demo users.")]
    UnknownUser,
}

/// Refusals reported to the client, each with its RFC 6749 / OIDC error code.
#[derive(Debug, thiserror::Error)]
enum RedirectError {
    #[error("{0}")]
    InvalidRequest(&'static str),
    #[error("response_type must be `code`")]
    UnsupportedResponseType,
    #[error("scope must include `openid`")]
    InvalidScope,
    #[error("the development provider keeps no sessions, so it cannot sign in without showing a page")]
    LoginRequired,
    #[error("too many sign-ins are in progress; try again in a minute")]
    TemporarilyUnavailable,
}

impl RedirectError {
    fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_request",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::LoginRequired => "login_required",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
        }
    }
}

/// Checks a request in the order RFC 6749 §4.1.2.1 requires: client and redirect URI first,
/// since until both are trusted no error may be redirected.
fn validate<'a>(
    provider: &Provider,
    parameters: &'a Parameters,
) -> Result<AuthorizationRequest<'a>, Refusal> {
    let client_id = parameters
        .get("client_id")
        .filter(|client_id| *client_id == provider.client.id() && !parameters.is_repeated("client_id"))
        .ok_or(Refusal::Page(PageError::UnknownClient))?;
    let redirect_uri = parameters
        .get("redirect_uri")
        .filter(|uri| provider.client.is_registered_redirect(uri) && !parameters.is_repeated("redirect_uri"))
        .ok_or(Refusal::Page(PageError::UnregisteredRedirect))?;
    let state = parameters.get("state").filter(|state| state.len() <= MAX_OPAQUE_LENGTH);
    let to_client = |error| Refusal::Redirect {
        redirect_uri: redirect_uri.to_owned(),
        state: state.map(str::to_owned),
        error,
    };
    if parameters.has_repeated() {
        return Err(to_client(RedirectError::InvalidRequest("a parameter was sent more than once")));
    }
    let response_type = match parameters.get("response_type") {
        Some(response_type @ "code") => response_type,
        Some(_) => return Err(to_client(RedirectError::UnsupportedResponseType)),
        None => return Err(to_client(RedirectError::InvalidRequest("response_type is required"))),
    };
    let scope = parameters
        .get("scope")
        .filter(|scope| scope.split(' ').any(|item| item == "openid"))
        .ok_or_else(|| to_client(RedirectError::InvalidScope))?;
    let Some(state) = state else {
        return Err(to_client(RedirectError::InvalidRequest("state is required (at most 1024 bytes)")));
    };
    let nonce = parameters
        .get("nonce")
        .filter(|nonce| nonce.len() <= MAX_OPAQUE_LENGTH)
        .ok_or_else(|| to_client(RedirectError::InvalidRequest("nonce is required (at most 1024 bytes)")))?;
    let code_challenge_method =
        parameters.get("code_challenge_method").filter(|method| *method == "S256").ok_or_else(|| {
            to_client(RedirectError::InvalidRequest("PKCE is required: code_challenge_method=S256"))
        })?;
    let code_challenge = parameters
        .get("code_challenge")
        .filter(|challenge| is_s256_challenge(challenge))
        .ok_or_else(|| {
            to_client(RedirectError::InvalidRequest(
                "code_challenge must be a base64url SHA-256 (43 characters)",
            ))
        })?;
    if parameters.get("prompt").is_some_and(|prompt| prompt.split(' ').any(|item| item == "none")) {
        return Err(to_client(RedirectError::LoginRequired));
    }
    Ok(AuthorizationRequest {
        client_id,
        redirect_uri,
        response_type,
        scope,
        state,
        nonce,
        code_challenge,
        code_challenge_method,
    })
}

/// An S256 challenge is BASE64URL-NOPAD of a 32-byte digest: exactly 43 base64url characters.
fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

fn refuse(refusal: Refusal) -> Response<Body> {
    match refusal {
        Refusal::Page(error) => {
            tracing::info!(reason = ?error, "development provider refused an authorization request");
            responses::html(StatusCode::BAD_REQUEST, pages::error(&error.to_string()))
        }
        Refusal::Redirect { redirect_uri, state, error } => {
            let description = error.to_string();
            let mut fields = vec![("error", error.code()), ("error_description", description.as_str())];
            if let Some(state) = &state {
                fields.push(("state", state));
            }
            redirect_to_client(&redirect_uri, &fields)
        }
    }
}

/// Redirects to a registered `redirect_uri` with `fields` added to its query.
fn redirect_to_client(redirect_uri: &str, fields: &[(&str, &str)]) -> Response<Body> {
    match Url::parse(redirect_uri) {
        Ok(mut location) => {
            location.query_pairs_mut().extend_pairs(fields);
            responses::redirect(location.as_str())
        }
        // Registered URIs were parsed when the provider started, so this does not happen.
        Err(_) => responses::plain(StatusCode::INTERNAL_SERVER_ERROR, "the redirect URI is not a URL"),
    }
}
