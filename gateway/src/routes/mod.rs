//! One router: every request is mapped by its host and path to the handler that owns it, in one
//! table (`destination`), and answered; `handle` adds the request id, the access-log line, HSTS
//! and the metrics around every answer, and turns failures into responses (`http::errors`).
//!
//! | host | path | handler |
//! |---|---|---|
//! | a configured site | `/.toolgate/…` | `site`: sign-in handoff and logout (`sso::login`), the agent API (`agent`), the runtime (`reserved`) |
//! | a configured site | anything else | `site` (authentication) → `proxy::forward` |
//! | `[dashboard] host` | any | `dashboard_http` |
//! | the gateway's host | `/v1/…`, `/sites/{site}/v1/…` | `openai` |
//! | the gateway's host | `/.toolgate/approvals…` | `approvals_http::api` |
//! | the gateway's host | `/.toolgate/audit/records` | `sso::audit_api` |
//! | the gateway's host | `/.toolgate/backchannel-logout` | `sso::backchannel` (the provider's logout tokens) |
//! | the gateway's host | anything else | `sso::login::gateway_host` (login, callback, signed-out page, keys) |
//! | any other host, or none | | 404 / 400 |
//!
//! Without SSO (`insecure_no_sso`) only site hosts are served. Only `app` (the listener)
//! imports the router.
//!
//! Layer 7 of the gateway (ARCHITECTURE.md, "Code map"): may import every layer below it.

pub mod reserved;
mod site;

use crate::approvals_http::api;
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::http::client::{ClientInfo, browser_scheme, request_host};
use crate::http::errors::{ProxyError, error_response};
use crate::http::request_id::RequestId;
use crate::metrics::Route;
use crate::state::Gateway;
use crate::{dashboard_http, openai, sso};
use http::{Request, Response};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

/// Where a request goes, from its host and path alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Destination {
    /// A configured site: its reserved paths, then the upstream.
    Site,
    /// The dashboard, on a host of its own.
    Dashboard,
    /// The OpenAI-compatible API, for agents outside the page.
    OpenAi,
    /// The approvals API for approver groups.
    Approvals,
    /// The audit query API for reader groups.
    AuditRecords,
    /// OpenID Connect back-channel logout, from the provider.
    BackchannelLogout,
    /// Sign-in on the gateway's host: login, callback, keys.
    SignIn,
    /// A host the gateway does not serve, or no host at all.
    Unknown { host_given: bool },
}

/// The routing table (see the module docs). `site_known`: the host names a configured site.
fn destination(gateway: &Gateway, site_known: bool, host: Option<&str>, path: &str) -> Destination {
    if site_known {
        return Destination::Site;
    }
    let Some(host) = host else { return Destination::Unknown { host_given: false } };
    if gateway.sso.is_none() {
        return Destination::Unknown { host_given: true };
    }
    if gateway.config.dashboard.as_ref().is_some_and(|dashboard| dashboard.host == host) {
        Destination::Dashboard
    } else if host != gateway.gateway_host {
        Destination::Unknown { host_given: true }
    } else if openai::is_api_path(path) {
        Destination::OpenAi
    } else if api::is_api_path(path) {
        Destination::Approvals
    } else if path == sso::audit_api::PATH {
        Destination::AuditRecords
    } else if path == sso::backchannel::PATH {
        Destination::BackchannelLogout
    } else {
        Destination::SignIn
    }
}

/// Handles one request from a client; never fails (failures are responses), hence `Infallible`,
/// which hyper's service wants.
///
/// The future is returned instrumented, not awaited inside another: it is moved into place whole,
/// and every wrapping would copy it once more.
pub fn handle(
    gateway: Arc<Gateway>,
    client: ClientInfo,
    request: Request<Incoming>,
) -> impl Future<Output = Result<Response<ProxyBody>, Infallible>> + Send {
    let started = Instant::now();
    let request_id = RequestId::new();
    let host = request_host(&request);
    let entry = host.as_deref().and_then(|host| gateway.site(host)).cloned();
    let site = entry.as_ref().map(|entry| entry.site.clone());
    // Every field is known when the span opens, so the log formats the span once; the answer's
    // status and latency go on the `answered` line itself.
    let span = tracing::info_span!(
        "request",
        request_id = %request_id,
        method = %request.method(),
        site = site.as_ref().map_or("-", |site| site.id.as_str()),
    );
    async move {
        let gateway = &gateway;
        let destination = destination(gateway, site.is_some(), host.as_deref(), request.uri().path());
        // A `/v1` request names its site in its base URL or a header: its metrics go to that
        // site (a configured id only, so labels stay bounded).
        let entry = entry.or_else(|| {
            let named = matches!(destination, Destination::OpenAi)
                .then(|| openai::named_site(request.uri().path(), request.headers()))
                .flatten()?;
            let site = gateway.config.sites.iter().find(|site| site.id.as_str() == named)?;
            gateway.site(&site.host).cloned()
        });
        let secure =
            browser_scheme(request.headers(), client, gateway.is_trusted_proxy(client.peer)) == "https";
        let failed = |error| (failure(error, site.as_ref(), &request_id), Route::Error);
        // Every branch but the sites' is boxed: a request's future is as large as its largest
        // branch, and it is moved whole into place, so the hot path keeps it small.
        let (response, route) = match (destination, &site, &gateway.sso) {
            (Destination::Site, Some(site), _) => {
                site::handle(gateway, site, client, request, &request_id).await.unwrap_or_else(failed)
            }
            (Destination::Dashboard, _, Some(sso)) => match &gateway.config.dashboard {
                Some(dashboard) => (
                    Box::pin(dashboard_http::handle(gateway, sso, dashboard, client, request, &request_id))
                        .await,
                    Route::Dashboard,
                ),
                None => failed(ProxyError::UnknownHost),
            },
            (Destination::OpenAi, _, Some(sso)) => {
                (Box::pin(openai::handle(gateway, sso, request, &request_id)).await, Route::Agent)
            }
            (Destination::Approvals, _, Some(sso)) => {
                (Box::pin(api::handle(gateway, sso, request, &request_id)).await, Route::Agent)
            }
            (Destination::AuditRecords, _, Some(sso)) => {
                let readers = &gateway.config.audit.reader_groups;
                match Box::pin(sso::audit_api::handle(sso, readers, &request, secure)).await {
                    Ok(response) => (response, Route::Reserved),
                    Err(error) => failed(error),
                }
            }
            (Destination::BackchannelLogout, _, Some(sso)) => {
                (Box::pin(sso::backchannel::handle(sso, request)).await, Route::Reserved)
            }
            (Destination::SignIn, _, Some(sso)) => {
                match Box::pin(sso::login::gateway_host(sso, &request, secure)).await {
                    Ok(response) => (response, Route::Reserved),
                    Err(error) => failed(error),
                }
            }
            (Destination::Unknown { host_given: false }, _, _) => failed(ProxyError::BadRequest),
            _ => failed(ProxyError::UnknownHost),
        };
        let mut response = with_request_id(response, &request_id);
        if client.tls {
            crate::net::tls::add_strict_transport_security(&gateway.config, response.headers_mut());
        }
        let status = response.status();
        let elapsed = started.elapsed();
        let metrics = entry.as_ref().map_or(gateway.unknown_site_metrics(), |entry| &entry.metrics);
        metrics.record(route, status.as_u16(), elapsed.as_secs_f64());
        tracing::info!(
            route = route.label(),
            status = status.as_u16(),
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            "answered"
        );
        Ok(response)
    }
    .instrument(span)
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
    request_id.stamp(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future a function returns, without calling it.
    fn output_size<A, B, C, F>(_: fn(A, B, C) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn a_requests_future_stays_small() {
        // hyper moves every request's future into place whole. Awaiting the large, rare
        // branches inline (the dashboard, the relay, sign-in, a gated form's check) made it
        // 12 KB (11,984 bytes), and its copies the largest cost of a pass-through request;
        // those branches are boxed. The upstream exchange is carried inline (about 900 bytes:
        // the request and hyper's send): hyper-util's pool allocated it anew for each request.
        let size = output_size(handle);
        assert!(size <= 6144, "a request's future is {size} bytes");
    }
}
