//! The streaming body of a rewritten page: upstream chunks are decoded, pushed through the
//! page rewriter and handed to the client as soon as the rewriter emits output.
//!
//! It never buffers the page: memory stays flat however large the page is. A failure before
//! the first byte becomes a 502 page (see `prime`); after it, the stream is cut with an error
//! so the browser sees a failed load. Unrewritten input never reaches the client.

use crate::config::SiteId;
use crate::http::body::{BoxError, ProxyBody};
use crate::http::errors::ProxyError;
use crate::metrics::{Metrics, REWRITE_FAILURE_REASONS};
use crate::outcomes::PageWatch;
use crate::page::decode::{DecodeError, Decoder};
use bytes::Bytes;
use http_body::{Body, Frame};
use injector::{PageRewriter, PageSummary, RewriteError};
use prometheus::IntCounter;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

/// A page body being rewritten.
pub struct RewriteBody {
    upstream: ProxyBody,
    decoder: Option<Decoder>,
    rewriter: Option<PageRewriter>,
    /// Output produced by `prime` and not yet handed out.
    primed: Option<Bytes>,
    finished: bool,
    site: SiteId,
    counters: Counters,
    /// The agent's submission this page answers, settled when the page has streamed whole.
    answer: Option<PageWatch>,
}

/// Counters resolved once per response, so the hot loop never looks up labels.
struct Counters {
    rewritten_bytes: IntCounter,
    memory_failures: IntCounter,
    encoding_failures: IntCounter,
    other_failures: IntCounter,
    tools_removed: IntCounter,
    contexts_removed: IntCounter,
    forms_tooled: IntCounter,
    leaks_removed: IntCounter,
}

impl Counters {
    fn count(&self, summary: &PageSummary) {
        self.tools_removed.inc_by(u64::from(summary.tools_removed));
        self.contexts_removed.inc_by(u64::from(summary.contexts_removed));
        self.forms_tooled.inc_by(u64::from(summary.forms_tooled));
        self.leaks_removed.inc_by(u64::from(summary.leaks_removed));
    }
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
    /// Wraps an upstream page body.
    pub fn new(
        upstream: ProxyBody,
        decoder: Decoder,
        rewriter: PageRewriter,
        metrics: &Metrics,
        site: SiteId,
        answer: Option<PageWatch>,
    ) -> Self {
        let label = site.as_str();
        let filter = |action: &str| metrics.page_filter.with_label_values(&[label, action]);
        let counters = Counters {
            rewritten_bytes: metrics.rewritten_bytes.with_label_values(&[label]),
            memory_failures: metrics.rewrite_failures.with_label_values(&[label, REWRITE_FAILURE_REASONS[0]]),
            encoding_failures: metrics
                .rewrite_failures
                .with_label_values(&[label, REWRITE_FAILURE_REASONS[1]]),
            other_failures: metrics.rewrite_failures.with_label_values(&[label, REWRITE_FAILURE_REASONS[2]]),
            tools_removed: filter("tool_removed"),
            contexts_removed: filter("context_removed"),
            forms_tooled: filter("form_tooled"),
            leaks_removed: filter("leak_removed"),
        };
        Self {
            upstream,
            decoder: Some(decoder),
            rewriter: Some(rewriter),
            primed: None,
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

    /// The next non-empty piece of rewritten output, or the end.
    fn poll_output(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Failure>>> {
        loop {
            if self.finished {
                return Poll::Ready(None);
            }
            let result = match ready!(Pin::new(&mut self.upstream).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => self.process(&data),
                    // Trailers of the original body say nothing true about the rewritten one.
                    Err(_trailers) => continue,
                },
                Some(Err(error)) => Err(Failure::Upstream(error)),
                None => {
                    self.finished = true;
                    self.finish()
                }
            };
            match result {
                Ok(output) if output.is_empty() => continue,
                Ok(output) => return Poll::Ready(Some(Ok(Bytes::from(output)))),
                Err(failure) => {
                    self.fail(&failure);
                    return Poll::Ready(Some(Err(failure)));
                }
            }
        }
    }

    fn process(&mut self, chunk: &[u8]) -> Result<Vec<u8>, Failure> {
        let (Some(decoder), Some(rewriter)) = (self.decoder.as_mut(), self.rewriter.as_mut()) else {
            return Ok(Vec::new());
        };
        let mut output = Vec::new();
        let counter = &self.counters.rewritten_bytes;
        let mut sink = |decoded: &[u8]| {
            counter.inc_by(decoded.len() as u64);
            rewriter.write(decoded, &mut output)
        };
        decoder.decode(chunk, &mut sink).map_err(Failure::from)?;
        Ok(output)
    }

    fn finish(&mut self) -> Result<Vec<u8>, Failure> {
        let (Some(decoder), Some(mut rewriter)) = (self.decoder.take(), self.rewriter.take()) else {
            return Ok(Vec::new());
        };
        let mut output = Vec::new();
        let counter = &self.counters.rewritten_bytes;
        let mut sink = |decoded: &[u8]| {
            counter.inc_by(decoded.len() as u64);
            rewriter.write(decoded, &mut output)
        };
        decoder.finish(&mut sink).map_err(Failure::from)?;
        let summary = rewriter.end(&mut output).map_err(Failure::Rewrite)?;
        self.counters.count(&summary);
        if let Some(answer) = self.answer.take() {
            answer.finish();
        }
        Ok(output)
    }

    fn fail(&mut self, failure: &Failure) {
        self.finished = true;
        self.rewriter = None;
        self.decoder = None;
        let reason = failure.as_proxy_error().reason();
        match failure {
            Failure::Rewrite(RewriteError::MemoryLimitExceeded) => self.counters.memory_failures.inc(),
            Failure::Rewrite(RewriteError::UnsupportedEncoding) => self.counters.encoding_failures.inc(),
            Failure::Rewrite(_) => self.counters.other_failures.inc(),
            Failure::Upstream(_) | Failure::Decode => {}
        }
        tracing::warn!(site = %self.site, reason, "page stream stopped");
    }
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
