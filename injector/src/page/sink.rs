//! The sink half of a rewriter, handed to lol_html: each chunk of output goes through the
//! form hold-back (`forms::before_output`) into the page's output buffer.

use std::sync::Arc;

use lol_html::OutputSink;

use super::forms;
use super::shared::{SharedState, lock};

/// The sink half, handed to lol_html.
pub(super) struct PageSink {
    state: SharedState,
}

impl PageSink {
    pub(super) fn new(state: &SharedState) -> Self {
        Self { state: Arc::clone(state) }
    }
}

impl OutputSink for PageSink {
    fn handle_chunk(&mut self, chunk: &[u8]) {
        let mut page = lock(&self.state);
        // A held form may not grow without bound: past the limit it is released with what its
        // start tag and the preceding heading say.
        forms::before_output(&mut page, chunk.len());
        page.output.push(chunk);
    }
}
