//! Why a call to the language model failed, as a bounded reason for metrics and audit and as a
//! sentence the user can act on. Nothing here carries prompts, answers or keys; the one piece
//! of upstream text (`Status::message`) is kept out of `Display` because servers may echo the
//! request in their error messages.

use std::fmt;

/// A failed call to the language model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// No connection could be opened (refused, DNS, TLS).
    #[error("the language model is unreachable: {0}")]
    Unreachable(String),
    /// A time limit passed.
    #[error("the language model timed out ({0})")]
    Timeout(TimeoutPhase),
    /// The server answered with an error status (after the retries, for 5xx).
    #[error("the language model answered HTTP {status}")]
    Status {
        /// The HTTP status (or the `code` of an error sent inside the stream).
        status: u16,
        /// The server's own message, bounded and single-line. May quote the request: show it
        /// to operators deliberately, never log it by default.
        message: String,
    },
    /// The answer does not follow the OpenAI chat completions format, or is too large.
    #[error("the language model's answer is malformed: {0}")]
    Protocol(String),
    /// The server kept answering 429 after the retries.
    #[error("the language model is rate limited")]
    RateLimited,
    /// The connection broke after the answer had started (nothing is retried then).
    #[error("the connection to the language model broke mid-answer")]
    Interrupted,
    /// The configuration cannot be used (bad base URL, unreadable API key).
    #[error("the language model configuration is unusable: {0}")]
    Config(String),
}

/// Which time limit passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the connection.
    Connect,
    /// Waiting for the first byte of the answer.
    FirstToken,
    /// Waiting for the next chunk of an answer that had started.
    Idle,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect",
            Self::FirstToken => "first token",
            Self::Idle => "idle",
        })
    }
}

impl LlmError {
    /// Every value [`reason`](Self::reason) returns (metrics start each at 0).
    pub const REASONS: [&'static str; 9] = [
        "llm_unreachable",
        "llm_connect_timeout",
        "llm_first_token_timeout",
        "llm_idle_timeout",
        "llm_status",
        "llm_protocol",
        "llm_rate_limited",
        "llm_interrupted",
        "llm_config",
    ];

    /// A low-cardinality label for metrics and audit.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Unreachable(_) => "llm_unreachable",
            Self::Timeout(TimeoutPhase::Connect) => "llm_connect_timeout",
            Self::Timeout(TimeoutPhase::FirstToken) => "llm_first_token_timeout",
            Self::Timeout(TimeoutPhase::Idle) => "llm_idle_timeout",
            Self::Status { .. } => "llm_status",
            Self::Protocol(_) => "llm_protocol",
            Self::RateLimited => "llm_rate_limited",
            Self::Interrupted => "llm_interrupted",
            Self::Config(_) => "llm_config",
        }
    }

    /// What the assistant panel shows: what happened and what to do, without secrets or
    /// upstream text.
    pub fn user_message(&self) -> String {
        match self {
            Self::Unreachable(_) => {
                "The language model cannot be reached right now. Try again in a moment.".into()
            }
            Self::Timeout(TimeoutPhase::Connect) => {
                "The language model did not accept a connection in time. Try again in a moment.".into()
            }
            Self::Timeout(TimeoutPhase::FirstToken) => {
                "The language model took too long to start answering. Try again, perhaps with a shorter request."
                    .into()
            }
            Self::Timeout(TimeoutPhase::Idle) | Self::Interrupted => {
                "The language model stopped answering mid-way. Try again.".into()
            }
            Self::Status { status: 400 | 413 | 422, .. } => format!(
                "The language model refused the request (HTTP {}); the conversation may be too long for it.",
                self.status().unwrap_or_default()
            ),
            Self::Status { status: status @ (401 | 403), .. } => format!(
                "The language model refused the gateway's credentials (HTTP {status}). Tell the administrator."
            ),
            Self::Status { status, .. } if *status >= 500 => {
                format!("The language model failed (HTTP {status}). Try again in a moment.")
            }
            Self::Status { status, .. } => format!("The language model refused the request (HTTP {status})."),
            Self::Protocol(_) => "The language model's answer could not be understood.".into(),
            Self::RateLimited => "The language model is busy right now. Try again in a moment.".into(),
            Self::Config(_) => "The language model is not configured correctly. Tell the administrator.".into(),
        }
    }

    /// Whether a failure before the first byte of the answer is worth another try.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            Self::Unreachable(_) | Self::Timeout(_) | Self::RateLimited | Self::Interrupted => true,
            Self::Status { status, .. } => *status == 429 || *status >= 500,
            Self::Protocol(_) | Self::Config(_) => false,
        }
    }

    fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_lists_every_reason() {
        let every = [
            LlmError::Unreachable(String::new()),
            LlmError::Timeout(TimeoutPhase::Connect),
            LlmError::Timeout(TimeoutPhase::FirstToken),
            LlmError::Timeout(TimeoutPhase::Idle),
            LlmError::Status { status: 500, message: String::new() },
            LlmError::Protocol(String::new()),
            LlmError::RateLimited,
            LlmError::Interrupted,
            LlmError::Config(String::new()),
        ];
        let reasons: Vec<_> = every.iter().map(LlmError::reason).collect();
        assert_eq!(reasons, LlmError::REASONS);
    }
}
