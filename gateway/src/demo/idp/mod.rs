//! The development OIDC provider that `toolgate demo` runs on loopback, so the demo signs people
//! in through the same authorization code + PKCE path (discovery, JWKS, code, token, refresh,
//! userinfo, logout) as a corporate identity provider. It is development-only: anyone can sign
//! in as any demo user without a password, its key lives only in memory, and it refuses to
//! listen anywhere but loopback. This file owns the public API and the request routing.

mod authorize;
mod claims;
mod client;
mod discovery;
mod end_session;
mod form;
mod grants;
mod keys;
mod pages;
mod responses;
mod token;
mod userinfo;
mod users;

#[cfg(test)]
mod tests;

pub use client::DevClient;
pub use users::{DEMO_USERS, DemoUser};

use bytes::Bytes;
use client::RegisteredClient;
use grants::{AuthorizationGrant, GrantStore, RefreshGrant};
use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use keys::SigningKey;
use responses::Body;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How long ID and access tokens are valid unless [`DevIdpOptions`] say otherwise.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// How long an authorization code may wait to be redeemed.
const CODE_LIFETIME: Duration = Duration::from_secs(60);
/// How long a refresh token may wait to be used (each use replaces it with a new one).
const REFRESH_LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);
/// The most codes, and separately refresh tokens, held at once.
const MAX_OUTSTANDING_GRANTS: usize = 10_000;
/// Request bodies are small forms; anything larger is refused.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// How long a client may take to send its request headers, and then its body.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for requests in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// A running development provider.
pub struct DevIdp {
    /// The issuer, `http://127.0.0.1:PORT`; discovery is at `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    /// The loopback address the provider listens on.
    pub address: SocketAddr,
    provider: Arc<Provider>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for DevIdp {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DevIdp")
            .field("issuer", &self.issuer)
            .field("address", &self.address)
            .finish()
    }
}

impl DevIdp {
    /// An access token for the demo user `user_id`, valid for `lifetime`, as the provider issues
    /// them to the demo's client after a sign-in: a bearer token for API clients (`/v1`, the
    /// approvals API, `whoami`), which `toolgate demo` prints with ready-to-run snippets.
    pub fn api_token(&self, user_id: &str, lifetime: Duration) -> Result<String, DevIdpError> {
        let user = users::find(user_id).ok_or_else(|| DevIdpError::UnknownUser(user_id.to_owned()))?;
        token::access_token(&self.provider, user, lifetime).map_err(DevIdpError::SigningKey)
    }

    /// Waits until the server has stopped after the shutdown future resolved.
    pub async fn stopped(self) {
        // A panic in the accept loop has already been reported by the runtime; either way the
        // provider has stopped, which is all a caller can wait for.
        let _ = self.task.await;
    }
}

/// Why the provider could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevIdpError {
    /// The listener is not on a loopback address; the provider signs anyone in, so it never is.
    #[error(
        "the development OIDC provider listens only on loopback, not {address}: \
         it signs anyone in without a password"
    )]
    NotLoopback {
        /// Where the listener is bound.
        address: SocketAddr,
    },
    /// The listener's address could not be read.
    #[error("cannot read the development OIDC provider's listening address")]
    ListenerAddress(#[source] std::io::Error),
    /// `start` was called outside a tokio runtime.
    #[error("the development OIDC provider must be started inside a tokio runtime")]
    NoRuntime,
    /// The client id or secret is empty.
    #[error("the development OIDC client needs a non-empty client_id and client_secret")]
    EmptyClientCredentials,
    /// The client has no redirect URI.
    #[error("the development OIDC client needs at least one redirect URI")]
    NoRedirectUris,
    /// A redirect URI cannot be registered.
    #[error("cannot register redirect URI `{uri}`: {reason}")]
    InvalidRedirectUri {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `auto_sign_in` names no demo user.
    #[error("`{0}` is not a demo user (alice, bob, carol, dave or erin)")]
    UnknownUser(String),
    /// The signing key could not be generated.
    #[error("cannot create the development OIDC provider's signing key: {0}")]
    SigningKey(String),
}

/// Starts the provider on `listener` for `client`, with tokens valid for [`TOKEN_LIFETIME`]. The
/// server runs on a spawned task until `shutdown` resolves; this returns at once.
pub fn start(
    listener: TcpListener,
    client: DevClient,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<DevIdp, DevIdpError> {
    start_with(listener, client, DevIdpOptions::default(), shutdown)
}

/// How the development provider behaves beyond its defaults.
#[derive(Debug, Clone)]
pub struct DevIdpOptions {
    /// How long ID and access tokens are valid (whole seconds), so tests can exercise expiry
    /// and refresh without waiting ten minutes.
    pub token_lifetime: Duration,
    /// Sign every login in as this demo user without showing the picker (kiosk demos and
    /// headless browsers). Must name one of [`DEMO_USERS`].
    pub auto_sign_in: Option<String>,
}

impl Default for DevIdpOptions {
    fn default() -> Self {
        Self { token_lifetime: TOKEN_LIFETIME, auto_sign_in: None }
    }
}

/// [`start`], with options.
pub fn start_with(
    listener: TcpListener,
    client: DevClient,
    options: DevIdpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<DevIdp, DevIdpError> {
    let auto_sign_in = match options.auto_sign_in.as_deref() {
        None => None,
        Some(id) => Some(users::find(id).ok_or_else(|| DevIdpError::UnknownUser(id.to_owned()))?),
    };
    let token_lifetime = options.token_lifetime;
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| DevIdpError::NoRuntime)?;
    let address = listener.local_addr().map_err(DevIdpError::ListenerAddress)?;
    if !address.ip().to_canonical().is_loopback() {
        return Err(DevIdpError::NotLoopback { address });
    }
    let client = RegisteredClient::new(client)?;
    let key = SigningKey::generate().map_err(|error| DevIdpError::SigningKey(error.to_string()))?;
    let issuer = format!("http://{address}");
    let provider = Arc::new(Provider {
        issuer: issuer.clone(),
        client,
        key,
        codes: GrantStore::new(CODE_LIFETIME, MAX_OUTSTANDING_GRANTS),
        refresh_tokens: GrantStore::new(REFRESH_LIFETIME, MAX_OUTSTANDING_GRANTS),
        token_lifetime,
        auto_sign_in,
    });
    let task = runtime.spawn(serve(provider.clone(), listener, shutdown));
    tracing::warn!(%issuer, "development OIDC provider started: passwordless demo users, not for production");
    Ok(DevIdp { issuer, address, provider, task })
}

/// Everything a request handler needs.
struct Provider {
    issuer: String,
    client: RegisteredClient,
    key: SigningKey,
    codes: GrantStore<AuthorizationGrant>,
    refresh_tokens: GrantStore<RefreshGrant>,
    token_lifetime: Duration,
    auto_sign_in: Option<&'static DemoUser>,
}

impl Provider {
    /// Routes one request whose body has been read.
    fn respond(&self, request: &Parts, body: &[u8]) -> Response<Body> {
        let query = request.uri.query().unwrap_or_default().as_bytes();
        match (&request.method, request.uri.path()) {
            (&Method::GET, "/.well-known/openid-configuration") => discovery::document(self),
            (&Method::GET, "/jwks") => responses::json(StatusCode::OK, &self.key.jwks()),
            (&Method::GET, "/authorize") => authorize::show(self, query),
            (&Method::POST, "/authorize/choose") => authorize::choose(self, body),
            (&Method::POST, "/token") => token::exchange(self, &request.headers, body),
            (&Method::GET | &Method::POST, "/userinfo") => userinfo::respond(self, &request.headers),
            (&Method::GET, "/end_session") => end_session::respond(self, query),
            (
                _,
                "/.well-known/openid-configuration"
                | "/jwks"
                | "/authorize"
                | "/authorize/choose"
                | "/token"
                | "/userinfo"
                | "/end_session",
            ) => responses::plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
            _ => responses::plain(StatusCode::NOT_FOUND, "not found"),
        }
    }
}

/// Accepts connections until `shutdown` resolves, then lets requests in flight finish.
async fn serve(provider: Arc<Provider>, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    tracing::warn!(%error, "development OIDC provider cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let provider = provider.clone();
        let service = service_fn(move |request| {
            let provider = provider.clone();
            async move { Ok::<_, Infallible>(handle(&provider, request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(REQUEST_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A client that hangs up mid-request is not the provider's problem.
            let _ = connection.await;
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown()).await.is_err() {
        tracing::warn!("development OIDC provider stopped with requests still in flight");
    }
}

/// Reads the bounded body and answers the request.
async fn handle(provider: &Provider, request: Request<Incoming>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, MAX_BODY_BYTES).collect();
    let body: Bytes = match tokio::time::timeout(REQUEST_TIMEOUT, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(_)) => return responses::plain(StatusCode::PAYLOAD_TOO_LARGE, "body too large or cut short"),
        Err(_) => return responses::plain(StatusCode::REQUEST_TIMEOUT, "request body too slow"),
    };
    provider.respond(&parts, &body)
}
