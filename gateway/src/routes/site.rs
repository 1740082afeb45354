//! A site host's requests: its reserved paths under `/.toolgate/` are answered here and never
//! forwarded (sign-in handoff, logout and whoami in `sso::login::site_host`; the agent API in
//! `agent/`, after authentication like a page, with JSON errors; the runtime script in
//! `reserved`); everything else is authenticated (a session, the site's allowed groups) and
//! handed to `proxy::forward`.

use super::reserved;
use crate::agent;
use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::http::client::{ClientInfo, browser_scheme, origin, request_authority};
use crate::http::errors::ProxyError;
use crate::http::request_id::RequestId;
use crate::metrics::Route;
use crate::proxy::{self, Browser, SignedIn};
use crate::sso::{self, SessionFailure};
use crate::state::Gateway;
use http::{Request, Response};
use hyper::body::Incoming;

/// Answers a request whose host names a configured site.
pub(super) async fn handle(
    gateway: &Gateway,
    site: &Site,
    client: ClientInfo,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<(Response<ProxyBody>, Route), ProxyError> {
    let trusted = gateway.is_trusted_proxy(client.peer);
    let browser_host = request_authority(&request).ok_or(ProxyError::BadRequest)?;
    let origin_scheme = browser_scheme(request.headers(), client, trusted);
    let secure = origin_scheme == "https";

    // Another spelling of the gateway's namespace must not reach a site that normalises paths.
    if reserved::is_disguised_reserved(request.uri().path()) {
        return Err(ProxyError::BadRequest);
    }
    if reserved::is_reserved(request.uri().path()) {
        // Boxed: the gateway's own paths have large futures that every page request would
        // otherwise carry (and copy) inline.
        let asked = Asked { site, secure, origin_scheme, browser_host: &browser_host, request_id };
        return Box::pin(reserved_path(gateway, &asked, request)).await;
    }

    let origin = origin(origin_scheme, &browser_host);
    let signed_in = match authenticate(gateway, site, &request, &origin, secure).await? {
        Access::Granted(signed_in) => signed_in,
        Access::SignIn(redirect) => return Ok((redirect, Route::SignIn)),
    };
    let browser =
        Browser { client, trusted, host: &browser_host, scheme: origin_scheme, origin: &origin, request_id };
    proxy::forward(gateway, site, &browser, signed_in, request).await
}

/// What `handle` found out about a request for a reserved path.
struct Asked<'a> {
    site: &'a Site,
    secure: bool,
    origin_scheme: &'static str,
    browser_host: &'a str,
    request_id: &'a RequestId,
}

/// A request under `/.toolgate/` on a site host: the sign-in handoff, the agent API or the
/// runtime; never forwarded.
async fn reserved_path(
    gateway: &Gateway,
    asked: &Asked<'_>,
    mut request: Request<Incoming>,
) -> Result<(Response<ProxyBody>, Route), ProxyError> {
    let Asked { site, secure, origin_scheme, browser_host, request_id } = *asked;
    if let Some(sso) = &gateway.sso {
        request = match sso::login::site_host(sso, request, secure).await {
            Ok(answer) => return Ok((answer?, Route::Reserved)),
            Err(request) => request,
        };
    }
    if !agent::is_agent_path(request.uri().path()) {
        return Ok((reserved::respond(&request)?, Route::Reserved));
    }
    // The agent API acts for the signed-in user: authenticate, but never redirect.
    let origin = origin(origin_scheme, browser_host);
    let caller = match authenticate(gateway, site, &request, &origin, secure).await {
        Ok(Access::Granted(signed_in)) => {
            let (identity, session) = signed_in.map_or((None, None), |(i, s)| (Some(i), Some(s)));
            agent::Caller { identity, session }
        }
        Ok(Access::SignIn(_)) => return Ok((agent::refusal(ProxyError::Unauthenticated), Route::Agent)),
        Err(error) => return Ok((agent::refusal(error), Route::Agent)),
    };
    Ok((agent::handle(gateway, site, &caller, request, request_id).await, Route::Agent))
}

/// The outcome of authentication for a site request.
pub(super) enum Access {
    /// Go on, as this user in this session (`None` only with `insecure_no_sso`).
    Granted(SignedIn),
    /// Not signed in: this response sends the browser to sign in.
    SignIn(Response<ProxyBody>),
}

/// Nothing reaches a site without a session, and only for the site's allowed groups.
async fn authenticate(
    gateway: &Gateway,
    site: &Site,
    request: &Request<Incoming>,
    origin: &str,
    secure: bool,
) -> Result<Access, ProxyError> {
    let Some(sso) = &gateway.sso else { return Ok(Access::Granted(None)) };
    let session = match sso.session(request.headers(), secure).await {
        Ok(session) => session,
        Err(SessionFailure::Unavailable) => return Err(ProxyError::SsoUnavailable),
        Err(SessionFailure::Missing) => {
            let path = request.uri().path_and_query().map_or("/", |path| path.as_str());
            let site_url = format!("{origin}{path}");
            let redirect =
                sso::login::login_redirect(sso, request.headers(), request.method(), &site_url, secure)?;
            return Ok(Access::SignIn(redirect));
        }
    };
    let identity = session.record.identity;
    if site.allow_groups.as_ref().is_some_and(|allowed| !identity.in_any(allowed)) {
        let event = AuditEvent::new(EventKind::AccessDenied)
            .actor(&identity.user, identity.email.as_deref(), &identity.groups)
            .site(site.id.as_str())
            .decision("deny", "site_access_rule");
        gateway.audit.record(event).await.map_err(|_| ProxyError::AuditUnavailable)?;
        return Err(ProxyError::Forbidden);
    }
    Ok(Access::Granted(Some((identity, session.id))))
}
