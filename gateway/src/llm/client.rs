//! The HTTP side of the client: one pooled hyper client (plain HTTP or rustls), the request,
//! the retries before the first byte of an answer, and the classification of failures.

use super::stream::ChatStream;
use super::tool_calls::ToolCallAssembler;
use super::wire::{self, Completion};
use super::{ChatRequest, ChatResponse, LlmConfig, LlmError, TimeoutPhase};
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The most bytes of a whole (non-streamed) answer.
pub(crate) const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// The most bytes of an error answer that are read for its message.
const MAX_ERROR_BYTES: usize = 16 * 1024;
/// How long reading an error answer may take.
const ERROR_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// The first pause between two tries; it doubles each time up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// The longest `Retry-After` honoured; a server asking for more gets [`MAX_BACKOFF`]-style
/// pauses and, after the retries, the error.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);

/// A client for one OpenAI-compatible server; cheap to clone.
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: LlmConfig,
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    chat_url: Uri,
    /// `Bearer <key>`, marked sensitive so hyper never prints it.
    authorization: Option<HeaderValue>,
}

/// What a successful try produced.
enum Started {
    Stream(ChatStream),
    Whole(Response<Incoming>),
}

/// A failed try, with the pause the server asked for.
struct Failure {
    error: LlmError,
    retry_after: Option<Duration>,
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Self {
        Self { error, retry_after: None }
    }
}

impl LlmClient {
    /// Builds the client; reads the API key (once) and checks the base URL.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let base = &config.base_url;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(LlmError::Config("llm.base_url must be an http:// or https:// URL".into()));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(LlmError::Config("llm.base_url must not have a query or fragment".into()));
        }
        let chat_url: Uri = config
            .endpoint("chat/completions")
            .parse()
            .map_err(|_| LlmError::Config("llm.base_url is not a valid request URI".into()))?;
        let authorization = match &config.api_key {
            Some(secret) => {
                let key = secret
                    .read()
                    .map_err(|error| LlmError::Config(format!("cannot read llm.api_key: {error}")))?;
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    LlmError::Config(format!("llm.api_key ({secret}) is not a valid header value"))
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(config.connect_timeout));
        connector.set_keepalive(Some(Duration::from_secs(60)));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(crate::net::upstream::client_tls_config())
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let http = Client::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(connector);
        Ok(Self { inner: Arc::new(Inner { config, http, chat_url, authorization }) })
    }

    /// The model name sent with every request.
    pub fn model(&self) -> &str {
        &self.inner.config.model
    }

    /// Other names clients may ask for (`llm.model_aliases`), all served by [`model`](Self::model).
    pub fn aliases(&self) -> &[String] {
        &self.inner.config.model_aliases
    }

    /// Streams one chat completion (`stream: true`, with `stream_options.include_usage`).
    /// Connect errors, 429/5xx and timeouts before the first byte are retried up to max_retries
    /// with a short backoff; afterwards nothing is retried. Dropping the stream aborts the call.
    pub async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let config = &self.inner.config;
        let body = wire::request_body(&config.model, config.max_tokens, &request, true);
        match self.send_with_retries(&body, true).await? {
            Started::Stream(stream) => Ok(stream),
            Started::Whole(_) => Err(LlmError::Protocol("expected a streamed answer".into())),
        }
    }

    /// Non-streaming variant (used by the OpenAI-compatible endpoint later). Retries as
    /// [`LlmClient::stream`] does until the response headers arrive; the body must then keep
    /// coming with no silence longer than the idle timeout, up to 8 MiB.
    pub async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let config = &self.inner.config;
        let body = wire::request_body(&config.model, config.max_tokens, &request, false);
        let response = match self.send_with_retries(&body, false).await? {
            Started::Whole(response) => response,
            Started::Stream(_) => return Err(LlmError::Protocol("expected a whole answer".into())),
        };
        let bytes = read_bounded(response.into_body(), MAX_ANSWER_BYTES, config.idle_timeout).await?;
        whole_answer(&bytes)
    }

    async fn send_with_retries(&self, body: &Bytes, streaming: bool) -> Result<Started, LlmError> {
        let mut retries = 0;
        loop {
            let failure = match self.attempt(body, streaming).await {
                Ok(started) => return Ok(started),
                Err(failure) => failure,
            };
            let error = failure.error;
            if retries >= self.inner.config.max_retries || !error.is_retryable() {
                tracing::warn!(reason = error.reason(), tries = retries + 1, "language model call failed");
                return Err(match error {
                    LlmError::Status { status: 429, .. } => LlmError::RateLimited,
                    error => error,
                });
            }
            retries += 1;
            let backoff = FIRST_BACKOFF.saturating_mul(1 << (retries - 1).min(8)).min(MAX_BACKOFF);
            let pause = failure.retry_after.map_or(backoff, |asked| asked.min(MAX_RETRY_AFTER).max(backoff));
            tracing::info!(
                reason = error.reason(),
                retry = retries,
                pause_ms = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
                "language model call failed before its answer began; trying again"
            );
            tokio::time::sleep(pause).await;
        }
    }

    /// One try: the request, the status, and for a stream its first bytes, all within the
    /// first-token timeout.
    async fn attempt(&self, body: &Bytes, streaming: bool) -> Result<Started, Failure> {
        let inner = &*self.inner;
        let accept = if streaming { "text/event-stream" } else { "application/json" };
        let mut request = Request::post(inner.chat_url.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, accept)
            .header(header::USER_AGENT, concat!("toolgate/", env!("CARGO_PKG_VERSION")))
            .body(Full::new(body.clone()))
            .map_err(|_| LlmError::Config("cannot build the request".into()))?;
        if let Some(authorization) = &inner.authorization {
            request.headers_mut().insert(header::AUTHORIZATION, authorization.clone());
        }
        let deadline = Instant::now() + inner.config.first_token_timeout;
        let response = tokio::time::timeout_at(deadline, inner.http.request(request))
            .await
            .map_err(|_elapsed| LlmError::Timeout(TimeoutPhase::FirstToken))?
            .map_err(|error| classify(&error))?;
        let status = response.status();
        if !status.is_success() {
            return Err(status_failure(response).await);
        }
        if !streaming {
            return Ok(Started::Whole(response));
        }
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        let mut body = response.into_body();
        if is_json {
            // Some proxies report errors as JSON with status 200 even when asked to stream.
            let bytes = read_bounded(body, MAX_ERROR_BYTES, inner.config.idle_timeout).await?;
            let error = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|value| value.get("error").map(|error| wire::upstream_error(error, 502)));
            return Err(error
                .unwrap_or_else(|| LlmError::Protocol("the server answered without streaming".into()))
                .into());
        }
        loop {
            let frame = tokio::time::timeout_at(deadline, body.frame())
                .await
                .map_err(|_elapsed| LlmError::Timeout(TimeoutPhase::FirstToken))?;
            match frame {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref().filter(|data| !data.is_empty()) {
                        let first = data.clone();
                        return Ok(Started::Stream(ChatStream::new(body, &first, inner.config.idle_timeout)));
                    }
                }
                Some(Err(_)) | None => return Err(LlmError::Interrupted.into()),
            }
        }
    }
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("chat_url", &self.inner.chat_url)
            .field("model", &self.inner.config.model)
            .finish_non_exhaustive()
    }
}

/// An error status, with the server's message and its `Retry-After` (in seconds).
async fn status_failure(response: Response<Incoming>) -> Failure {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body =
        read_bounded(response.into_body(), MAX_ERROR_BYTES, ERROR_READ_TIMEOUT).await.unwrap_or_default();
    let status = if status == StatusCode::TOO_MANY_REQUESTS { 429 } else { status.as_u16() };
    Failure { error: LlmError::Status { status, message: wire::status_message(&body) }, retry_after }
}

/// Reads a whole body of at most `limit` bytes, with no silence longer than `idle`.
async fn read_bounded(mut body: Incoming, limit: usize, idle: Duration) -> Result<Vec<u8>, LlmError> {
    let mut bytes = Vec::new();
    loop {
        let frame = tokio::time::timeout(idle, body.frame())
            .await
            .map_err(|_elapsed| LlmError::Timeout(TimeoutPhase::Idle))?;
        match frame {
            None => return Ok(bytes),
            Some(Err(_)) => return Err(LlmError::Interrupted),
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    if bytes.len() + data.len() > limit {
                        return Err(LlmError::Protocol(format!("the answer is larger than {limit} bytes")));
                    }
                    bytes.extend_from_slice(data);
                }
            }
        }
    }
}

/// A whole answer, from its JSON.
fn whole_answer(bytes: &[u8]) -> Result<ChatResponse, LlmError> {
    let completion: Completion = wire::parse("the answer", bytes)?;
    if let Some(error) = completion.error {
        return Err(wire::upstream_error(&error, 502));
    }
    let usage = completion.usage.map(Into::into);
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(LlmError::Protocol("the answer has no choices".into()));
    };
    let mut assembler = ToolCallAssembler::default();
    for (position, mut call) in choice.message.tool_calls.into_iter().enumerate() {
        // Whole answers list calls in order; positions keep calls without ids apart.
        call.index = Some(position);
        assembler.push(call)?;
    }
    Ok(ChatResponse {
        content: choice.message.content,
        tool_calls: assembler.finish()?,
        finish_reason: choice.finish_reason,
        usage,
    })
}

/// Maps a client error to what the caller sees.
fn classify(error: &hyper_util::client::legacy::Error) -> LlmError {
    if !error.is_connect() {
        // The connection opened but closed before the answer began.
        return LlmError::Interrupted;
    }
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = current {
        if error.is::<rustls::Error>() {
            return LlmError::Unreachable("TLS handshake failed".into());
        }
        if error.to_string().starts_with("dns error") {
            return LlmError::Unreachable("cannot resolve the host name".into());
        }
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                return LlmError::Timeout(TimeoutPhase::Connect);
            }
            Some(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                return LlmError::Unreachable("connection refused".into());
            }
            // `io::Error::source` skips the error it wraps; the wrapped one tells TLS apart.
            Some(io) => match io.get_ref() {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => std::error::Error::source(io),
            },
            None => error.source(),
        };
    }
    LlmError::Unreachable("cannot connect".into())
}
