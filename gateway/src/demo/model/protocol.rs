//! The OpenAI chat completions format as the stand-in speaks it: the request it reads and the
//! answers it writes, whole or as Server-Sent Events. Streams are cut into several chunks, and
//! tool-call arguments into several deltas, the way real servers send them.

use super::MODEL_ID;
use serde::Deserialize;
use serde_json::{Value, json};

/// The stand-in's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
    /// Plain text.
    Text(String),
    /// One tool call.
    Call {
        /// The tool's name.
        name: String,
        /// Its arguments (a JSON object).
        arguments: Value,
    },
}

/// A chat completion request (the fields the stand-in reads).
#[derive(Debug, Deserialize)]
pub(super) struct ChatBody {
    #[serde(default)]
    pub(super) messages: Vec<WireMessage>,
    #[serde(default)]
    pub(super) tools: Vec<WireTool>,
    #[serde(default)]
    pub(super) stream: bool,
    #[serde(default)]
    pub(super) stream_options: Option<StreamOptions>,
}

/// `stream_options`.
#[derive(Debug, Deserialize)]
pub(super) struct StreamOptions {
    #[serde(default)]
    pub(super) include_usage: bool,
}

/// One message of the conversation.
#[derive(Debug, Deserialize)]
pub(super) struct WireMessage {
    pub(super) role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    pub(super) tool_calls: Vec<WireToolCall>,
    #[serde(default)]
    pub(super) tool_call_id: Option<String>,
}

impl WireMessage {
    /// The text, whether `content` is a string or a list of text parts.
    pub(super) fn text(&self) -> String {
        match &self.content {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

/// A tool call in an earlier assistant message.
#[derive(Debug, Deserialize)]
pub(super) struct WireToolCall {
    #[serde(default)]
    pub(super) id: String,
    pub(super) function: WireFunction,
}

/// A function name (and, in tool definitions, its description and schema).
#[derive(Debug, Deserialize)]
pub(super) struct WireFunction {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) parameters: Option<Value>,
    /// In a call: its arguments as JSON text.
    #[serde(default)]
    pub(super) arguments: Option<String>,
}

/// A tool definition.
#[derive(Debug, Deserialize)]
pub(super) struct WireTool {
    pub(super) function: WireFunction,
}

/// Token counts the stand-in reports: words in, pieces out (it has no tokenizer).
fn usage(request: &ChatBody, pieces: usize) -> Value {
    let input: usize = request.messages.iter().map(|message| message.text().split_whitespace().count()).sum();
    json!({ "prompt_tokens": input, "completion_tokens": pieces, "total_tokens": input + pieces })
}

/// The answer as one JSON body (`stream: false`).
pub(super) fn whole(request: &ChatBody, answer: &Answer, id: &str) -> String {
    let (message, finish_reason, pieces) = match answer {
        Answer::Text(text) => {
            (json!({ "role": "assistant", "content": text }), "stop", text_pieces(text).len())
        }
        Answer::Call { name, arguments } => {
            let arguments = arguments.to_string();
            let pieces = argument_pieces(&arguments).len();
            let call = json!({ "id": call_id(id), "type": "function", "function": { "name": name, "arguments": arguments } });
            (json!({ "role": "assistant", "content": null, "tool_calls": [call] }), "tool_calls", pieces)
        }
    };
    json!({
        "id": id,
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_ID,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
        "usage": usage(request, pieces),
    })
    .to_string()
}

/// The answer as Server-Sent Events, one string per event, ending with `data: [DONE]`.
pub(super) fn events(request: &ChatBody, answer: &Answer, id: &str) -> Vec<String> {
    let chunk = |delta: Value, finish_reason: Option<&str>| {
        let chunk = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": MODEL_ID,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
        });
        crate::http::sse_frame(None, &chunk.to_string())
    };
    let mut events = vec![chunk(json!({ "role": "assistant", "content": "" }), None)];
    let (finish_reason, pieces) = match answer {
        Answer::Text(text) => {
            let pieces = text_pieces(text);
            events.extend(pieces.iter().map(|piece| chunk(json!({ "content": piece }), None)));
            ("stop", pieces.len())
        }
        Answer::Call { name, arguments } => {
            let arguments = arguments.to_string();
            let first = json!({ "tool_calls": [{
                "index": 0, "id": call_id(id), "type": "function", "function": { "name": name, "arguments": "" },
            }] });
            events.push(chunk(first, None));
            let pieces = argument_pieces(&arguments);
            events.extend(pieces.iter().map(|piece| {
                chunk(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }), None)
            }));
            ("tool_calls", pieces.len())
        }
    };
    events.push(chunk(json!({}), Some(finish_reason)));
    if request.stream_options.as_ref().is_some_and(|options| options.include_usage) {
        let chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": MODEL_ID,
            "choices": [], "usage": usage(request, pieces),
        });
        events.push(crate::http::sse_frame(None, &chunk.to_string()));
    }
    events.push(crate::http::sse_frame(None, "[DONE]"));
    events
}

/// The `/v1/models` answer, which says what this server is.
pub(super) fn models() -> String {
    json!({
        "object": "list",
        "data": [{
            "id": MODEL_ID,
            "object": "model",
            "created": 0,
            "owned_by": "toolgate demo stand-in (deterministic, not a language model)",
        }],
    })
    .to_string()
}

/// An OpenAI-style error body.
pub(super) fn error(status: u16, message: &str) -> String {
    let kind = if status >= 500 { "server_error" } else { "invalid_request_error" };
    json!({ "error": { "message": message, "type": kind, "code": status } }).to_string()
}

fn call_id(id: &str) -> String {
    format!("call_{}", id.trim_start_matches("chatcmpl-"))
}

/// Text in pieces of up to three words, spaces kept, as tokens arrive.
fn text_pieces(text: &str) -> Vec<String> {
    let parts: Vec<&str> = text.split_inclusive(' ').collect();
    parts.chunks(3).map(|piece| piece.concat()).collect()
}

/// Argument text in pieces of up to eight characters, so JSON is split mid-token.
fn argument_pieces(arguments: &str) -> Vec<String> {
    let chars: Vec<char> = arguments.chars().collect();
    chars.chunks(8).map(|piece| piece.iter().collect()).collect()
}
