//! A connection must say something: until its first byte arrives, reads fail with `TimedOut`
//! once `timeouts.header_read` has passed since accept. hyper's own header-read timer starts
//! only with the first byte of a request, and its HTTP/1-or-2 sniff waits without one, so a
//! client that opens a connection and stays silent would hold it (and a file descriptor) forever.
//! After the first byte the stream is untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A stream whose first byte must arrive in time.
pub struct FirstByteDeadline<S> {
    inner: S,
    /// Pending until the first byte; `None` afterwards.
    deadline: Option<Pin<Box<Sleep>>>,
    /// Counted when the deadline passes.
    silent: Option<prometheus::IntCounter>,
}

impl<S> FirstByteDeadline<S> {
    /// Starts the clock now (at accept); `silent` is counted if it runs out.
    pub fn new(inner: S, within: Duration, silent: Option<prometheus::IntCounter>) -> Self {
        Self { inner, deadline: Some(Box::pin(tokio::time::sleep(within))), silent }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FirstByteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if self.deadline.is_none() {
            return polled;
        }
        match polled {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                self.deadline = None;
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match self.deadline.as_mut().map(|deadline| deadline.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => {
                    self.deadline = None;
                    if let Some(silent) = self.silent.take() {
                        silent.inc();
                    }
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no byte before the header-read timeout",
                    )))
                }
                _ => Poll::Pending,
            },
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FirstByteDeadline<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn silence_times_out_and_a_first_byte_lifts_the_deadline() {
        let (client, server) = tokio::io::duplex(64);
        let counter = prometheus::IntCounter::new("silent", "silent").expect("counter");
        let mut silent = FirstByteDeadline::new(server, Duration::from_secs(10), Some(counter.clone()));
        let mut buffer = [0u8; 8];
        let error = silent.read(&mut buffer).await.expect_err("silent");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(counter.get(), 1);
        drop(client);

        let (mut client, server) = tokio::io::duplex(64);
        let mut talking = FirstByteDeadline::new(server, Duration::from_secs(10), None);
        client.write_all(b"G").await.expect("write");
        assert_eq!(talking.read(&mut buffer).await.expect("read"), 1);
        // Later silence is hyper's business (its own timers), not this wrapper's.
        let later = tokio::time::timeout(Duration::from_secs(60), talking.read(&mut buffer)).await;
        assert!(later.is_err(), "no deadline after the first byte");
    }
}
