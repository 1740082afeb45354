//! The demo's stand-in model: a small, deterministic OpenAI-compatible server on loopback, so
//! `toolgate demo` and the tests run the agent loop without a real language model. It is NOT a
//! language model and says so in its logs, its `/v1/models` answer and its texts: it picks the
//! tool whose name and description match the user's words, fills the arguments from the
//! message by the tool's schema, and summarises tool results by quoting them.
//!
//! `POST /v1/chat/completions` (streamed or whole) and `GET /v1/models`. Test knobs
//! ([`StandInOptions`]) delay the first token, fail the first requests, cut or hang a stream,
//! or call a tool that was never offered.

mod answer;
mod arguments;
mod protocol;
mod recall;
mod words;

#[cfg(test)]
mod tests;

use crate::http::body::{self, ProxyBody};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame};
use http_body_util::{BodyExt as _, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// The model id the stand-in reports and accepts (any model name is accepted).
pub const MODEL_ID: &str = "toolgate-demo-stand-in";

/// The largest request body read.
const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// How the stand-in misbehaves, for tests; the default behaves.
#[derive(Debug, Clone)]
pub struct StandInOptions {
    /// Wait this long after the response headers before the first chunk (or, unstreamed,
    /// before the answer).
    pub first_token_delay: Duration,
    /// Wait this long between two chunks of a stream.
    pub chunk_delay: Duration,
    /// Answer the first this many chat requests with `failure_status`.
    pub fail_first: u32,
    /// The status of those failures (503 unless set).
    pub failure_status: u16,
    /// Break the connection after this many chunks of a stream.
    pub cut_after_chunks: Option<usize>,
    /// Send nothing more after this many chunks of a stream, holding the connection open.
    pub hang_after_chunks: Option<usize>,
    /// Answer every request that does not end with a tool result by calling this tool (with
    /// `{}` as arguments), whether or not the request offered it: a model gone rogue.
    pub forge_call: Option<String>,
}

impl Default for StandInOptions {
    fn default() -> Self {
        Self {
            first_token_delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            fail_first: 0,
            failure_status: 503,
            cut_after_chunks: None,
            hang_after_chunks: None,
            forge_call: None,
        }
    }
}

/// Why the stand-in cannot serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StandInError {
    /// It serves only loopback.
    #[error("the demo stand-in model listens only on loopback, not {0}")]
    NotLoopback(SocketAddr),
    /// The listener's address cannot be read.
    #[error("cannot read the stand-in model's listening address: {0}")]
    Address(#[source] std::io::Error),
}

/// A stand-in model server with its options and what it has seen; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct StandIn {
    options: Arc<StandInOptions>,
    seen: Arc<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// The last request bodies, for tests that check what a model would have received.
    bodies: std::sync::Mutex<std::collections::VecDeque<String>>,
    requests: AtomicU32,
    disconnects: AtomicU32,
    next_id: AtomicU32,
}

/// Serves the well-behaved stand-in on `listener` until `shutdown` resolves.
pub async fn serve(listener: TcpListener, shutdown: impl Future<Output = ()>) -> Result<(), StandInError> {
    StandIn::default().serve(listener, shutdown).await
}

impl StandIn {
    /// A stand-in with test knobs.
    pub fn new(options: StandInOptions) -> Self {
        Self { options: Arc::new(options), seen: Arc::default() }
    }

    /// The bodies of the last chat completion requests (at most 32), oldest first: what a model
    /// in this place would have been shown.
    pub fn bodies(&self) -> Vec<String> {
        self.seen.bodies.lock().map(|bodies| bodies.iter().cloned().collect()).unwrap_or_default()
    }

    /// How many chat completion requests arrived (failed ones included).
    pub fn requests(&self) -> u32 {
        self.seen.requests.load(Ordering::SeqCst)
    }

    /// How many streams the client closed before their end.
    pub fn disconnects(&self) -> u32 {
        self.seen.disconnects.load(Ordering::SeqCst)
    }

    /// Serves on `listener` (loopback only) until `shutdown` resolves.
    pub async fn serve(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), StandInError> {
        let address = listener.local_addr().map_err(StandInError::Address)?;
        if !address.ip().is_loopback() {
            return Err(StandInError::NotLoopback(address));
        }
        tracing::info!(%address, "demo stand-in model listening (deterministic; not a language model)");
        tokio::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        // Streamed chunks are small: without this, Nagle holds each one back.
                        let _ = stream.set_nodelay(true);
                        stream
                    }
                    Err(_) => continue,
                },
                () = &mut shutdown => return Ok(()),
            };
            let stand_in = self.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let stand_in = stand_in.clone();
                    async move { Ok::<_, Infallible>(stand_in.respond(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }

    async fn respond(&self, request: Request<Incoming>) -> Response<ProxyBody> {
        let (parts, body) = request.into_parts();
        match (&parts.method, parts.uri.path().trim_end_matches('/')) {
            (&Method::GET, "/v1/models") => json(StatusCode::OK, protocol::models()),
            (&Method::POST, "/v1/chat/completions") => self.chat(body).await,
            _ => json(
                StatusCode::NOT_FOUND,
                protocol::error(404, "no such endpoint on the demo stand-in model"),
            ),
        }
    }

    async fn chat(&self, body: Incoming) -> Response<ProxyBody> {
        let number = self.seen.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let Ok(collected) = Limited::new(body, MAX_REQUEST_BYTES).collect().await else {
            return json(StatusCode::PAYLOAD_TOO_LARGE, protocol::error(413, "request too large"));
        };
        let collected = collected.to_bytes();
        if let Ok(mut bodies) = self.seen.bodies.lock() {
            if bodies.len() >= 32 {
                bodies.pop_front();
            }
            bodies.push_back(String::from_utf8_lossy(&collected).into_owned());
        }
        if number <= self.options.fail_first {
            let status =
                StatusCode::from_u16(self.options.failure_status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            tracing::debug!(status = status.as_u16(), "demo stand-in model failing a request on purpose");
            return json(
                status,
                protocol::error(status.as_u16(), "the demo stand-in model fails on purpose"),
            );
        }
        let request: protocol::ChatBody = match serde_json::from_slice(&collected) {
            Ok(request) => request,
            Err(_) => {
                return json(StatusCode::BAD_REQUEST, protocol::error(400, "not a chat completion request"));
            }
        };
        let after_result = request.messages.last().is_some_and(|message| message.role == "tool");
        let answer = match &self.options.forge_call {
            Some(name) if !after_result => {
                answer::Answer::Call { name: name.clone(), arguments: serde_json::json!({}) }
            }
            _ => answer::answer(&request),
        };
        let id = format!("chatcmpl-standin{}", self.seen.next_id.fetch_add(1, Ordering::SeqCst));
        if !request.stream {
            // Not even a zero sleep: tokio rounds it up to the next timer tick (about 1 ms).
            if !self.options.first_token_delay.is_zero() {
                tokio::time::sleep(self.options.first_token_delay).await;
            }
            return json(StatusCode::OK, protocol::whole(&request, &answer, &id));
        }
        let events = protocol::events(&request, &answer, &id);
        let (sender, receiver) = mpsc::channel(1);
        tokio::spawn(self.clone().send_events(events, sender));
        let mut response = Response::new(EventBody(receiver).boxed_unsync());
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }

    /// Feeds a stream's events to its body, applying the knobs; notices a client that left.
    async fn send_events(self, events: Vec<String>, sender: mpsc::Sender<Result<Bytes, body::BoxError>>) {
        let options = &self.options;
        if !pause(&sender, options.first_token_delay).await {
            return self.disconnected();
        }
        for (sent, event) in events.into_iter().enumerate() {
            if options.cut_after_chunks == Some(sent) {
                // An error ends the body without its last chunk: hyper drops the connection.
                let _ = sender.send(Err("the demo stand-in model cuts the stream on purpose".into())).await;
                return;
            }
            if options.hang_after_chunks == Some(sent) {
                sender.closed().await;
                return self.disconnected();
            }
            if sent > 0 && !pause(&sender, options.chunk_delay).await {
                return self.disconnected();
            }
            if sender.send(Ok(Bytes::from(event))).await.is_err() {
                return self.disconnected();
            }
        }
    }

    fn disconnected(&self) {
        self.seen.disconnects.fetch_add(1, Ordering::SeqCst);
    }
}

/// Waits `duration`; false when the client left meanwhile.
async fn pause(sender: &mpsc::Sender<Result<Bytes, body::BoxError>>, duration: Duration) -> bool {
    if duration.is_zero() {
        return !sender.is_closed();
    }
    tokio::select! {
        () = tokio::time::sleep(duration) => true,
        () = sender.closed() => false,
    }
}

/// A response body fed by the task that writes the stream.
struct EventBody(mpsc::Receiver<Result<Bytes, body::BoxError>>);

impl Body for EventBody {
    type Data = Bytes;
    type Error = body::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|item| item.map(|result| result.map(Frame::data)))
    }
}

fn json(status: StatusCode, text: String) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
