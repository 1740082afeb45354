//! A streamed answer: reads the server's event stream chunk by chunk, hands out text as it
//! arrives and the tool calls once the answer ends. The body is read only when the caller asks
//! for the next event, so a slow reader slows the server instead of filling memory, and
//! dropping the stream drops the connection, which tells the server to stop generating.

use super::sse::SseDecoder;
use super::tool_calls::ToolCallAssembler;
use super::wire::{self, Chunk};
use super::{ChatEvent, LlmError, TimeoutPhase, Usage};
use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use std::collections::VecDeque;
use std::time::Duration;

/// The largest event (one chunk of the answer) accepted.
pub(crate) const MAX_EVENT_BYTES: usize = 256 * 1024;
/// The most bytes one streamed answer may have.
pub(crate) const MAX_STREAM_BYTES: usize = 16 * 1024 * 1024;

/// A streamed answer; call [`ChatStream::next`] until it returns `None`.
pub struct ChatStream {
    body: Incoming,
    decoder: SseDecoder,
    ready: VecDeque<ChatEvent>,
    tool_calls: ToolCallAssembler,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    idle_timeout: Duration,
    received_bytes: usize,
    /// The error to report once the events before it have been handed out.
    failure: Option<LlmError>,
    /// Set once the answer is complete or has failed: nothing more is read.
    ended: bool,
}

impl ChatStream {
    /// A stream whose first bytes have already been read from `body`.
    pub(crate) fn new(body: Incoming, first_bytes: &Bytes, idle_timeout: Duration) -> Self {
        let mut stream = Self {
            body,
            decoder: SseDecoder::new(MAX_EVENT_BYTES),
            ready: VecDeque::new(),
            tool_calls: ToolCallAssembler::default(),
            finish_reason: None,
            usage: None,
            idle_timeout,
            received_bytes: 0,
            failure: None,
            ended: false,
        };
        stream.feed_or_fail(first_bytes);
        stream
    }

    /// The next event: text deltas as they come, then `ToolCalls` (if any) and `Done`; or an
    /// error, after which the stream ends. `None` once the answer is over.
    pub async fn next(&mut self) -> Option<Result<ChatEvent, LlmError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if let Some(error) = self.failure.take() {
                return Some(Err(error));
            }
            if self.ended {
                return None;
            }
            if let Err(error) = self.read().await {
                self.fail(error);
            }
        }
    }

    /// Reads one frame of the body, bounded by the idle timeout.
    async fn read(&mut self) -> Result<(), LlmError> {
        let frame = tokio::time::timeout(self.idle_timeout, self.body.frame())
            .await
            .map_err(|_elapsed| LlmError::Timeout(TimeoutPhase::Idle))?;
        match frame {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    self.feed_or_fail(&data);
                }
                Ok(())
            }
            Some(Err(_)) => Err(LlmError::Interrupted),
            None => {
                for event in self.decoder.finish() {
                    if !self.ended {
                        self.event(&event)?;
                    }
                }
                match (self.ended, &self.finish_reason) {
                    (true, _) => Ok(()),
                    // Some servers end the body without `[DONE]` after the last chunk.
                    (false, Some(_)) => self.complete(),
                    (false, None) => Err(LlmError::Interrupted),
                }
            }
        }
    }

    fn feed_or_fail(&mut self, bytes: &[u8]) {
        if let Err(error) = self.feed(bytes) {
            self.fail(error);
        }
    }

    fn feed(&mut self, bytes: &[u8]) -> Result<(), LlmError> {
        self.received_bytes += bytes.len();
        if self.received_bytes > MAX_STREAM_BYTES {
            return Err(LlmError::Protocol(format!("the answer is larger than {MAX_STREAM_BYTES} bytes")));
        }
        let events = self.decoder.push(bytes).map_err(|error| LlmError::Protocol(error.to_string()))?;
        for event in events {
            if self.ended {
                break;
            }
            self.event(&event)?;
        }
        Ok(())
    }

    /// Applies one event's data: `[DONE]`, an error, or a chunk of the answer.
    fn event(&mut self, data: &[u8]) -> Result<(), LlmError> {
        match data.trim_ascii() {
            b"[DONE]" => return self.complete(),
            // An event with empty data carries nothing (some servers send them as keep-alives).
            b"" => return Ok(()),
            _ => {}
        }
        let chunk: Chunk = wire::parse("a streamed chunk", data)?;
        if let Some(error) = chunk.error {
            return Err(wire::upstream_error(&error, 502));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        // The gateway never asks for several choices; a server that sends them anyway is read
        // as far as the first one goes.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                self.ready.push_back(ChatEvent::TextDelta(text));
            }
            for delta in choice.delta.tool_calls {
                self.tool_calls.push(delta)?;
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(())
    }

    /// The answer is complete: queue the tool calls and `Done`.
    fn complete(&mut self) -> Result<(), LlmError> {
        self.ended = true;
        let calls = std::mem::take(&mut self.tool_calls).finish()?;
        if !calls.is_empty() {
            self.ready.push_back(ChatEvent::ToolCalls(calls));
        }
        self.ready.push_back(ChatEvent::Done { finish_reason: self.finish_reason.take(), usage: self.usage });
        Ok(())
    }

    /// Ends the stream with `error`, after the events already decoded; nothing more is read.
    fn fail(&mut self, error: LlmError) {
        if self.failure.is_none() && !self.ready.iter().any(|event| matches!(event, ChatEvent::Done { .. })) {
            self.ready.retain(|event| matches!(event, ChatEvent::TextDelta(_)));
            self.failure = Some(error);
        }
        self.ended = true;
    }
}

impl std::fmt::Debug for ChatStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatStream").field("ended", &self.ended).finish_non_exhaustive()
    }
}
