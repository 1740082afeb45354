//! The request path, top to bottom: route by host → reserved paths → authenticate → upstream
//! request → rewrite or pass through → respond. Each step is a call into the module that owns
//! it; failures become responses in `errors.rs` only.

pub mod reserved;

use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::client::{ClientInfo, browser_scheme, request_authority, request_host};
use crate::http::errors::{ProxyError, error_response};
use crate::http::request_id::RequestId;
use crate::metrics::Route;
use crate::page::{self, PageOrigin, PageUser, Treatment};
use crate::proxy::forwarding;
use crate::sso::identity::Identity;
use crate::sso::{SessionFailure, cookies};
use crate::state::Gateway;
use crate::{
    agent, approvals_http::api, approvals_http::enforcement, openai, page::visibility, proxy::websocket, sso,
};
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, Uri, Version};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// Handles one request from a client; never fails (failures are responses).
pub async fn handle(
    gateway: Arc<Gateway>,
    client: ClientInfo,
    request: Request<Incoming>,
) -> Response<ProxyBody> {
    let started = Instant::now();
    let request_id = RequestId::new();
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %request.method(),
        site = tracing::field::Empty,
        status = tracing::field::Empty,
        latency_ms = tracing::field::Empty,
    );
    async move {
        let host = request_host(&request);
        let entry = host.as_deref().and_then(|host| gateway.site(host));
        let site = entry.map(|entry| entry.site.clone());
        tracing::Span::current().record("site", site.as_ref().map_or("-", |site| site.id.as_str()));
        let (response, route) = match (&site, &gateway.sso, host.as_deref()) {
            (Some(site), _, _) => match forward(&gateway, site, client, request, &request_id).await {
                Ok(answer) => answer,
                Err(error) => (failure(error, Some(site), &request_id), Route::Error),
            },
            // The dashboard, on a host of its own…
            (None, Some(sso), Some(host))
                if gateway.config.dashboard.as_ref().is_some_and(|dashboard| dashboard.host == host) =>
            {
                let response = match &gateway.config.dashboard {
                    Some(dashboard) => {
                        crate::dashboard_http::handle(&gateway, sso, dashboard, client, request, &request_id)
                            .await
                    }
                    None => failure(ProxyError::UnknownHost, None, &request_id),
                };
                (response, Route::Dashboard)
            }
            // …the gateway's own host: the OpenAI-compatible API for agents outside the page…
            (None, Some(sso), Some(host))
                if host == gateway.gateway_host && openai::is_api_path(request.uri().path()) =>
            {
                (openai::handle(&gateway, sso, request, &request_id).await, Route::Agent)
            }
            // …the approvals API for approver groups…
            (None, Some(sso), Some(host))
                if host == gateway.gateway_host && api::is_api_path(request.uri().path()) =>
            {
                (api::handle(&gateway, sso, request, &request_id).await, Route::Agent)
            }
            // …and sign-in.
            (None, Some(sso), Some(host)) if host == gateway.gateway_host => {
                let secure = browser_scheme(request.headers(), client, gateway.is_trusted_proxy(client.peer))
                    == "https";
                match sso::login::gateway_host(sso, &gateway.config.audit.reader_groups, &request, secure)
                    .await
                {
                    Ok(response) => (response, Route::Reserved),
                    Err(error) => (failure(error, None, &request_id), Route::Error),
                }
            }
            (None, _, host) => {
                let error = if host.is_some() { ProxyError::UnknownHost } else { ProxyError::BadRequest };
                (failure(error, None, &request_id), Route::Error)
            }
        };
        let mut response = with_request_id(response, &request_id);
        if client.tls {
            crate::net::tls::add_strict_transport_security(&gateway.config, response.headers_mut());
        }
        let status = response.status();
        let elapsed = started.elapsed();
        let metrics = entry.map_or(gateway.unknown_site_metrics(), |entry| &entry.metrics);
        metrics.record(route, status.as_u16(), elapsed.as_secs_f64());
        let span = tracing::Span::current();
        span.record("status", status.as_u16());
        span.record("latency_ms", elapsed.as_secs_f64() * 1000.0);
        tracing::info!(route = route.label(), "answered");
        response
    }
    .instrument(span)
    .await
}

/// The path for a request whose host names a configured site.
async fn forward(
    gateway: &Gateway,
    site: &Site,
    client: ClientInfo,
    mut request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<(Response<ProxyBody>, Route), ProxyError> {
    let trusted = gateway.is_trusted_proxy(client.peer);
    let browser_host = request_authority(&request).ok_or(ProxyError::BadRequest)?;
    let origin_scheme = browser_scheme(request.headers(), client, trusted);
    let secure = origin_scheme == "https";

    if reserved::is_reserved(request.uri().path()) {
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
        let origin = format!("{origin_scheme}://{browser_host}");
        let caller = match authenticate(gateway, site, &request, &origin, secure).await {
            Ok(Access::Granted(signed_in)) => {
                let (identity, session) = signed_in.map_or((None, None), |(i, s)| (Some(i), Some(s)));
                agent::Caller { identity, session }
            }
            Ok(Access::SignIn(_)) => return Ok((agent::refusal(ProxyError::Unauthenticated), Route::Agent)),
            Err(error) => return Ok((agent::refusal(error), Route::Agent)),
        };
        return Ok((agent::handle(gateway, site, &caller, request, request_id).await, Route::Agent));
    }

    let origin = format!("{origin_scheme}://{browser_host}");
    let signed_in = match authenticate(gateway, site, &request, &origin, secure).await? {
        Access::Granted(signed_in) => signed_in,
        Access::SignIn(redirect) => return Ok((redirect, Route::SignIn)),
    };
    let identity = signed_in.as_ref().map(|(identity, _)| identity);
    let method = request.method().clone();
    let upgrade = websocket::is_upgrade(&request)
        .then(|| request.headers().get(header::UPGRADE).cloned())
        .flatten()
        .map(|value| (value, hyper::upgrade::on(&mut request)));

    let assertion = match (&gateway.sso, &signed_in) {
        (Some(sso), Some((identity, session))) => {
            sso.assertion.for_session(session, identity, site.id.as_str(), crate::support::clock::unix_now())
        }
        _ => None,
    };
    let hop = Hop {
        client,
        trusted,
        browser_host: &browser_host,
        request_id,
        identity,
        assertion: assertion.as_deref(),
    };
    // An agent-marked submission to an approval-gated form goes on only with its approval.
    let request = match enforcement::check(gateway, site, signed_in.as_ref(), request, request_id).await {
        Ok(request) => request,
        Err(refusal) => return Ok((refusal, Route::Error)),
    };
    let upgrade_value = upgrade.as_ref().map(|(value, _)| value.clone());
    let upstream_request = upstream_request(gateway, site, &hop, request, upgrade_value)?;
    let retry = (method == Method::GET && upstream_request.headers().contains_key(header::RANGE))
        .then(|| without_range(&upstream_request));
    let mut response = send_upstream(gateway, site, upstream_request).await?;

    if let Some((value, client_upgrade)) = upgrade
        && response.status() == http::StatusCode::SWITCHING_PROTOCOLS
    {
        forwarding::strip_hop_by_hop(response.headers_mut());
        websocket::restore_upgrade_headers(response.headers_mut(), value);
        return Ok((websocket::tunnel(client_upgrade, response, site.id.to_string()), Route::Upgrade));
    }
    forwarding::strip_hop_by_hop(response.headers_mut());
    cookies::strip_gateway_set_cookies(response.headers_mut());
    let mut treatment = page::treatment(&method, &response);
    if treatment == Treatment::Refetch {
        // A slice of a page cannot be filtered: fetch the whole page instead, once.
        let retry = retry.ok_or(ProxyError::UpstreamProtocol)?;
        response = send_upstream(gateway, site, retry).await?;
        forwarding::strip_hop_by_hop(response.headers_mut());
        cookies::strip_gateway_set_cookies(response.headers_mut());
        treatment = page::treatment(&method, &response);
    }
    match treatment {
        Treatment::Rewrite { .. } => {
            let origin = PageOrigin { scheme: origin_scheme, host: &browser_host };
            let (policy, tools_on) = visibility::for_page(gateway, site, &agent::subject_of(identity));
            let user = PageUser { policy, tools_on };
            let page = page::rewrite(gateway, site, origin, user, response).await.inspect_err(|error| {
                if error.is_upstream() {
                    gateway
                        .metrics
                        .upstream_errors
                        .with_label_values(&[site.id.as_str(), error.reason()])
                        .inc();
                }
            })?;
            Ok((page, Route::Page))
        }
        // The upstream answered a range request for a page with a range again.
        Treatment::Refetch => Err(ProxyError::UpstreamProtocol),
        Treatment::ForbidSniffing => {
            page::forbid_sniffing(&mut response);
            Ok((response, Route::PassThrough))
        }
        Treatment::PassThrough => {
            page::guard_xml_document(&mut response);
            Ok((response, Route::PassThrough))
        }
    }
}

async fn send_upstream(
    gateway: &Gateway,
    site: &Site,
    request: Request<ProxyBody>,
) -> Result<Response<ProxyBody>, ProxyError> {
    gateway.upstreams.send(&site.id, request).await.inspect_err(|error| {
        gateway.metrics.upstream_errors.with_label_values(&[site.id.as_str(), error.reason()]).inc();
    })
}

/// The same bodiless GET without `Range` and `If-Range`.
fn without_range(request: &Request<ProxyBody>) -> Request<ProxyBody> {
    let mut retry = Request::new(crate::http::body::empty());
    *retry.method_mut() = request.method().clone();
    *retry.uri_mut() = request.uri().clone();
    *retry.version_mut() = request.version();
    *retry.headers_mut() = request.headers().clone();
    retry.headers_mut().remove(header::RANGE);
    retry.headers_mut().remove(header::IF_RANGE);
    retry
}

/// What the gateway knows about the hop from the browser.
#[derive(Clone, Copy)]
struct Hop<'a> {
    client: ClientInfo,
    trusted: bool,
    browser_host: &'a str,
    request_id: &'a RequestId,
    identity: Option<&'a Identity>,
    assertion: Option<&'a str>,
}

/// The outcome of authentication for a site request.
enum Access {
    /// Go on, as this user in this session (`None` only with `insecure_no_sso`).
    Granted(Option<(Identity, sso::session::SessionId)>),
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

/// Builds the request the upstream sees: its own URI, HTTP/1.1, hop-by-hop headers gone,
/// forwarding headers rebuilt, encodings restricted, the body under the idle timeout.
fn upstream_request(
    gateway: &Gateway,
    site: &Site,
    hop: &Hop<'_>,
    request: Request<ProxyBody>,
    upgrade: Option<HeaderValue>,
) -> Result<Request<ProxyBody>, ProxyError> {
    let Hop { client, trusted, browser_host, request_id, identity, assertion } = *hop;
    let (mut parts, body) = request.into_parts();
    let path_and_query = parts.uri.path_and_query().map_or("/", |value| value.as_str());
    parts.uri = Uri::builder()
        .scheme(site.upstream.scheme.clone())
        .authority(site.upstream.authority.clone())
        .path_and_query(path_and_query)
        .build()
        .map_err(|_| ProxyError::BadRequest)?;
    parts.version = Version::HTTP_11;
    let headers = &mut parts.headers;
    join_cookie_headers(headers);
    forwarding::strip_hop_by_hop(headers);
    headers.remove(header::HOST);
    if site.preserve_host {
        let host = HeaderValue::from_str(browser_host).map_err(|_| ProxyError::BadRequest)?;
        headers.insert(header::HOST, host);
    }
    forwarding::set_forwarded(headers, client, trusted, browser_host);
    // Sites learn who the user is from the gateway only, and never see the gateway's cookies.
    forwarding::strip_identity_headers(headers);
    cookies::strip_gateway_cookies(headers);
    if let Some(identity) = identity {
        forwarding::set_identity_headers(headers, identity, assertion);
    }
    forwarding::restrict_accept_encoding(headers);
    if let Ok(value) = HeaderValue::from_str(request_id.as_str()) {
        headers.insert("x-request-id", value);
    }
    if let Some(upgrade) = upgrade {
        websocket::restore_upgrade_headers(headers, upgrade);
    }
    let body = IdleTimeout::new(body, gateway.config.timeouts.body_idle).boxed_unsync();
    Ok(Request::from_parts(parts, body))
}

fn failure(error: ProxyError, site: Option<&Arc<Site>>, request_id: &RequestId) -> Response<ProxyBody> {
    if error.status().is_server_error() {
        tracing::warn!(reason = error.reason(), "request failed");
    } else {
        tracing::debug!(reason = error.reason(), "request refused");
    }
    error_response(error, site.map(|site| &site.id), request_id.as_str())
}

fn with_request_id(mut response: Response<ProxyBody>, request_id: &RequestId) -> Response<ProxyBody> {
    if let Ok(value) = HeaderValue::from_str(request_id.as_str()) {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

/// HTTP/2 clients may split `Cookie` into several fields; HTTP/1.1 upstreams need one
/// (RFC 9113 §8.2.3).
fn join_cookie_headers(headers: &mut http::HeaderMap) {
    if headers.get_all(header::COOKIE).iter().count() < 2 {
        return;
    }
    let joined = headers
        .get_all(header::COOKIE)
        .iter()
        .map(|value| value.as_bytes())
        .collect::<Vec<_>>()
        .join(&b"; "[..]);
    if let Ok(value) = HeaderValue::from_bytes(&joined) {
        headers.insert(header::COOKIE, value);
    }
}
