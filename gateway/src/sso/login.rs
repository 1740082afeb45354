//! The sign-in endpoints. On the gateway's own host: `/.toolgate/login` and
//! `/.toolgate/callback`. On every site host: `/.toolgate/session` (takes a handoff ticket),
//! `/.toolgate/logout` (GET shows a confirmation form, POST with its CSRF token signs out
//! everywhere) and `/.toolgate/whoami` (the caller's identity, by session or bearer token).
//! `/.toolgate/jwks.json` (the assertion keys) is on both.

use super::cookies::{self, CookieKind};
use super::identity::Identity;
use super::oidc::OidcError;
use super::session::{self, Handoff, PendingLogin};
use super::{SessionFailure, Sso, return_url};
use crate::audit::event::{AuditEvent, EventKind};
use crate::http::body::{self, ProxyBody};
use crate::http::client::{request_authority, request_host};
use crate::http::errors::ProxyError;
use crate::http::pages::{escape_html, page};
use crate::store::Table;
use crate::support::clock::unix_now;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::header::{self, HeaderValue};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;

/// A login must come back within this time.
const LOGIN_SECONDS: u64 = 600;
/// A handoff ticket is used at once by the browser's next redirect.
const HANDOFF_SECONDS: u64 = 60;
/// Largest form body accepted on sign-in endpoints.
const MAX_FORM: usize = 4096;
/// Where the provider returns the browser after signing it out (on the gateway's host).
pub const SIGNED_OUT_PATH: &str = "/.toolgate/signed-out";

/// Answers a sign-in request on the gateway's own host (login, callback, keys).
pub async fn gateway_host(
    sso: &Sso,
    request: &Request<Incoming>,
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    let query = query_pairs(request);
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/.toolgate/login") => start(sso, request.headers(), &query, secure).await,
        (&Method::GET, "/.toolgate/callback") => {
            let result = callback(sso, request.headers(), &query, secure).await;
            if let Err(ProxyError::LoginFailed) = result {
                sso.record("login_failed");
                // A failed sign-in of a browser that started one here is audited; a callback
                // from nowhere (no login cookie) is only counted, so nobody can fill the audit
                // disk with forged callbacks.
                let started_here = cookies::read(request.headers(), CookieKind::Login, secure)
                    .and_then(|sealed| sso.keys.open(CookieKind::Login.purpose(), &sealed))
                    .is_some();
                if started_here {
                    let event = AuditEvent::new(EventKind::LoginFailed).decision("failure", "login_failed");
                    sso.audit.record(event).await.map_err(|_| ProxyError::AuditUnavailable)?;
                }
            }
            result
        }
        (&Method::GET, "/.toolgate/jwks.json") => Ok(json(StatusCode::OK, sso.assertion.jwks())),
        (&Method::GET, SIGNED_OUT_PATH) => Ok(signed_out_page(secure, SIGNED_OUT_EVERYWHERE)),
        _ => Err(ProxyError::NotFound),
    }
}

const SIGNED_OUT_HERE: &str = "You are signed out of every site behind this gateway.";
const SIGNED_OUT_EVERYWHERE: &str =
    "You are signed out of every site behind this gateway and of the corporate sign-in.";

/// The "signed out" page; it also clears this host's session cookie.
fn signed_out_page(secure: bool, what: &str) -> Response<ProxyBody> {
    let mut response = html(StatusCode::OK, page("Signed out", &format!("<p>{}</p>", escape_html(what))));
    append_cookie(&mut response, cookies::set_cookie(CookieKind::Session, secure, "", 0));
    response
}

/// Who is calling, by bearer token or session; 401 when neither.
pub(super) async fn caller(sso: &Sso, headers: &HeaderMap, secure: bool) -> Result<Identity, ProxyError> {
    match crate::http::bearer_token(headers) {
        Some(token) => match sso.bearer_identity(token).await {
            Ok(identity) => Ok(identity),
            Err(super::bearer::BearerError::Unavailable) => Err(ProxyError::SsoUnavailable),
            Err(error) => {
                tracing::info!(reason = %error, "bearer token refused");
                Err(ProxyError::Unauthenticated)
            }
        },
        None => match sso.session(headers, secure).await {
            Ok(session) => Ok(session.record.identity),
            Err(SessionFailure::Missing) => Err(ProxyError::Unauthenticated),
            Err(SessionFailure::Unavailable) => Err(ProxyError::SsoUnavailable),
        },
    }
}

/// Answers a sign-in endpoint on a site host; hands the request back when the path is not one.
pub async fn site_host(
    sso: &Sso,
    request: Request<Incoming>,
    secure: bool,
) -> Result<Result<Response<ProxyBody>, ProxyError>, Request<Incoming>> {
    let answer = match (request.method().clone(), request.uri().path()) {
        (Method::GET, "/.toolgate/session") => handoff(sso, &request, secure).await,
        (Method::GET, "/.toolgate/logout") => logout_form(sso, request.headers(), secure).await,
        (Method::POST, "/.toolgate/logout") => logout(sso, request, secure).await,
        (Method::GET, "/.toolgate/whoami") => whoami(sso, request.headers(), secure).await,
        (Method::GET, "/.toolgate/jwks.json") => Ok(json(StatusCode::OK, sso.assertion.jwks())),
        _ => return Err(request),
    };
    Ok(answer)
}

/// The answer to an unauthenticated request on a site: a redirect into the login dance for
/// page navigations, 401 for everything else (scripts, APIs).
pub fn login_redirect(
    sso: &Sso,
    headers: &HeaderMap,
    method: &Method,
    site_url: &str,
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    let navigation = method == Method::GET
        && headers
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"));
    if !navigation {
        return Err(ProxyError::Unauthenticated);
    }
    // Another tab may already be signing in: reuse its binding so neither sign-in breaks the other.
    let existing = cookies::read(headers, CookieKind::Pending, secure)
        .and_then(|sealed| sso.keys.open(CookieKind::Pending.purpose(), &sealed))
        .and_then(|bind| String::from_utf8(bind).ok());
    let bind =
        existing.unwrap_or_else(|| URL_SAFE_NO_PAD.encode(crate::support::random::random_bytes::<16>()));
    let sealed = sso.keys.seal(CookieKind::Pending.purpose(), bind.as_bytes());
    let location = format!(
        "{}/.toolgate/login?{}",
        sso.public_origin,
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("return", site_url)
            .append_pair("bind", &bind)
            .finish()
    );
    Ok(redirect(&location, [cookies::set_cookie(CookieKind::Pending, secure, &sealed, LOGIN_SECONDS)]))
}

async fn start(
    sso: &Sso,
    headers: &HeaderMap,
    query: &[(String, String)],
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    let target = param(query, "return").and_then(|target| return_url::site_target(target, &sso.site_hosts()));
    let bind = param(query, "bind").filter(|bind| bind.len() <= 64).ok_or(ProxyError::BadRequest)?;
    let Some((candidate_origin, path)) = target else {
        return Err(ProxyError::BadRequest);
    };
    // Only the host is taken from the request; scheme and port are the gateway's own, so a
    // ticket can never be sent to another port or over another scheme.
    let host = url::Url::parse(&candidate_origin)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .ok_or(ProxyError::BadRequest)?;
    let origin = sso.site_origin(&host);
    // Already signed in on the gateway host: no need to bother the provider.
    match sso.session(headers, secure).await {
        Ok(session) => return handoff_redirect(sso, &session.id, origin, path, bind.to_owned()).await,
        Err(SessionFailure::Unavailable) => return Err(ProxyError::SsoUnavailable),
        Err(SessionFailure::Missing) => {}
    }
    let authorization = sso.oidc.authorization().await.map_err(oidc_failure)?;
    let pending = PendingLogin {
        verifier: authorization.verifier,
        nonce: authorization.nonce,
        origin,
        path,
        bind: bind.to_owned(),
        expires_at: unix_now() + LOGIN_SECONDS,
    };
    session::put(&sso.store, Table::PendingLogins, authorization.state.as_bytes(), &pending)
        .await
        .map_err(|_| ProxyError::SsoUnavailable)?;
    let login_cookie = sso.keys.seal(CookieKind::Login.purpose(), authorization.state.as_bytes());
    Ok(redirect(
        &authorization.url,
        [cookies::set_cookie(CookieKind::Login, secure, &login_cookie, LOGIN_SECONDS)],
    ))
}

async fn callback(
    sso: &Sso,
    headers: &HeaderMap,
    query: &[(String, String)],
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    if let Some(error) = param(query, "error") {
        // The provider's error code is a short token from a fixed vocabulary; log it bounded.
        let error: String = error.chars().filter(char::is_ascii_alphanumeric).take(40).collect();
        tracing::info!(error = %error, "identity provider refused the sign-in");
        return Err(ProxyError::LoginFailed);
    }
    let state = param(query, "state").ok_or(ProxyError::LoginFailed)?;
    let code = param(query, "code").ok_or(ProxyError::LoginFailed)?;
    // The state must be the one this browser was given: a login link cannot be replayed into
    // somebody else's browser (login CSRF).
    let cookie_state = cookies::read(headers, CookieKind::Login, secure)
        .and_then(|sealed| sso.keys.open(CookieKind::Login.purpose(), &sealed))
        .ok_or(ProxyError::LoginFailed)?;
    if cookie_state != state.as_bytes() {
        return Err(ProxyError::LoginFailed);
    }
    let pending: PendingLogin = session::take(&sso.store, Table::PendingLogins, state.as_bytes(), unix_now())
        .await
        .map_err(|_| ProxyError::SsoUnavailable)?
        .ok_or(ProxyError::LoginFailed)?;
    let tokens = sso.oidc.exchange(code, &pending.verifier, &pending.nonce).await.map_err(oidc_failure)?;
    let claims = tokens.claims.as_ref().ok_or(ProxyError::LoginFailed)?;
    let identity = Identity::from_claims(claims, &sso.config.claims).map_err(|error| {
        tracing::warn!(error = %error, "ID token has no usable identity");
        ProxyError::LoginFailed
    })?;
    let event = AuditEvent::new(EventKind::Login)
        .actor(&identity.user, identity.email.as_deref(), &identity.groups)
        .resource(&pending.origin)
        .decision("success", "login");
    let id = sso.create_session(identity, &tokens).await.map_err(|_| ProxyError::SsoUnavailable)?;
    let mut event = event;
    event.session = Some(sso.session_digest(&id));
    if sso.audit.record(event).await.is_err() {
        // No unaudited sign-ins: the session is withdrawn before anyone could use it.
        let _ = sso.revoke(&id).await;
        return Err(ProxyError::AuditUnavailable);
    }
    sso.record("login");
    tracing::info!(outcome = "login", "user signed in");
    let mut response = handoff_redirect(sso, &id, pending.origin, pending.path, pending.bind).await?;
    let session_cookie = sso.keys.seal(CookieKind::Session.purpose(), &id);
    append_cookie(
        &mut response,
        cookies::set_cookie(
            CookieKind::Session,
            secure,
            &session_cookie,
            sso.config.session_lifetime.as_secs(),
        ),
    );
    append_cookie(&mut response, cookies::set_cookie(CookieKind::Login, secure, "", 0));
    Ok(response)
}

async fn handoff_redirect(
    sso: &Sso,
    id: &session::SessionId,
    origin: String,
    path: String,
    bind: String,
) -> Result<Response<ProxyBody>, ProxyError> {
    let ticket = URL_SAFE_NO_PAD.encode(crate::support::random::random_bytes::<32>());
    let handoff = Handoff {
        session: session::to_hex(id),
        origin: origin.clone(),
        path,
        bind,
        expires_at: unix_now() + HANDOFF_SECONDS,
    };
    session::put(&sso.store, Table::Handoffs, ticket.as_bytes(), &handoff)
        .await
        .map_err(|_| ProxyError::SsoUnavailable)?;
    Ok(redirect(&format!("{origin}/.toolgate/session?ticket={ticket}"), []))
}

async fn handoff(
    sso: &Sso,
    request: &Request<Incoming>,
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    let query = query_pairs(request);
    let ticket = param(&query, "ticket").ok_or(ProxyError::LoginFailed)?;
    let handoff: Handoff = session::take(&sso.store, Table::Handoffs, ticket.as_bytes(), unix_now())
        .await
        .map_err(|_| ProxyError::SsoUnavailable)?
        .ok_or(ProxyError::LoginFailed)?;
    // The ticket is for this site and for the browser that started the sign-in here.
    let this_origin = request_host(request).map(|host| sso.site_origin(&host));
    let bind = cookies::read(request.headers(), CookieKind::Pending, secure)
        .and_then(|sealed| sso.keys.open(CookieKind::Pending.purpose(), &sealed));
    if this_origin.as_deref() != Some(handoff.origin.as_str())
        || bind.as_deref() != Some(handoff.bind.as_bytes())
    {
        return Err(ProxyError::LoginFailed);
    }
    let id = session::from_hex(&handoff.session).ok_or(ProxyError::LoginFailed)?;
    let sealed = sso.keys.seal(CookieKind::Session.purpose(), &id);
    Ok(redirect(
        &return_url::same_origin_path(&handoff.path),
        [
            cookies::set_cookie(CookieKind::Session, secure, &sealed, sso.config.session_lifetime.as_secs()),
            cookies::set_cookie(CookieKind::Pending, secure, "", 0),
        ],
    ))
}

async fn logout_form(
    sso: &Sso,
    headers: &HeaderMap,
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    let session = match sso.session(headers, secure).await {
        Ok(session) => session,
        Err(SessionFailure::Missing) => {
            return Ok(html(StatusCode::OK, page("Signed out", "<p>You are not signed in.</p>")));
        }
        Err(SessionFailure::Unavailable) => return Err(ProxyError::SsoUnavailable),
    };
    let token = sso.keys.csrf_token(&session.id);
    let body = format!(
        "<p>Signed in as {}.</p><form method=\"post\" action=\"/.toolgate/logout\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{}\"><button>Sign out everywhere</button></form>",
        escape_html(&session.record.identity.user),
        escape_html(&token)
    );
    Ok(html(StatusCode::OK, page("Sign out", &body)))
}

async fn logout(
    sso: &Sso,
    request: Request<Incoming>,
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    let origin_ok = same_origin_request(&request, secure, true);
    let (parts, body) = request.into_parts();
    let form = Limited::new(body, MAX_FORM).collect().await.map_err(|_| ProxyError::BadRequest)?.to_bytes();
    let token = url::form_urlencoded::parse(&form)
        .find(|(name, _)| name == "csrf")
        .map(|(_, value)| value.into_owned());
    let session = match sso.session(&parts.headers, secure).await {
        Ok(session) => session,
        Err(SessionFailure::Missing) => return Err(ProxyError::CsrfFailed),
        Err(SessionFailure::Unavailable) => return Err(ProxyError::SsoUnavailable),
    };
    if !origin_ok || !token.is_some_and(|token| sso.keys.verify_csrf(&session.id, &token)) {
        return Err(ProxyError::CsrfFailed);
    }
    let identity = &session.record.identity;
    let mut event = AuditEvent::new(EventKind::Logout)
        .actor(&identity.user, identity.email.as_deref(), &identity.groups)
        .decision("success", "logout");
    event.session = Some(sso.session_digest(&session.id));
    sso.audit.record(event).await.map_err(|_| ProxyError::AuditUnavailable)?;
    sso.revoke(&session.id).await.map_err(|_| ProxyError::SsoUnavailable)?;
    sso.record("logout");
    // The provider's session would sign the user straight back in: end it too when it can be.
    let Some(provider_logout) = sso.provider_logout_url(&session.record).await else {
        tracing::info!(outcome = "logout", provider = false, "user signed out");
        return Ok(signed_out_page(secure, SIGNED_OUT_HERE));
    };
    tracing::info!(outcome = "logout", provider = true, "user signed out; ending the provider's session");
    let mut response = Response::new(body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let location = HeaderValue::from_str(&provider_logout).map_err(|_| ProxyError::SsoMisconfigured)?;
    response.headers_mut().insert(header::LOCATION, location);
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    append_cookie(&mut response, cookies::set_cookie(CookieKind::Session, secure, "", 0));
    Ok(response)
}

async fn whoami(sso: &Sso, headers: &HeaderMap, secure: bool) -> Result<Response<ProxyBody>, ProxyError> {
    let via = if headers.contains_key(header::AUTHORIZATION) { "bearer" } else { "session" };
    let identity = caller(sso, headers, secure).await?;
    let body = serde_json::json!({ "user": identity.user, "email": identity.email, "groups": identity.groups, "via": via });
    Ok(json(StatusCode::OK, body.to_string().into()))
}

fn oidc_failure(error: OidcError) -> ProxyError {
    match error {
        OidcError::Unavailable(reason) => {
            tracing::warn!(reason = %reason, "identity provider unavailable");
            ProxyError::SsoUnavailable
        }
        // Discovery logged the details.
        OidcError::Misconfigured(_) => ProxyError::SsoMisconfigured,
        OidcError::Rejected(reason) => {
            tracing::info!(reason = %reason, "sign-in rejected");
            ProxyError::LoginFailed
        }
    }
}

/// `scheme://host[:port]` as the browser addressed this request (for the `Origin` check only).
pub(crate) fn request_origin<B>(request: &Request<B>, secure: bool) -> Option<String> {
    let authority = request_authority(request)?;
    Some(format!("{}://{}", if secure { "https" } else { "http" }, authority.to_ascii_lowercase()))
}

/// State-changing requests must come from this origin's own pages when the browser says where
/// they come from (`Origin`, else `Referer`); with neither, `unsaid_ok` decides.
pub(crate) fn same_origin_request<B>(request: &Request<B>, secure: bool, unsaid_ok: bool) -> bool {
    let Some(expected) = request_origin(request, secure) else { return false };
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|value| value.to_str().ok()) {
        return origin.eq_ignore_ascii_case(&expected);
    }
    if let Some(referer) = headers.get(header::REFERER).and_then(|value| value.to_str().ok()) {
        return referer.to_ascii_lowercase().starts_with(&format!("{expected}/"));
    }
    unsaid_ok
}

pub(crate) fn query_pairs<B>(request: &Request<B>) -> Vec<(String, String)> {
    request
        .uri()
        .query()
        .map_or_else(Vec::new, |query| url::form_urlencoded::parse(query.as_bytes()).into_owned().collect())
}

pub(crate) fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

fn redirect<const N: usize>(location: &str, set_cookies: [Option<HeaderValue>; N]) -> Response<ProxyBody> {
    let mut response = Response::new(body::empty());
    *response.status_mut() = StatusCode::FOUND;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for cookie in set_cookies {
        append_cookie(&mut response, cookie);
    }
    response
}

fn append_cookie(response: &mut Response<ProxyBody>, cookie: Option<HeaderValue>) {
    if let Some(cookie) = cookie {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
}

fn html(status: StatusCode, page: String) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(page));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn json(status: StatusCode, body: bytes::Bytes) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
