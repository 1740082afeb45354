//! The buffer between lol_html's output sink and the caller's `out` vector.
//!
//! lol_html owns its sink for the rewriter's whole life, while the gateway hands a fresh `out`
//! to every `write`. The sink therefore appends into a shared buffer that the page rewriter
//! drains after each call. It is an `Arc<Mutex<…>>` because the rewriter must be `Send`; the lock
//! is never contended (one rewriter, one thread at a time).

use std::sync::{Arc, Mutex, PoisonError};

use lol_html::OutputSink;

/// The sink half, handed to lol_html.
#[derive(Debug)]
pub(super) struct OutputBuffer {
    bytes: Arc<Mutex<Vec<u8>>>,
}

/// The reader half, kept by the page rewriter.
#[derive(Debug)]
pub(super) struct OutputReader {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl OutputBuffer {
    /// Creates the sink and the reader that drains it.
    pub(super) fn new() -> (Self, OutputReader) {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let reader = OutputReader { bytes: Arc::clone(&bytes) };
        (Self { bytes }, reader)
    }
}

impl OutputSink for OutputBuffer {
    fn handle_chunk(&mut self, chunk: &[u8]) {
        // A poisoned lock only means a panic elsewhere while appending; the bytes are still a
        // valid prefix of the output, so keep going rather than panic inside lol_html.
        self.bytes.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(chunk);
    }
}

impl OutputReader {
    /// Moves everything produced so far to the end of `out`.
    pub(super) fn drain_into(&self, out: &mut Vec<u8>) {
        let mut bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        out.append(&mut bytes);
    }

    /// Drops everything produced so far: used after an error, so that output of the failing
    /// call never reaches the caller.
    pub(super) fn discard(&self) {
        self.bytes.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}
