//! The OpenAI chat completions format on the wire: the request body the gateway sends, and the
//! chunks and answers it reads back. Parsing is lenient where servers legitimately differ
//! (missing fields, `null`s, arguments as an object) and strict where it matters (valid JSON).

use super::{ChatRequest, LlmError, Message, ToolSpec, Usage};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

/// The JSON body of a chat completion request.
pub(crate) fn request_body(model: &str, max_tokens: u32, request: &ChatRequest, stream: bool) -> Bytes {
    let mut body = json!({
        "model": model,
        "messages": request.messages.iter().map(message).collect::<Vec<_>>(),
        "max_tokens": request.max_tokens.map_or(max_tokens, |asked| asked.min(max_tokens)),
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({ "include_usage": true });
    }
    // Some servers refuse an empty `tools` array, so it is left out when there are none (and
    // with it what only makes sense with tools).
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(request.tools.iter().map(tool).collect());
        let options = &request.options;
        set(&mut body, "tool_choice", options.tool_choice.clone());
        set(&mut body, "parallel_tool_calls", options.parallel_tool_calls.map(Value::Bool));
    }
    let options = &request.options;
    set(&mut body, "temperature", options.temperature.map(Value::from));
    set(&mut body, "top_p", options.top_p.map(Value::from));
    set(&mut body, "seed", options.seed.map(Value::from));
    set(&mut body, "presence_penalty", options.presence_penalty.map(Value::from));
    set(&mut body, "frequency_penalty", options.frequency_penalty.map(Value::from));
    set(&mut body, "response_format", options.response_format.clone());
    if !options.stop.is_empty() {
        body["stop"] = json!(options.stop);
    }
    Bytes::from(body.to_string())
}

fn set(body: &mut Value, name: &str, value: Option<Value>) {
    if let Some(value) = value {
        body[name] = value;
    }
}

fn message(message: &Message) -> Value {
    match message {
        Message::System(content) => json!({ "role": "system", "content": content }),
        Message::User(content) => json!({ "role": "user", "content": content }),
        Message::Assistant { content, tool_calls } => {
            let mut value = json!({ "role": "assistant", "content": content });
            if !tool_calls.is_empty() {
                value["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": { "name": call.name, "arguments": call.arguments },
                        })
                    })
                    .collect();
            }
            value
        }
        Message::Tool { call_id, content } => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
    }
}

fn tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": { "name": tool.name, "description": tool.description, "parameters": tool.parameters },
    })
}

/// One `data:` payload of a streamed answer.
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

/// One choice of a chunk; only choice 0 is read (the gateway never asks for more).
#[derive(Debug, Deserialize)]
pub(crate) struct ChunkChoice {
    #[serde(default)]
    pub(crate) index: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) delta: Delta,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

/// What a chunk adds to the answer.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) tool_calls: Vec<ToolCallDelta>,
}

/// A piece of a tool call.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub(crate) index: Option<usize>,
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) function: FunctionDelta,
}

/// A piece of a tool call's function.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub(crate) name: Option<String>,
    /// A piece of JSON text; some proxies send the whole arguments as an object instead.
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
}

/// Token counts as servers send them.
#[derive(Debug, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Self { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens }
    }
}

/// A whole (non-streamed) answer.
#[derive(Debug, Deserialize)]
pub(crate) struct Completion {
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
    #[serde(default)]
    pub(crate) error: Option<Value>,
}

/// One choice of a whole answer.
#[derive(Debug, Deserialize)]
pub(crate) struct CompletionChoice {
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) message: CompletionMessage,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

/// The message of a whole answer; its tool calls have the same shape as deltas.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CompletionMessage {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) tool_calls: Vec<ToolCallDelta>,
}

/// Parses JSON from the server; errors name the position only, never the text, which may be
/// the model's answer.
pub(crate) fn parse<'a, T: Deserialize<'a>>(what: &str, text: &'a [u8]) -> Result<T, LlmError> {
    serde_json::from_slice(text).map_err(|error| {
        LlmError::Protocol(format!(
            "{what} is not the expected JSON ({:?} error at line {}, column {})",
            error.classify(),
            error.line(),
            error.column()
        ))
    })
}

/// The error a server reported inside a body (`{"error": {...}}` or `{"error": "..."}`).
pub(crate) fn upstream_error(error: &Value, default_status: u16) -> LlmError {
    let status = error
        .get("code")
        .and_then(|code| code.as_u64().or_else(|| code.as_str().and_then(|text| text.parse().ok())))
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..600).contains(code))
        .unwrap_or(default_status);
    let message = error.get("message").and_then(Value::as_str).or_else(|| error.as_str()).unwrap_or("");
    LlmError::Status { status, message: bounded_message(message) }
}

/// The message of an error body (a JSON `error`, or the first line of plain text).
pub(crate) fn status_message(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => match value.get("error").or_else(|| value.get("detail")) {
            Some(Value::String(text)) => bounded_message(text),
            Some(error) => bounded_message(error.get("message").and_then(Value::as_str).unwrap_or("")),
            None => String::new(),
        },
        Err(_) => bounded_message(&String::from_utf8_lossy(body)),
    }
}

/// At most 200 characters on one line.
fn bounded_message(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(200).collect::<String>().trim().to_owned()
}

/// Reads `null` as the type's default, as some servers send `"choices": null` or `"delta": null`.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
