//! The admin listener: `/healthz` (the process is alive), `/readyz` (it accepts traffic; 503
//! while draining, and while the audit chain is found damaged), `/metrics` (Prometheus), `/inventory` (the tool inventory as JSON) and
//! `POST /backup` (`backup.rs`: loopback and token only). It binds a separate address
//! that is never exposed to users.
//!
//! Layer 5 of the gateway (ARCHITECTURE.md, "Code map"): may import `audit`, `config`, `http`,
//! `net`, `state`, `store`, `support`.

pub mod backup;

use crate::http::body::ProxyBody;
use crate::http::text;
use crate::net::accept::next_connection;
use crate::state::Gateway;
use backup::BackupAccess;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Serves the admin endpoints until `shutdown` resolves. The backup token is written before
/// this returns (not when the future first runs), so it exists once the gateway has started.
pub fn serve(
    gateway: Arc<Gateway>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> impl Future<Output = ()> {
    let backups = Arc::new(BackupAccess::prepare(&gateway.config.store));
    accept(gateway, listener, shutdown, backups)
}

async fn accept(
    gateway: Arc<Gateway>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    backups: Arc<BackupAccess>,
) {
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = next_connection(&listener, "admin") => accepted,
            () = &mut shutdown => {
                backups.withdraw();
                return;
            }
        };
        let gateway = gateway.clone();
        let backups = backups.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let gateway = gateway.clone();
                let backups = backups.clone();
                async move {
                    Ok::<_, Infallible>(if request.uri().path() == "/backup" {
                        backup::handle(&gateway, &backups, peer, &request).await
                    } else {
                        respond(&gateway, &request).await
                    })
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(5))
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn respond(gateway: &Gateway, request: &Request<Incoming>) -> Response<ProxyBody> {
    if request.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
    }
    match request.uri().path() {
        "/healthz" => text(StatusCode::OK, "ok\n"),
        "/readyz" if gateway.is_draining() => text(StatusCode::SERVICE_UNAVAILABLE, "draining\n"),
        "/readyz" if gateway.dashboard.chain.is_damaged() => {
            text(StatusCode::SERVICE_UNAVAILABLE, "audit chain damaged: run `toolgate audit verify`\n")
        }
        "/readyz" => match gateway.store.ping().await {
            Ok(()) => text(StatusCode::OK, "ready\n"),
            // The reason names the database's failure, never its password (it is not in the URL).
            Err(error) => text(StatusCode::SERVICE_UNAVAILABLE, format!("store unreachable: {error}\n")),
        },
        "/metrics" => {
            let mut response = text(StatusCode::OK, gateway.metrics.render());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        "/inventory" => inventory(gateway, request).await,
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// `GET /inventory[?site=<id>]`: the tool inventory as JSON (`{"entries": [...],
/// "sandboxed_pages": {site: {count, last_seen, recent}}}`), for the dashboard and for operators.
async fn inventory(gateway: &Gateway, request: &Request<Incoming>) -> Response<ProxyBody> {
    let site = request.uri().query().and_then(|query| {
        url::form_urlencoded::parse(query.as_bytes()).find(|(key, _)| key == "site").map(|(_, value)| value)
    });
    // Pages whose CSP sandbox keeps the runtime out (their tools are off), per configured site.
    let mut sandboxed = std::collections::BTreeMap::new();
    for id in gateway.config.sites.iter().map(|configured| configured.id.as_str()) {
        if site.as_deref().is_none_or(|wanted| wanted == id)
            && let Ok(Some(pages)) = gateway.inventory.sandboxed(id).await
        {
            sandboxed.insert(id, pages);
        }
    }
    match gateway.inventory.list(site.as_deref()).await {
        Ok(entries) => {
            // Pages whose CSP sandbox keeps the runtime out: their tools are off.
            let body = serde_json::json!({ "entries": entries, "sandboxed_pages": sandboxed }).to_string();
            let mut response = text(StatusCode::OK, body);
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        Err(error) => {
            tracing::warn!(error = %error, "inventory unreadable");
            text(StatusCode::SERVICE_UNAVAILABLE, "inventory unavailable\n")
        }
    }
}
