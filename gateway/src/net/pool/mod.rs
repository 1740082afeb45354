//! Keep-alive connections to upstream sites: which connection a request goes on.
//!
//! hyper's connection-level client (`hyper::client::conn::http1`) speaks HTTP/1.1; the connector
//! (hyper-util's TCP connector with its connect timeout, wrapped by hyper-rustls for `https`)
//! opens connections. This module only chooses: the most recently used idle connection to the
//! same scheme and authority that is still open and has been idle for less than the idle
//! timeout, or else a new one.
//!
//! - A connection goes back to the pool when hyper says it can take the next request (the answer
//!   has been read whole), never while an answer is still streaming. One that closed, broke or
//!   was upgraded (WebSocket) is dropped.
//! - A request that met a pooled connection which closed before the request was written is sent
//!   again on the next connection. A request that was written, even in part, is never sent twice.
//! - At most `max_idle` connections per origin stay idle; a sweep every half idle timeout closes
//!   the ones past it, so an idle gateway does not hold upstream connections forever.
//!
//! It replaces hyper-util's general pool on the proxy's hot path: that pool races each checkout
//! against a new connection, hashes origins several times a request and keeps waiters, which
//! cost a fifth of a minimal proxy's instructions a request (bench/README.md, "Connections to
//! the upstream").

use crate::http::body::{BoxError, ProxyBody};
use crate::http::client::host_with_port;
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderValue, Request, Response, Uri, header};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};
use tower_service::Service;

#[cfg(test)]
mod tests;

/// Why a request got no answer from the pool.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The URI has no `http`/`https` scheme or no authority to connect to.
    #[error("the upstream URI names no http or https origin")]
    NoOrigin,
    /// The connection could not be opened (name resolution, TCP, TLS).
    #[error("connecting to the upstream failed")]
    Connect(#[source] BoxError),
    /// The connection was open and the exchange on it failed.
    #[error("the upstream exchange failed")]
    Exchange(#[source] hyper::Error),
}

/// Idle connections, per origin, and what opens new ones.
pub struct Pool<C> {
    connector: C,
    shared: Arc<Shared>,
}

impl<C: Clone> Clone for Pool<C> {
    fn clone(&self) -> Self {
        Self { connector: self.connector.clone(), shared: Arc::clone(&self.shared) }
    }
}

/// The state the pool's clones, its sweep and the connections on their way back share. Every
/// change under its locks is one call on a map or a deque, so a lock a panic poisoned is still
/// whole and is used as it is.
struct Shared {
    /// Keyed by origins from the configuration, not by anything a client sends: a fast hash
    /// needs no protection from chosen keys.
    lanes: Mutex<FxHashMap<Origin, Arc<Lane>>>,
    idle_timeout: Duration,
    max_idle: usize,
    sweeping: AtomicBool,
}

/// The scheme and authority a connection is for.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Origin {
    https: bool,
    authority: Authority,
}

/// One origin's idle connections (oldest first) and the `Host` its requests carry by default.
struct Lane {
    host: HeaderValue,
    idle: Mutex<VecDeque<(SendRequest<ProxyBody>, Instant)>>,
}

impl<C> Pool<C>
where
    C: Service<Uri> + Clone + Send + 'static,
    C::Response: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    C::Error: Into<BoxError>,
    C::Future: Send,
{
    /// A pool that opens connections with `connector`.
    pub fn new(connector: C, idle_timeout: Duration, max_idle: usize) -> Self {
        let shared = Shared {
            lanes: Mutex::new(FxHashMap::default()),
            idle_timeout,
            max_idle,
            sweeping: AtomicBool::new(false),
        };
        Self { connector, shared: Arc::new(shared) }
    }

    /// Sends a request whose URI is absolute (`https://host:port/path?query`) and waits for the
    /// answer's headers. The request goes out in origin form (`/path?query`), with a `Host`
    /// from the URI's authority unless it carries one.
    pub async fn send(&self, mut request: Request<ProxyBody>) -> Result<Response<Incoming>, PoolError> {
        let origin = Origin::of(request.uri()).ok_or(PoolError::NoOrigin)?;
        let lane = self.shared.lane(&origin);
        if !request.headers().contains_key(header::HOST) {
            request.headers_mut().insert(header::HOST, lane.host.clone());
        }
        let path = request.uri().path_and_query().cloned().unwrap_or_else(|| PathAndQuery::from_static("/"));
        *request.uri_mut() = Uri::from(path);
        let mut idle = lane.take(self.shared.idle_timeout);
        loop {
            let reused = idle.is_some();
            let mut sender = match idle {
                Some(sender) => sender,
                // Boxed: opening a connection is a large future that every request on a
                // kept-alive connection would otherwise carry.
                None => Box::pin(self.connect(&origin)).await?,
            };
            match sender.try_send_request(request).await {
                Ok(response) => {
                    self.shared.check_in(lane, sender);
                    return Ok(response);
                }
                Err(mut failed) => match failed.take_message() {
                    // The pooled connection closed before the request went out on it.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(PoolError::Exchange(failed.into_error())),
                },
            }
            idle = lane.take(self.shared.idle_timeout);
        }
    }

    /// Opens a connection to `origin` and hands it to a task of its own.
    async fn connect(&self, origin: &Origin) -> Result<SendRequest<ProxyBody>, PoolError> {
        let scheme = if origin.https { Scheme::HTTPS } else { Scheme::HTTP };
        let uri = Uri::builder()
            .scheme(scheme)
            .authority(origin.authority.clone())
            .path_and_query("/")
            .build()
            .map_err(|error| PoolError::Connect(error.into()))?;
        let io = self.connector.clone().call(uri).await.map_err(|error| PoolError::Connect(error.into()))?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(io).await.map_err(PoolError::Exchange)?;
        tokio::spawn(async move {
            if let Err(error) = connection.with_upgrades().await {
                tracing::debug!(error = %error, "an upstream connection ended with an error");
            }
        });
        Ok(sender)
    }
}

impl Shared {
    /// The lane of `origin`, made on its first request.
    fn lane(&self, origin: &Origin) -> Arc<Lane> {
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        match lanes.get(origin) {
            Some(lane) => Arc::clone(lane),
            None => Arc::clone(lanes.entry(origin.clone()).or_insert_with(|| Arc::new(Lane::new(origin)))),
        }
    }

    /// Puts `sender` back once its connection can take the next request: at once if it already
    /// can, else from a task that waits for the answer to be read.
    fn check_in(self: &Arc<Self>, lane: Arc<Lane>, mut sender: SendRequest<ProxyBody>) {
        if sender.is_ready() {
            self.put(&lane, sender);
            return;
        }
        let shared = Arc::clone(self);
        tokio::spawn(async move {
            if sender.ready().await.is_ok() {
                shared.put(&lane, sender);
            }
        });
    }

    fn put(self: &Arc<Self>, lane: &Lane, sender: SendRequest<ProxyBody>) {
        let now = Instant::now();
        {
            let mut idle = lane.idle.lock().unwrap_or_else(PoisonError::into_inner);
            expire(&mut idle, now, self.idle_timeout);
            if idle.len() < self.max_idle {
                idle.push_back((sender, now));
            }
        }
        if !self.sweeping.swap(true, Ordering::Relaxed) {
            tokio::spawn(sweep(Arc::downgrade(self), self.idle_timeout / 2));
        }
    }

    /// Closes every connection past the idle timeout or closed by its upstream, and forgets the
    /// lanes no request is using that have none left.
    fn sweep(&self) {
        let now = Instant::now();
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner).retain(|_, lane| {
            let mut idle = lane.idle.lock().unwrap_or_else(PoisonError::into_inner);
            expire(&mut idle, now, self.idle_timeout);
            idle.retain(|(sender, _)| !sender.is_closed());
            !idle.is_empty() || Arc::strong_count(lane) > 1
        });
    }

    #[cfg(test)]
    fn idle_count(&self) -> usize {
        self.lanes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|lane| lane.idle.lock().unwrap_or_else(PoisonError::into_inner).len())
            .sum()
    }
}

/// Sweeps the pool every `every` for as long as it exists.
async fn sweep(shared: Weak<Shared>, every: Duration) {
    let mut ticks = tokio::time::interval(every.max(Duration::from_millis(10)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        match shared.upgrade() {
            Some(shared) => shared.sweep(),
            None => return,
        }
    }
}

/// Drops the connections idle for `timeout` or longer (the oldest come first).
fn expire(idle: &mut VecDeque<(SendRequest<ProxyBody>, Instant)>, now: Instant, timeout: Duration) {
    while idle.front().is_some_and(|(_, since)| now.duration_since(*since) >= timeout) {
        idle.pop_front();
    }
}

impl Origin {
    fn of(uri: &Uri) -> Option<Self> {
        let https = match uri.scheme_str()? {
            "https" => true,
            "http" => false,
            _ => return None,
        };
        Some(Self { https, authority: uri.authority()?.clone() })
    }
}

impl Lane {
    /// A lane with no connections yet. Its `Host` is the authority without user information
    /// and without the scheme's default port.
    fn new(origin: &Origin) -> Self {
        let authority = &origin.authority;
        let host = host_with_port(authority.host(), authority.port_u16(), origin.https);
        match HeaderValue::from_str(&host) {
            Ok(host) => Self { host, idle: Mutex::new(VecDeque::new()) },
            // `http` parses an authority from printable ASCII only, all of it allowed in a value.
            Err(error) => unreachable!("an authority is a valid header value: {error}"),
        }
    }

    /// The most recently used idle connection that can take a request, if one can.
    fn take(&self, timeout: Duration) -> Option<SendRequest<ProxyBody>> {
        let now = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some((sender, since)) = idle.pop_back() {
            if now.duration_since(since) >= timeout {
                // The rest are older still.
                idle.clear();
                return None;
            }
            if sender.is_ready() {
                return Some(sender);
            }
        }
        None
    }
}
