//! The pooled clients that talk to internal sites, and how their failures are classified.
//!
//! One client per distinct TLS setting: sites without `[sites.<id>.tls]` share the default one
//! (rustls with the system's roots), sites with equal settings share theirs (`tls::upstream`).
//! HTTP/1.1 over plain TCP or TLS, connections kept alive per upstream (`net::pool`). The connect
//! timeout lives in the connector; the time-to-headers timeout runs here, from the moment the
//! request body has been sent whole. Bodies are bounded only by idle time.

use crate::config::{Config, SiteId, Timeouts};
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::errors::ProxyError;
use crate::net::pool::{Pool, PoolError};
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// The clients for every site of one configuration (rebuilt, files re-read, when it reloads).
#[derive(Clone)]
pub struct UpstreamClients {
    default: UpstreamClient,
    by_site: HashMap<SiteId, UpstreamClient>,
}

impl UpstreamClients {
    /// Builds the default client and one per distinct `[sites.<id>.tls]`, reading the CA
    /// bundles and client certificates those name.
    pub fn new(config: &Config) -> Result<Self, crate::net::tls::TlsError> {
        let default = UpstreamClient::new(config.timeouts, client_tls_config());
        let mut distinct: HashMap<&crate::config::UpstreamTls, UpstreamClient> = HashMap::new();
        let mut by_site = HashMap::new();
        for site in &config.sites {
            let Some(tls) = &site.tls else { continue };
            let client = match distinct.get(tls) {
                Some(client) => client.clone(),
                None => {
                    let tls_config = crate::net::tls::upstream::client_config(&site.id, tls)?;
                    let client = UpstreamClient::new(config.timeouts, tls_config);
                    distinct.insert(tls, client.clone());
                    client
                }
            };
            by_site.insert(site.id.clone(), client);
        }
        Ok(Self { default, by_site })
    }

    /// Sends a request to `site`'s upstream through that site's client (see `UpstreamClient::send`).
    pub async fn send(
        &self,
        site: &SiteId,
        request: Request<ProxyBody>,
    ) -> Result<Response<ProxyBody>, ProxyError> {
        self.by_site.get(site).unwrap_or(&self.default).send(request).await
    }
}

/// How long a kept-alive upstream connection may stay idle before it is closed.
const IDLE_CONNECTION: Duration = Duration::from_secs(90);

/// How many idle connections are kept per upstream.
const MAX_IDLE_PER_UPSTREAM: usize = 256;

/// One pooled client.
#[derive(Clone)]
pub struct UpstreamClient {
    pool: Pool<HttpsConnector<HttpConnector>>,
    timeouts: Timeouts,
}

impl UpstreamClient {
    /// Builds a client that speaks TLS with `tls`.
    pub fn new(timeouts: Timeouts, tls: rustls::ClientConfig) -> Self {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(timeouts.upstream_connect));
        http.set_keepalive(Some(Duration::from_secs(60)));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Self { pool: Pool::new(connector, IDLE_CONNECTION, MAX_IDLE_PER_UPSTREAM), timeouts }
    }

    /// Sends a request and waits for the response headers. The time-to-headers timeout starts
    /// once the request body has been sent whole: a flowing upload is bounded only by the idle
    /// timeout. A request whose own body broke (bad chunked framing, a stalled or vanished
    /// client) is the client's error (400), not the upstream's. The response body is wrapped in
    /// the idle timeout.
    pub async fn send(&self, request: Request<ProxyBody>) -> Result<Response<ProxyBody>, ProxyError> {
        if http_body::Body::is_end_stream(request.body()) {
            // Nothing follows the head (most GETs): the headers are due from now, and there is
            // no body whose progress to follow.
            let response = tokio::time::timeout(self.timeouts.upstream_headers, self.pool.send(request))
                .await
                .map_err(|_| ProxyError::UpstreamHeadersTimeout)?
                .map_err(|error| classify(&error))?;
            return Ok(response.map(|body| idle_body(body, self.timeouts.body_idle)));
        }
        let sending = Arc::new(Sending::default());
        let request =
            request.map(|body| SentBody { inner: body, sending: Arc::clone(&sending) }.boxed_unsync());
        let exchange = self.pool.send(request);
        tokio::pin!(exchange);
        let headers_due = async {
            sending.sent().await;
            tokio::time::sleep(self.timeouts.upstream_headers).await;
        };
        let response = tokio::select! {
            result = &mut exchange => result.map_err(|error| {
                if sending.failed() { ProxyError::BadRequest } else { classify(&error) }
            })?,
            () = headers_due => return Err(ProxyError::UpstreamHeadersTimeout),
        };
        Ok(response.map(|body| idle_body(body, self.timeouts.body_idle)))
    }
}

/// How far a request body got: sent whole, or broken on the client's side.
#[derive(Default)]
struct Sending {
    done: AtomicBool,
    failed: AtomicBool,
    changed: Notify,
}

impl Sending {
    /// Resolves once the body has been sent whole (never for a body that broke).
    async fn sent(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.done.load(Ordering::Acquire) && !self.failed() {
                return;
            }
            changed.await;
        }
    }

    fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    fn finish(&self, failed: bool) {
        self.failed.fetch_or(failed, Ordering::AcqRel);
        self.done.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }
}

/// A request body on its way to the upstream, telling `Sending` how far it got.
struct SentBody {
    inner: ProxyBody,
    sending: Arc<Sending>,
}

impl http_body::Body for SentBody {
    type Data = bytes::Bytes;
    type Error = crate::http::body::BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            std::task::Poll::Ready(None) => self.sending.finish(false),
            std::task::Poll::Ready(Some(Err(_))) => self.sending.finish(true),
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let end = self.inner.is_end_stream();
        if end {
            self.sending.finish(false);
        }
        end
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Wraps an incoming body in the idle timeout and boxes it.
pub fn idle_body(body: Incoming, idle: Duration) -> ProxyBody {
    IdleTimeout::new(body, idle).boxed_unsync()
}

/// TLS settings for outgoing connections (sites and the identity provider): the system's roots.
pub fn client_tls_config() -> rustls::ClientConfig {
    let tls = rustls::ClientConfig::builder_with_provider(crate::net::tls::crypto_provider())
        .with_safe_default_protocol_versions()
        .map(|builder| builder.with_root_certificates(crate::net::tls::system_roots()).with_no_client_auth());
    match tls {
        Ok(config) => config,
        // The default provider always supports the default protocol versions.
        Err(error) => unreachable!("aws-lc-rs supports TLS 1.2 and 1.3: {error}"),
    }
}

/// Maps a pool error to the reason the user and the metrics see.
fn classify(error: &PoolError) -> ProxyError {
    let (mut current, connecting): (Option<&(dyn std::error::Error + 'static)>, bool) = match error {
        PoolError::NoOrigin => return ProxyError::BadRequest,
        PoolError::Connect(error) => (Some(error.as_ref()), true),
        PoolError::Exchange(error) => (Some(error), false),
    };
    let mut saw_dns = false;
    while let Some(error) = current {
        if error.is::<rustls::Error>() {
            return ProxyError::UpstreamTls;
        }
        saw_dns |= error.to_string().starts_with("dns error");
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                return ProxyError::UpstreamRefused;
            }
            Some(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                return ProxyError::UpstreamConnectTimeout;
            }
            // `io::Error::source` skips the error it wraps; the wrapped error is what tells a
            // TLS failure (tokio-rustls wraps `rustls::Error`) from a network one.
            Some(io) => match io.get_ref() {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => std::error::Error::source(io),
            },
            None => error.source(),
        };
    }
    if saw_dns || connecting { ProxyError::UpstreamUnreachable } else { ProxyError::UpstreamProtocol }
}
