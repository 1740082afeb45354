//! The HTTP client the gateway uses to talk to the identity provider (discovery, JWKS, token
//! endpoint): bounded in time and in response size, system certificate roots, and the request
//! and response types openidconnect expects.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

/// The longest an identity-provider call may take, end to end.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest response accepted (discovery documents and key sets are small).
const MAX_RESPONSE: usize = 1024 * 1024;

/// Why a call to the identity provider failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdpHttpError {
    /// No answer in time.
    #[error("identity provider timed out")]
    Timeout,
    /// Connection or protocol failure.
    #[error("identity provider unreachable: {0}")]
    Unreachable(String),
    /// The response was larger than allowed.
    #[error("identity provider response too large")]
    TooLarge,
}

/// A client for identity-provider calls.
#[derive(Clone)]
pub struct IdpHttp {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl IdpHttp {
    /// Builds the client (system roots, `SSL_CERT_FILE` honoured).
    pub fn new() -> Self {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(5)));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(crate::net::upstream::client_tls_config())
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Self { client: Client::builder(TokioExecutor::new()).build(connector) }
    }

    /// Performs one call.
    pub async fn call(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<http::Response<Vec<u8>>, IdpHttpError> {
        let request = request.map(|body| Full::new(Bytes::from(body)));
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|error| IdpHttpError::Unreachable(error.to_string()))?;
            let (parts, body) = response.into_parts();
            let body =
                Limited::new(body, MAX_RESPONSE).collect().await.map_err(|_| IdpHttpError::TooLarge)?;
            Ok(http::Response::from_parts(parts, body.to_bytes().to_vec()))
        };
        tokio::time::timeout(TIMEOUT, exchange).await.map_err(|_| IdpHttpError::Timeout)?
    }
}

/// openidconnect calls the provider through this (a named type, so the futures are `Send` for
/// every lifetime, which a closure cannot promise).
impl<'c> openidconnect::AsyncHttpClient<'c> for IdpHttp {
    type Error = IdpHttpError;
    type Future =
        std::pin::Pin<Box<dyn Future<Output = Result<http::Response<Vec<u8>>, IdpHttpError>> + Send + 'c>>;

    fn call(&'c self, request: http::Request<Vec<u8>>) -> Self::Future {
        Box::pin(IdpHttp::call(self, request))
    }
}

impl Default for IdpHttp {
    fn default() -> Self {
        Self::new()
    }
}
