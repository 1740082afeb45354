//! Body types on the request path: the boxed body every response uses, and the idle timeout.
//!
//! The gateway never sets a total timeout on a body (long downloads and event streams must
//! work); instead a body that stays silent for longer than `body_idle` fails.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// Any error a body can carry.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body type of every request and response the gateway builds.
pub type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// The body length a message's `Content-Length` declares, if it declares a readable one.
pub fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|length| length.trim().parse::<u64>().ok())
}

/// A complete body from bytes in memory.
pub fn full(bytes: impl Into<Bytes>) -> ProxyBody {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed_unsync()
}

/// An empty body.
pub fn empty() -> ProxyBody {
    full(Bytes::new())
}

/// A Server-Sent Events response fed through a bounded channel: the sender for the task that
/// produces the events, the response for the client. When the client goes away the body is
/// dropped and every later send fails, which is how producers notice.
pub fn event_stream() -> (tokio::sync::mpsc::Sender<Bytes>, http::Response<ProxyBody>) {
    let (sender, receiver) = tokio::sync::mpsc::channel(64);
    let mut response = http::Response::new(ChannelBody(receiver).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/event-stream"));
    headers.insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    headers.insert(http::header::X_CONTENT_TYPE_OPTIONS, http::HeaderValue::from_static("nosniff"));
    headers.insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    (sender, response)
}

/// A body whose chunks arrive through a channel; it ends when every sender is gone.
pub struct ChannelBody(pub tokio::sync::mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// The error a body yields when it was silent for too long.
#[derive(Debug, thiserror::Error)]
#[error("body idle for longer than {0:?}")]
pub struct BodyIdle(pub Duration);

/// Wraps a body so that a silence longer than `timeout` between frames ends it with an error.
///
/// The timer is armed only when the body has to wait: a body whose frames are ready when asked
/// for (an empty request body, a small response read at once) never touches tokio's timer
/// wheel, which costs a lock to enter and another to leave.
pub struct IdleTimeout<B> {
    inner: B,
    timeout: Duration,
    /// The start, or the last frame: the silence is counted from here.
    last_frame: Instant,
    /// Armed the first time the body waits, then moved as frames come.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<B> IdleTimeout<B> {
    /// Starts the clock now.
    pub fn new(inner: B, timeout: Duration) -> Self {
        Self { inner, timeout, last_frame: Instant::now(), deadline: None }
    }
}

impl<B> Body for IdleTimeout<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.last_frame = Instant::now();
                Poll::Ready(frame.map(|result| result.map_err(Into::into)))
            }
            Poll::Pending => {
                let due = this.last_frame + this.timeout;
                let deadline = this.deadline.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
                if deadline.deadline() != due {
                    deadline.as_mut().reset(due);
                }
                match deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(BodyIdle(this.timeout).into()))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body fed from a channel, so the test controls when frames arrive.
    struct ChannelBody(tokio::sync::mpsc::Receiver<Bytes>);

    impl Body for ChannelBody {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            self.0.poll_recv(cx).map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_never_waits_never_arms_the_timer() {
        let mut body = IdleTimeout::new(Full::new(Bytes::from_static(b"whole")), Duration::from_secs(5));
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!(body.frame().await.is_some_and(|frame| frame.is_ok()), "ready frames are never late");
        assert!(body.frame().await.is_none());
        assert!(body.deadline.is_none(), "no timer was armed");
    }

    #[tokio::test(start_paused = true)]
    async fn silent_body_fails_after_timeout_but_active_body_does_not() {
        let (sender, receiver) = tokio::sync::mpsc::channel(4);
        let mut body = IdleTimeout::new(ChannelBody(receiver), Duration::from_secs(5));
        sender.send(Bytes::from_static(b"a")).await.ok();
        assert!(body.frame().await.is_some_and(|frame| frame.is_ok()));
        tokio::time::advance(Duration::from_secs(4)).await;
        sender.send(Bytes::from_static(b"b")).await.ok();
        assert!(body.frame().await.is_some_and(|frame| frame.is_ok()), "4 s of silence is allowed");
        let error = body.frame().await.and_then(Result::err).map(|error| error.to_string());
        assert_eq!(error.as_deref(), Some("body idle for longer than 5s"));
        drop(sender);
    }
}
