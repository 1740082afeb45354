//! The streaming body of a rewritten page: upstream chunks are decoded, pushed through the
//! page rewriter and handed to the client as soon as the rewriter emits output.
//!
//! Memory stays flat however large the page is: at most `WHOLE_LIMIT` of it is held, and only
//! while it may arrive whole. A page whose upstream has sent it whole by the time the rewrite
//! starts (not encoded) is rewritten in one go (`PageRewriter::rewrite_whole`, which can skip
//! work a page still arriving would need). So is a page whose upstream declared its length (up
//! to `WHOLE_LIMIT`): its bytes are already on their way, so it is gathered until they are all
//! there (the upstream's idle timeout still bounds each wait). What the rewriter makes of the
//! upstream frames that are ready together goes out as one body frame (up to `GATHER_LIMIT`):
//! one write and one chunk header instead of one per upstream read, and nothing else waits for
//! an upstream that has not sent more yet. A failure before the first byte becomes a 502 page
//! (see `prime`); after it, the stream is cut with an error so the browser sees a failed load.
//! Unrewritten input never reaches the client.

use crate::config::SiteId;
use crate::http::body::{BoxError, ProxyBody};
use crate::http::errors::ProxyError;
use crate::metrics::PageCounters;
use crate::outcomes::PageWatch;
use crate::page::decode::{DecodeError, Decoder};
use bytes::Bytes;
use http_body::{Body, Frame};
use injector::{PageRewriter, PageSummary, RewriteError};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

/// The most rewritten output gathered into one body frame.
const GATHER_LIMIT: usize = 64 * 1024;

/// The largest page held to be rewritten whole; a larger one streams from its first bytes.
const WHOLE_LIMIT: usize = 256 * 1024;

/// A page body being rewritten.
pub struct RewriteBody {
    upstream: ProxyBody,
    decoder: Option<Decoder>,
    rewriter: Option<PageRewriter>,
    /// Output produced by `prime` and not yet handed out.
    primed: Option<Bytes>,
    /// The upstream's first frames, gathered while the page may still arrive whole (`None`
    /// once it streams, or when it is encoded).
    gathered: Option<Vec<Bytes>>,
    /// The page's length as its upstream declared it, when it is at most `WHOLE_LIMIT`: the
    /// gathering waits for all of it.
    declared_length: Option<usize>,
    finished: bool,
    site: SiteId,
    counters: Arc<PageCounters>,
    /// The agent's submission this page answers, settled when the page has streamed whole.
    answer: Option<PageWatch>,
}

/// Why a rewritten stream stopped early.
#[derive(Debug)]
enum Failure {
    Upstream(BoxError),
    Decode,
    Rewrite(RewriteError),
}

impl Failure {
    fn as_proxy_error(&self) -> ProxyError {
        match self {
            Self::Upstream(error) if error.is::<crate::http::body::BodyIdle>() => {
                ProxyError::UpstreamHeadersTimeout
            }
            Self::Upstream(_) | Self::Decode => ProxyError::UpstreamProtocol,
            Self::Rewrite(RewriteError::MemoryLimitExceeded) => ProxyError::RewriteMemory,
            Self::Rewrite(RewriteError::UnsupportedEncoding) => ProxyError::PageEncoding,
            Self::Rewrite(_) => ProxyError::RewriteFailed,
        }
    }
}

impl RewriteBody {
    /// Wraps an upstream page body of `declared_length` bytes (its `Content-Length`, if any);
    /// `counters` are the site's.
    pub fn new(
        upstream: ProxyBody,
        declared_length: Option<u64>,
        decoder: Decoder,
        rewriter: PageRewriter,
        counters: Arc<PageCounters>,
        site: SiteId,
        answer: Option<PageWatch>,
    ) -> Self {
        let gathered = decoder.is_identity().then(Vec::new);
        let declared_length = declared_length
            .and_then(|length| usize::try_from(length).ok())
            .filter(|&length| length <= WHOLE_LIMIT);
        Self {
            upstream,
            decoder: Some(decoder),
            rewriter: Some(rewriter),
            primed: None,
            gathered,
            declared_length,
            finished: false,
            site,
            counters,
            answer,
        }
    }

    /// Produces the first output before the response headers are sent, so a page that fails
    /// early (memory limit on a huge head, corrupt compression, upstream cut) gets a clear
    /// error page instead of a half-sent 200.
    pub async fn prime(&mut self) -> Result<(), ProxyError> {
        match std::future::poll_fn(|cx| self.poll_output(cx)).await {
            Some(Ok(bytes)) => self.primed = Some(bytes),
            Some(Err(failure)) => return Err(failure.as_proxy_error()),
            None => {}
        }
        Ok(())
    }

    /// The next non-empty piece of rewritten output: what the upstream frames ready now make
    /// (at most about `GATHER_LIMIT`), or the end.
    fn poll_output(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Failure>>> {
        let mut output = Vec::new();
        if self.gathered.is_some() {
            match ready!(self.poll_whole(cx, &mut output)) {
                Ok(()) => {}
                Err(failure) => {
                    self.fail(&failure);
                    return Poll::Ready(Some(Err(failure)));
                }
            }
        }
        loop {
            if self.finished || output.len() >= GATHER_LIMIT {
                break;
            }
            let result = match Pin::new(&mut self.upstream).poll_frame(cx) {
                Poll::Pending if output.is_empty() => return Poll::Pending,
                Poll::Pending => break,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => self.process(&data, &mut output),
                    // Trailers of the original body say nothing true about the rewritten one.
                    Err(_trailers) => continue,
                },
                Poll::Ready(Some(Err(error))) => Err(Failure::Upstream(error)),
                Poll::Ready(None) => {
                    self.finished = true;
                    self.finish(&mut output)
                }
            };
            if let Err(failure) = result {
                // The stream is cut: output gathered before the failure goes nowhere.
                self.fail(&failure);
                return Poll::Ready(Some(Err(failure)));
            }
        }
        if output.is_empty() { Poll::Ready(None) } else { Poll::Ready(Some(Ok(Bytes::from(output)))) }
    }

    /// Gathers the upstream's frames while they are ready, or until the declared length is
    /// there: a page that ends among them (within `WHOLE_LIMIT`) is rewritten whole into
    /// `output`; otherwise, once the upstream pauses or the limit is passed, what was gathered
    /// goes through the stream like any later frame.
    fn poll_whole(&mut self, cx: &mut Context<'_>, output: &mut Vec<u8>) -> Poll<Result<(), Failure>> {
        let Some(mut gathered) = self.gathered.take() else { return Poll::Ready(Ok(())) };
        let mut size: usize = gathered.iter().map(Bytes::len).sum();
        loop {
            match Pin::new(&mut self.upstream).poll_frame(cx) {
                Poll::Pending
                    if gathered.is_empty() || self.declared_length.is_some_and(|length| size < length) =>
                {
                    self.gathered = Some(gathered);
                    return Poll::Pending;
                }
                Poll::Pending => break,
                Poll::Ready(Some(Ok(frame))) => {
                    // Trailers of the original body say nothing true about the rewritten one.
                    if let Ok(data) = frame.into_data() {
                        size += data.len();
                        gathered.push(data);
                        if size > WHOLE_LIMIT {
                            break;
                        }
                    }
                }
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(Failure::Upstream(error))),
                Poll::Ready(None) => {
                    self.finished = true;
                    return Poll::Ready(self.rewrite_whole(&gathered, output));
                }
            }
        }
        for data in &gathered {
            if let Err(failure) = self.process(data, output) {
                return Poll::Ready(Err(failure));
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Rewrites a page whose every byte (not encoded) is in `frames`.
    fn rewrite_whole(&mut self, frames: &[Bytes], output: &mut Vec<u8>) -> Result<(), Failure> {
        let (Some(_identity), Some(rewriter)) = (self.decoder.take(), self.rewriter.take()) else {
            return Ok(());
        };
        let page = match frames {
            [one] => std::borrow::Cow::Borrowed(&one[..]),
            many => std::borrow::Cow::Owned(many.concat()),
        };
        self.counters.rewritten_bytes.inc_by(page.len() as u64);
        let summary = rewriter.rewrite_whole(&page, output).map_err(Failure::Rewrite)?;
        count(&self.counters, &summary);
        if let Some(answer) = self.answer.take() {
            answer.finish();
        }
        Ok(())
    }

    fn process(&mut self, chunk: &[u8], output: &mut Vec<u8>) -> Result<(), Failure> {
        let (Some(decoder), Some(rewriter)) = (self.decoder.as_mut(), self.rewriter.as_mut()) else {
            return Ok(());
        };
        let counter = &self.counters.rewritten_bytes;
        let mut sink = |decoded: &[u8]| {
            counter.inc_by(decoded.len() as u64);
            rewriter.write(decoded, output)
        };
        decoder.decode(chunk, &mut sink).map_err(Failure::from)
    }

    fn finish(&mut self, output: &mut Vec<u8>) -> Result<(), Failure> {
        let (Some(decoder), Some(mut rewriter)) = (self.decoder.take(), self.rewriter.take()) else {
            return Ok(());
        };
        let counter = &self.counters.rewritten_bytes;
        let mut sink = |decoded: &[u8]| {
            counter.inc_by(decoded.len() as u64);
            rewriter.write(decoded, output)
        };
        decoder.finish(&mut sink).map_err(Failure::from)?;
        let summary = rewriter.end(output).map_err(Failure::Rewrite)?;
        count(&self.counters, &summary);
        if let Some(answer) = self.answer.take() {
            answer.finish();
        }
        Ok(())
    }

    fn fail(&mut self, failure: &Failure) {
        self.finished = true;
        self.rewriter = None;
        self.decoder = None;
        let reason = failure.as_proxy_error().reason();
        match failure {
            // In the order of `metrics::REWRITE_FAILURE_REASONS`.
            Failure::Rewrite(RewriteError::MemoryLimitExceeded) => self.counters.failures[0].inc(),
            Failure::Rewrite(RewriteError::UnsupportedEncoding) => self.counters.failures[1].inc(),
            Failure::Rewrite(_) => self.counters.failures[2].inc(),
            Failure::Upstream(_) | Failure::Decode => {}
        }
        tracing::warn!(site = %self.site, reason, "page stream stopped");
    }
}

fn count(counters: &PageCounters, summary: &PageSummary) {
    counters.tools_removed.inc_by(u64::from(summary.tools_removed));
    counters.contexts_removed.inc_by(u64::from(summary.contexts_removed));
    counters.forms_tooled.inc_by(u64::from(summary.forms_tooled));
    counters.leaks_removed.inc_by(u64::from(summary.leaks_removed));
}

impl From<DecodeError<RewriteError>> for Failure {
    fn from(error: DecodeError<RewriteError>) -> Self {
        match error {
            DecodeError::Corrupt(_) => Self::Decode,
            DecodeError::Sink(error) => Self::Rewrite(error),
        }
    }
}

impl Body for RewriteBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(primed) = self.primed.take() {
            return Poll::Ready(Some(Ok(Frame::data(primed))));
        }
        self.poll_output(cx).map(|output| {
            output.map(|result| {
                result.map(Frame::data).map_err(|failure| -> BoxError { failure.as_proxy_error().into() })
            })
        })
    }

    fn is_end_stream(&self) -> bool {
        self.finished && self.primed.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::body::ChannelBody;
    use http_body_util::BodyExt;
    use injector::PageSettings;
    use tokio::sync::mpsc;

    fn page_body(upstream: mpsc::Receiver<Bytes>) -> RewriteBody {
        page_body_of(upstream, None)
    }

    fn page_body_of(upstream: mpsc::Receiver<Bytes>, declared_length: Option<u64>) -> RewriteBody {
        let settings = PageSettings {
            script_src: "/.toolgate/runtime.js".to_owned(),
            integrity: "sha384-x".to_owned(),
            nonce: "bm9uY2U=".to_owned(),
            script_url: "http://a.test/.toolgate/runtime.js".to_owned(),
            declared_charset: Some("utf-8".to_owned()),
            memory_limit: 1 << 20,
            inject: true,
        };
        let counters = crate::metrics::Metrics::new().site_requests("a").pages;
        RewriteBody::new(
            ChannelBody(upstream).boxed_unsync(),
            declared_length,
            Decoder::for_content_encoding(None).expect("identity"),
            PageRewriter::new(settings),
            counters,
            SiteId::new("a"),
            None,
        )
    }

    #[tokio::test]
    async fn frames_ready_together_leave_as_one_and_nothing_waits_for_the_upstream() {
        let (upstream, receiver) = mpsc::channel(8);
        let mut body = page_body(receiver);
        let text = |frame: Option<Result<Frame<Bytes>, BoxError>>| {
            let data = frame.expect("a frame").expect("no error").into_data().expect("data");
            String::from_utf8(data.to_vec()).expect("utf-8")
        };
        for piece in ["<html><head><title>t</title></head>", "<body><p>first part</p>", "<p>second part</p>"]
        {
            upstream.send(Bytes::from_static(piece.as_bytes())).await.expect("sent");
        }
        // Three upstream frames were ready: one body frame, sent while the upstream waits.
        let first = text(body.frame().await);
        assert!(first.contains("runtime.js") && first.contains("second part"), "{first}");
        for piece in ["<p>after a pause</p>", "</body></html>"] {
            upstream.send(Bytes::from_static(piece.as_bytes())).await.expect("sent");
        }
        drop(upstream);
        let second = text(body.frame().await);
        assert!(second.contains("after a pause") && second.ends_with("</html>"), "{second}");
        assert!(body.frame().await.is_none(), "the page ended with its upstream");
    }

    #[tokio::test]
    async fn a_page_its_upstream_sent_whole_leaves_in_one_frame() {
        let (upstream, receiver) = mpsc::channel(8);
        let mut body = page_body(receiver);
        for piece in ["<html><head></head><body>", "<p>all of it</p>", "</body></html>"] {
            upstream.send(Bytes::from_static(piece.as_bytes())).await.expect("sent");
        }
        drop(upstream);
        let frame = body.frame().await.expect("a frame").expect("no error").into_data().expect("data");
        let page = String::from_utf8(frame.to_vec()).expect("utf-8");
        assert!(
            page.contains("runtime.js") && page.contains("all of it") && page.ends_with("</html>"),
            "{page}"
        );
        assert!(body.is_end_stream() && body.frame().await.is_none());
    }

    #[tokio::test]
    async fn a_page_of_declared_length_is_gathered_whole_across_pauses() {
        let pieces = ["<html><head></head><body>", "<p>first</p>", "<p>after a pause</p></body></html>"];
        let length: usize = pieces.iter().map(|piece| piece.len()).sum();
        let (upstream, receiver) = mpsc::channel(8);
        let mut body = page_body_of(receiver, Some(length as u64));
        let sender = tokio::spawn(async move {
            for piece in pieces {
                upstream.send(Bytes::from_static(piece.as_bytes())).await.expect("sent");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        });
        // Without the declared length the first piece would leave alone, before the pause.
        let frame = body.frame().await.expect("a frame").expect("no error").into_data().expect("data");
        let page = String::from_utf8(frame.to_vec()).expect("utf-8");
        assert!(page.contains("runtime.js") && page.ends_with("</html>"), "{page}");
        assert!(body.frame().await.is_none());
        sender.await.expect("sender finished");
    }

    #[tokio::test]
    async fn a_page_longer_than_the_whole_limit_streams_from_its_first_frame() {
        let (upstream, receiver) = mpsc::channel(8);
        let mut body = page_body_of(receiver, Some(WHOLE_LIMIT as u64 + 1));
        upstream.send(Bytes::from_static(b"<html><head></head><body><p>first</p>")).await.expect("sent");
        let frame = body.frame().await.expect("a frame").expect("no error").into_data().expect("data");
        assert!(String::from_utf8_lossy(&frame).contains("first"), "the first frame did not wait");
        drop(upstream);
        assert!(body.frame().await.is_none());
    }
}
