//! The user-facing listener: accepts TCP (and TLS) connections, serves HTTP/1.1 and HTTP/2 on
//! them with hyper, and drains in-flight requests on shutdown.
//!
//! Slow clients are cut by the header-read timeout (HTTP/1, and from accept for a connection's
//! first byte) and the TLS handshake timeout; oversized request heads get 431 from hyper's
//! read-buffer limit. Connections past `limits.max_connections` (in all) or
//! `limits.max_connections_per_ip` are closed at accept and counted. Each request reads the
//! gateway in force (`app/reload/`) once; connection settings follow it for new connections.

use crate::app::reload::LiveGateway;
use crate::http::client::ClientInfo;
use crate::net::accept::next_connection;
use crate::net::connections::ConnectionGate;
use crate::net::first_byte::FirstByteDeadline;
use crate::routes;
use crate::state::Gateway;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use prometheus::IntGauge;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Serves `listener` until `shutdown` resolves, then drains for at most the configured grace.
pub async fn serve(
    live: Arc<LiveGateway>,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    // hyper's settings for the gateway they were built from, rebuilt when a reload swaps it.
    let mut settings: Option<(Arc<Gateway>, Arc<auto::Builder<TokioExecutor>>)> = None;
    let graceful = GracefulShutdown::new();
    let gate = Arc::new(ConnectionGate::default());
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = next_connection(&listener, "user") => accepted,
            () = &mut shutdown => break,
        };
        let gateway = live.current();
        let limits = gateway.config.limits;
        let slot = match gate.admit(peer.ip(), limits.max_connections, limits.max_connections_per_ip) {
            Ok(slot) => slot,
            Err(refused) => {
                // Closed before a byte: the open connections keep their service.
                gateway.metrics.connections_refused.with_label_values(&[refused.label()]).inc();
                tracing::debug!(reason = refused.label(), "connection refused at the limit");
                drop(stream);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let builder = match &settings {
            Some((built_for, builder)) if Arc::ptr_eq(built_for, &gateway) => builder.clone(),
            _ => {
                let builder = Arc::new(http_builder(&gateway));
                settings = Some((gateway.clone(), builder.clone()));
                builder
            }
        };
        let connection_guard = ConnectionGuard::new(gateway.metrics.active_connections.clone());
        let handshake_timeout = gateway.config.timeouts.header_read;
        let silent = gateway.metrics.connections_refused.with_label_values(&["silent"]);
        // The header-read budget starts at accept: a connection that never sends a byte is closed.
        let stream = FirstByteDeadline::new(stream, handshake_timeout, Some(silent.clone()));
        let client = ClientInfo { peer: peer.ip(), tls: tls.is_some() };
        let service_live = live.clone();
        // The handler's future is returned as it is, not awaited inside another: hyper moves the
        // service's future into place, and each wrapping would copy it once more.
        let service = service_fn(move |request| routes::handle(service_live.current(), client, request));
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _guard = connection_guard;
            let _slot = slot;
            let Some(acceptor) = tls else {
                let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let _ = watcher.watch(connection.into_owned()).await;
                return;
            };
            // The handshake shares the header-read budget: a client that stalls it is as slow
            // as one that stalls its headers.
            let stream = match tokio::time::timeout(handshake_timeout, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    tracing::debug!(error = %error, "TLS handshake failed");
                    return;
                }
                Err(_elapsed) => {
                    tracing::debug!("TLS handshake timed out");
                    return;
                }
            };
            // After the handshake the first request must come within the same budget.
            let stream = FirstByteDeadline::new(stream, handshake_timeout, Some(silent));
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            let _ = watcher.watch(connection.into_owned()).await;
        });
    }
    drop(listener);
    let gateway = live.current();
    gateway.start_draining();
    let open = graceful.count();
    tracing::info!(open_connections = open, "stopped accepting; draining in-flight requests");
    let grace = gateway.config.timeouts.shutdown_grace;
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("drained"),
        () = tokio::time::sleep(grace) => tracing::warn!(grace_seconds = grace.as_secs(), "drain grace expired; closing remaining connections"),
    }
}

/// hyper's connection settings from the configuration.
fn http_builder(gateway: &Gateway) -> auto::Builder<TokioExecutor> {
    let limits = gateway.config.limits;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(gateway.config.timeouts.header_read)
        .max_buf_size(limits.max_header_bytes)
        .max_headers(limits.max_headers)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX))
        .max_concurrent_streams(256);
    builder
}

/// Counts a connection as open for as long as it lives.
struct ConnectionGuard(IntGauge);

impl ConnectionGuard {
    fn new(gauge: IntGauge) -> Self {
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}
