//! The client for the language model: any server that speaks the OpenAI chat completions API
//! (vLLM, Ollama, llama.cpp's `llama-server`, LiteLLM, hosted APIs). The agent loop streams
//! answers through [`LlmClient::stream`]; the OpenAI-compatible endpoint uses
//! [`LlmClient::complete`].
//!
//! Servers differ in small ways this module absorbs: the usage chunk may be missing, tool-call
//! deltas may lack `index` or repeat `id`, arguments arrive in pieces (or, from some proxies,
//! as an object), and `finish_reason` may say `stop` for an answer with tool calls — so tool
//! calls are reported whenever any were assembled, whatever the finish reason.
//!
//! Failures before the first byte of an answer are retried (connect errors, 429, 5xx,
//! timeouts); once an answer has started nothing is retried, because its text may already be
//! on the user's screen. Dropping a [`ChatStream`] closes the connection, so the server stops
//! generating. Keys, prompts and answers are never logged.
//!
//! Layer 3 of the gateway (ARCHITECTURE.md, "Code map"): may import `config`, `net`.

mod client;
mod error;
mod sse;
mod stream;
mod tool_calls;
mod wire;

#[cfg(all(test, feature = "demo"))]
mod tests;

pub use crate::config::LlmConfig;
pub use client::LlmClient;
pub use error::{LlmError, TimeoutPhase};
pub use stream::ChatStream;

/// One request for an answer.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call; empty for none.
    pub tools: Vec<ToolSpec>,
    /// At most this many tokens (capped by the configured `max_tokens`).
    pub max_tokens: Option<u32>,
    /// Sampling and format parameters a client asked for, already checked.
    pub options: ModelOptions,
}

/// The chat completion parameters passed on to the model server when a client sets them
/// (`/v1`); the panel's turns leave them at their defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOptions {
    /// `temperature`, 0 to 2.
    pub temperature: Option<f64>,
    /// `top_p`, 0 to 1.
    pub top_p: Option<f64>,
    /// `seed`.
    pub seed: Option<i64>,
    /// `stop`: up to four sequences, redacted like every text the model server reads.
    pub stop: Vec<String>,
    /// `presence_penalty`, −2 to 2.
    pub presence_penalty: Option<f64>,
    /// `frequency_penalty`, −2 to 2.
    pub frequency_penalty: Option<f64>,
    /// `response_format` (`text`, `json_object`, or `json_schema` with its strings redacted).
    pub response_format: Option<serde_json::Value>,
    /// `tool_choice`: `auto`, `required`, or a named function the model is offered.
    pub tool_choice: Option<serde_json::Value>,
    /// `parallel_tool_calls`.
    pub parallel_tool_calls: Option<bool>,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Instructions from the gateway.
    System(String),
    /// What the user wrote (or data the gateway presents as the user's context).
    User(String),
    /// An earlier answer of the model.
    Assistant {
        /// Its text, if any.
        content: Option<String>,
        /// The tools it called.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of a tool call.
    Tool {
        /// The [`ToolCall::id`] this answers.
        call_id: String,
        /// The result as text.
        content: String,
    },
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The function name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A JSON Schema (an object schema) for its arguments.
    pub parameters: serde_json::Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call id (generated as `call_N` when the server sent none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: raw JSON text as the model wrote it (`{}` when it wrote nothing). It is
    /// not checked here; the caller validates it against the tool's schema.
    pub arguments: String,
}

/// Tokens counted by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// One event of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// Every tool call of the answer, assembled from the deltas (by index), once the answer ends.
    ToolCalls(Vec<ToolCall>),
    /// The answer is complete; always the last event.
    Done {
        /// `stop`, `length`, `tool_calls`… as the server said.
        finish_reason: Option<String>,
        /// Token counts, when the server sent them.
        usage: Option<Usage>,
    },
}

/// A whole answer (non-streaming).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The answer's text, if any.
    pub content: Option<String>,
    /// The tools it called.
    pub tool_calls: Vec<ToolCall>,
    /// Why the answer ended.
    pub finish_reason: Option<String>,
    /// Token counts, when the server sent them.
    pub usage: Option<Usage>,
}
