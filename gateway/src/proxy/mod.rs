//! Forwarding to a site, once `routes` has authenticated the request: the request the upstream
//! sees (URI, forwarding and identity headers, the signed assertion, the body under the idle
//! timeout), the gated-form check, a WebSocket tunnel for a `101`, and the response by its
//! treatment (a page goes to `page::rewrite`, anything else streams through). `forwarding` owns
//! the header rules, `submissions` the watch on agents' form submissions and `websocket` the
//! tunnels.
//!
//! Layer 6 of the gateway (ARCHITECTURE.md, "Code map"): may import `agent`, `approvals_http`,
//! `config`, `http`, `metrics`, `net`, `outcomes`, `page`, `sso`, `state`, `support`.

pub mod forwarding;
pub mod redirects;
pub mod submissions;
pub mod websocket;

use crate::agent;
use crate::approvals_http::enforcement;
use crate::config::Site;
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::client::ClientInfo;
use crate::http::errors::ProxyError;
use crate::http::request_id::RequestId;
use crate::metrics::Route;
use crate::page::{self, PageOrigin, PageUser, Treatment, visibility};
use crate::sso::cookies;
use crate::sso::identity::Identity;
use crate::sso::session::SessionId;
use crate::state::Gateway;
use http::header::{self, HeaderValue};
use http::uri::PathAndQuery;
use http::{Method, Request, Response, Uri, Version};
use http_body_util::BodyExt;
use hyper::body::Incoming;

/// Who is signed in for a request (`None` only with `insecure_no_sso`).
pub type SignedIn = Option<(Identity, SessionId)>;

/// What the gateway knows about the browser's side of a request.
#[derive(Clone, Copy)]
pub struct Browser<'a> {
    /// The connection it came on.
    pub client: ClientInfo,
    /// Whether its peer is a configured trusted proxy.
    pub trusted: bool,
    /// The authority the browser addressed (port included).
    pub host: &'a str,
    /// The scheme the browser used.
    pub scheme: &'static str,
    /// Both together, `scheme://host`: the site's public origin.
    pub origin: &'a str,
    /// The request's id.
    pub request_id: &'a RequestId,
}

/// Sends a site request on: the upstream request (`upstream_request`), a WebSocket tunnel for a
/// `101`, and the response as its treatment says (a page rewritten, anything else passed on).
pub async fn forward(
    gateway: &Gateway,
    site: &Site,
    browser: &Browser<'_>,
    signed_in: SignedIn,
    mut request: Request<Incoming>,
) -> Result<(Response<ProxyBody>, Route), ProxyError> {
    let Browser { client, trusted, host: browser_host, scheme: origin_scheme, origin: public, request_id } =
        *browser;
    let page_path = request.uri().path().to_owned();
    let identity = signed_in.as_ref().map(|(identity, _)| identity);
    let method = request.method().clone();
    // Read before the request goes upstream, which asks for its own codings.
    let preferred = page::compression::preferred(&gateway.config.compression, request.headers());
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
    let hop = Hop { client, trusted, browser_host, request_id, identity, assertion: assertion.as_deref() };
    // An agent's submission (or the request after its redirect) is watched for the site's answer.
    let requester =
        submissions::Requester { site, signed_in: signed_in.as_ref(), request_id: request_id.as_str() };
    let watch = submissions::watch(gateway, &requester, &request, origin_scheme == "https");
    // An agent-marked submission to an approval-gated form goes on only with its approval.
    let request = match enforcement::check(gateway, site, signed_in.as_ref(), request, request_id).await {
        Ok(request) => request,
        Err(mut refusal) => {
            if let Some(watch) = watch {
                watch.refused(&mut refusal);
            }
            return Ok((refusal, Route::Error));
        }
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
    response_headers(&mut response, site, public);
    let mut treatment = page::treatment(&method, &response);
    if treatment == Treatment::Refetch {
        // A slice of a page cannot be filtered: fetch the whole page instead, once.
        let retry = retry.ok_or(ProxyError::UpstreamProtocol)?;
        response = send_upstream(gateway, site, retry).await?;
        response_headers(&mut response, site, public);
        treatment = page::treatment(&method, &response);
    }
    let is_page = matches!(treatment, Treatment::Rewrite { .. });
    let answer_watch = watch.and_then(|watch| watch.answer(site, &mut response, public, is_page));
    match treatment {
        Treatment::Rewrite { .. } => {
            let origin = PageOrigin { scheme: origin_scheme, host: browser_host, path: &page_path };
            let subject = agent::subject_of(identity);
            let (policy, tools_on) = visibility::for_page(gateway, site, &subject, &page_path);
            let user = PageUser { policy, tools_on };
            // Boxed: a page's rewrite is a large future that every other response would carry.
            let page =
                Box::pin(page::rewrite(gateway, site, origin, user, preferred, response, answer_watch))
                    .await
                    .inspect_err(|error| {
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
        Treatment::XmlDocument => {
            page::guard_xml_document(&mut response);
            Ok((response, Route::PassThrough))
        }
        Treatment::PassThrough => Ok((response, Route::PassThrough)),
    }
}

/// The response headers the browser may see: hop-by-hop headers and gateway cookies gone, the
/// upstream's own address replaced by the site's public origin.
fn response_headers(response: &mut Response<ProxyBody>, site: &Site, public: &str) {
    let headers = response.headers_mut();
    forwarding::strip_hop_by_hop(headers);
    cookies::strip_gateway_set_cookies(headers);
    redirects::rewrite_to_public(headers, &site.upstream, public);
}

async fn send_upstream(
    gateway: &Gateway,
    site: &Site,
    request: Request<ProxyBody>,
) -> Result<Response<ProxyBody>, ProxyError> {
    gateway.upstreams.send(&site.id, request).await.inspect_err(|error| {
        // A request whose own body broke is the client's error, not the site's.
        if error.is_upstream() {
            gateway.metrics.upstream_errors.with_label_values(&[site.id.as_str(), error.reason()]).inc();
        }
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
    // A reverse proxy opens no tunnels: CONNECT names no resource of the site's.
    if parts.method == Method::CONNECT {
        return Err(ProxyError::BadRequest);
    }
    // The browser's path and query as hyper parsed them (not parsed again), on the site's
    // scheme and authority.
    let mut uri = std::mem::take(&mut parts.uri).into_parts();
    uri.scheme = Some(site.upstream.scheme.clone());
    uri.authority = Some(site.upstream.authority.clone());
    uri.path_and_query = Some(uri.path_and_query.unwrap_or_else(|| PathAndQuery::from_static("/")));
    parts.uri = Uri::from_parts(uri).map_err(|_| ProxyError::BadRequest)?;
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
    forwarding::strip_identity_headers(headers, &gateway.config.server.identity_headers);
    forwarding::strip_underscore_lookalikes(headers);
    cookies::strip_gateway_cookies(headers);
    if let Some(identity) = identity {
        forwarding::set_identity_headers(headers, identity, assertion);
    }
    forwarding::restrict_accept_encoding(headers);
    request_id.stamp(headers);
    if let Some(upgrade) = upgrade {
        websocket::restore_upgrade_headers(headers, upgrade);
    }
    let body = IdleTimeout::new(body, gateway.config.timeouts.body_idle).boxed_unsync();
    Ok(Request::from_parts(parts, body))
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
