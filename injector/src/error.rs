//! The page rewriter's error type.
//!
//! Every error is fatal for the response: the gateway stops the stream (fails closed) and the
//! rewriter refuses further input. Variants stay coarse because the caller only needs to tell a
//! resource limit (a metric and an operator hint) from everything else.

/// Why a page could not be rewritten.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The page needed more parser memory than [`PageSettings::memory_limit`] allows (for
    /// example one enormous tag split across chunks).
    ///
    /// [`PageSettings::memory_limit`]: crate::PageSettings::memory_limit
    #[error("the page exceeded the rewriter memory limit")]
    MemoryLimitExceeded,
    /// Any other rewriter failure (markup lol_html refuses to guess about in strict mode, a
    /// handler failure); the text is lol_html's description (at most a tag name from the page).
    #[error("the page could not be rewritten: {0}")]
    Malformed(String),
    /// A filtering rewriter met a page in an encoding lol_html cannot parse (UTF-16 and other
    /// non-ASCII-compatible encodings); it refuses rather than pass unfiltered content through.
    #[error("the page is in an encoding the filtering rewriter cannot parse")]
    UnsupportedEncoding,
    /// `write` or `end` was called after an earlier error; nothing more is processed.
    #[error("the page rewriter already failed and accepts no more input")]
    AlreadyFailed,
}

impl From<lol_html::errors::RewritingError> for RewriteError {
    fn from(error: lol_html::errors::RewritingError) -> Self {
        match error {
            lol_html::errors::RewritingError::MemoryLimitExceeded(_) => Self::MemoryLimitExceeded,
            other => Self::Malformed(other.to_string()),
        }
    }
}
