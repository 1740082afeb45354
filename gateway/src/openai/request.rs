//! A client's chat completion request, read leniently where OpenAI clients differ (content as
//! text or parts, `null`s, fields the gateway does not use) and turned into what the model may
//! see: the client's tools filtered by the policy (a denied tool never reaches the model), every
//! string the model reads redacted with the user's view in one placeholder scope per request
//! (system, user, assistant and tool messages, earlier tool-call arguments, tool descriptions and
//! every string of their `parameters`) and capped, the conversation bounded. The scope restores
//! the originals in the tool calls the gateway returns to the client.
//!
//! A client tool is decided by its name alone (source unknown, no annotations): what a client
//! says about its tools are claims the gateway cannot check.

use super::ApiError;
use super::options::{self, WireOptions};
use crate::llm::{ChatRequest, Message, ToolCall, ToolSpec};
use policy::redact::add_counts;
use policy::{Counts, Placeholders, PolicyView, ToolDecision, ToolRef};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::HashMap;

/// Most messages in one request.
pub const MAX_MESSAGES: usize = 256;
/// Most tools in one request.
pub const MAX_TOOLS: usize = 128;
/// Longest text of one message passed on (bytes, after redaction); longer texts are cut.
pub const MAX_MESSAGE_TEXT: usize = 32 * 1024;
/// Most text in one conversation (bytes, after cutting); longer conversations are refused.
pub const MAX_CONVERSATION_TEXT: usize = 256 * 1024;
/// Longest tool description passed on.
const MAX_DESCRIPTION: usize = 1024;
/// Largest tool schema (serialized) passed on; tools with larger ones are withheld.
const MAX_SCHEMA: usize = 16 * 1024;
/// Longest tool name (OpenAI's limit).
const MAX_TOOL_NAME: usize = 64;

/// A chat completion request as OpenAI clients send it (the fields the gateway reads).
#[derive(Debug, Deserialize)]
pub struct ChatBody {
    /// The model asked for.
    #[serde(default)]
    pub model: Option<String>,
    /// The conversation.
    #[serde(default, deserialize_with = "null_as_default")]
    pub messages: Vec<WireMessage>,
    /// The tools the client offers.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tools: Vec<WireTool>,
    /// `none` keeps the tools from the model; other choices are left to the model.
    #[serde(default)]
    pub tool_choice: Option<Value>,
    /// Stream the answer as Server-Sent Events.
    #[serde(default, deserialize_with = "null_as_default")]
    pub stream: bool,
    /// `include_usage`: a last chunk with the token counts.
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    /// At most this many tokens (capped by the gateway's own `llm.max_tokens`).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// The newer name of `max_tokens`.
    #[serde(default)]
    pub max_completion_tokens: Option<u32>,
    /// How many answers; only 1 is served.
    #[serde(default)]
    pub n: Option<u32>,
    /// Sampling and format parameters (`options.rs`).
    #[serde(flatten)]
    pub options: WireOptions,
    /// Every other parameter: refused, never dropped silently.
    #[serde(flatten)]
    pub unsupported: serde_json::Map<String, Value>,
}

/// `stream_options`.
#[derive(Debug, Default, Deserialize)]
pub struct StreamOptions {
    /// Send a last chunk with the usage.
    #[serde(default, deserialize_with = "null_as_default")]
    pub include_usage: bool,
}

/// One message of the client's conversation.
#[derive(Debug, Deserialize)]
pub struct WireMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default, deserialize_with = "null_as_default")]
    tool_calls: Vec<WireToolCall>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

/// A tool call in an earlier assistant message.
#[derive(Debug, Deserialize)]
pub struct WireToolCall {
    #[serde(default)]
    id: String,
    function: WireFunctionCall,
}

/// Its function.
#[derive(Debug, Deserialize)]
pub struct WireFunctionCall {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// A tool the client offers.
#[derive(Debug, Deserialize)]
pub struct WireTool {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    function: WireFunction,
}

/// Its function.
#[derive(Debug, Deserialize)]
pub struct WireFunction {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
}

/// What the model gets, and what the gateway must know to check its answer.
#[derive(Debug)]
pub struct Prepared {
    /// The request for the model.
    pub request: ChatRequest,
    /// Tools offered to the model, by name.
    pub offered: HashMap<String, ToolRef>,
    /// Tools the policy kept from the model: (name, reason).
    pub withheld: Vec<(String, String)>,
    /// Redactions per kind.
    pub redactions: Counts,
    /// The request's placeholders: the model's tool calls are restored with it.
    pub scope: Placeholders,
    /// The last user message as the client sent it (only its keyed digest is audited).
    pub last_user_text: String,
}

/// Checks and prepares a client's request for the model. `tools_on` is false when the site
/// switches agent tools off: then every tool is withheld.
pub fn prepare(view: &PolicyView, body: &ChatBody, tools_on: bool) -> Result<Prepared, ApiError> {
    if let Some(name) = body.unsupported.keys().next() {
        return Err(ApiError::invalid(
            "unsupported_parameter",
            format!(
                "the parameter {:?} is not supported by this gateway (see its README for the parameters it passes on)",
                cap(name, 64)
            ),
        ));
    }
    if body.n.is_some_and(|n| n != 1) {
        return Err(ApiError::invalid("unsupported_parameter", "only n = 1 is supported"));
    }
    if body.messages.is_empty() {
        return Err(ApiError::invalid("invalid_request", "messages must not be empty"));
    }
    if body.messages.len() > MAX_MESSAGES {
        return Err(ApiError::invalid(
            "too_many_messages",
            format!("at most {MAX_MESSAGES} messages per request"),
        ));
    }
    if body.tools.len() > MAX_TOOLS {
        return Err(ApiError::invalid("too_many_tools", format!("at most {MAX_TOOLS} tools per request")));
    }
    let use_tools = tools_on && body.tool_choice.as_ref().and_then(Value::as_str) != Some("none");
    let mut redactions = Counts::new();
    let mut scope = Placeholders::new();
    let mut withheld = Vec::new();
    let mut offered = HashMap::new();
    let mut tools = Vec::new();
    for tool in &body.tools {
        let name = &tool.function.name;
        if tool.kind.as_deref().is_some_and(|kind| kind != "function") {
            return Err(ApiError::invalid("invalid_tool", "only tools of type \"function\" are supported"));
        }
        if !valid_tool_name(name) {
            return Err(ApiError::invalid(
                "invalid_tool",
                format!("tool names are 1 to {MAX_TOOL_NAME} letters, digits, '_', '-' or '.'"),
            ));
        }
        if offered.contains_key(name) || withheld.iter().any(|(withheld, _)| withheld == name) {
            return Err(ApiError::invalid("invalid_tool", format!("the tool {name} is listed twice")));
        }
        if !use_tools {
            withheld.push((name.clone(), "tools are off for this request".into()));
            continue;
        }
        let reference = ToolRef::named(name.as_str());
        if let ToolDecision::Deny { reason } = view.tool(&reference).0 {
            withheld.push((name.clone(), reason.to_string()));
            continue;
        }
        let mut parameters = match &tool.function.parameters {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => serde_json::json!({"type": "object", "properties": {}}),
        };
        if parameters.to_string().len() > MAX_SCHEMA {
            withheld.push((name.clone(), "its schema is too large".into()));
            continue;
        }
        add_counts(&mut redactions, view.redact_json(&mut parameters, &mut scope));
        let description = view.redact(tool.function.description.as_deref().unwrap_or(""), &mut scope);
        add_counts(&mut redactions, description.counts);
        tools.push(ToolSpec {
            name: name.clone(),
            description: cap(&description.text, MAX_DESCRIPTION),
            parameters,
        });
        offered.insert(name.clone(), reference);
    }

    let mut messages = Vec::with_capacity(body.messages.len());
    let mut total = 0;
    let mut last_user_text = String::new();
    for message in &body.messages {
        let raw = text_of(message)?;
        let redacted = view.redact(&raw, &mut scope);
        add_counts(&mut redactions, redacted.counts);
        let text = cap(&redacted.text, MAX_MESSAGE_TEXT);
        total += text.len();
        let converted = match message.role.as_str() {
            "system" | "developer" => Message::System(text),
            "user" => {
                last_user_text = raw;
                Message::User(text)
            }
            "assistant" => {
                let tool_calls =
                    earlier_calls(view, message, &offered, &mut scope, &mut redactions, &mut total)?;
                Message::Assistant { content: (!text.is_empty()).then_some(text), tool_calls }
            }
            "tool" => {
                let call_id = message.tool_call_id.clone().filter(|id| !id.is_empty()).ok_or_else(|| {
                    ApiError::invalid("invalid_request", "a tool message needs its tool_call_id")
                })?;
                Message::Tool { call_id, content: text }
            }
            other => {
                return Err(ApiError::invalid(
                    "invalid_request",
                    format!("messages with role {:?} are not supported", cap(other, 32)),
                ));
            }
        };
        messages.push(converted);
    }
    if total > MAX_CONVERSATION_TEXT {
        return Err(ApiError::invalid(
            "context_length_exceeded",
            format!("the conversation has more than {MAX_CONVERSATION_TEXT} bytes of text; shorten it"),
        ));
    }
    let max_tokens = match (body.max_tokens, body.max_completion_tokens) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let choice = body.tool_choice.as_ref();
    let options =
        options::check(view, &body.options, choice, &offered, &withheld, &mut scope, &mut redactions)?;
    Ok(Prepared {
        request: ChatRequest { messages, tools, max_tokens, options },
        offered,
        withheld,
        redactions,
        scope,
        last_user_text,
    })
}

/// Tool calls in an earlier assistant message, checked against the policy, not against this
/// request's `tools`: a client's follow-up may send the history without the tools (VOIX does).
/// A call of a tool the policy denies would show the model a denied tool, so the request is
/// refused, naming the policy's reason (the gateway never returns such calls).
fn earlier_calls(
    view: &PolicyView,
    message: &WireMessage,
    offered: &HashMap<String, ToolRef>,
    scope: &mut Placeholders,
    redactions: &mut Counts,
    total: &mut usize,
) -> Result<Vec<ToolCall>, ApiError> {
    let mut calls = Vec::with_capacity(message.tool_calls.len());
    for call in &message.tool_calls {
        let name = &call.function.name;
        let denied = match offered.contains_key(name) {
            true => None,
            false if !valid_tool_name(name) => Some("it is not a valid tool name".to_owned()),
            false => match view.tool(&ToolRef::named(name.as_str())).0 {
                ToolDecision::Deny { reason } => Some(format!("the policy denies it: {reason}")),
                _ => None,
            },
        };
        if let Some(reason) = denied {
            return Err(ApiError::invalid(
                "tool_not_available",
                format!(
                    "the conversation contains a call of {}, which is not available to you on this site \
                     ({reason}); remove it from the history",
                    cap(name, MAX_TOOL_NAME)
                ),
            ));
        }
        // Arguments are JSON text: each string is redacted on its own, so a value never spans
        // an escape; text that is not JSON is redacted as text.
        let parsed = match &call.function.arguments {
            Some(Value::String(text)) => serde_json::from_str::<Value>(text).map_err(|_| text.clone()),
            Some(Value::Null) | None => Ok(Value::Object(serde_json::Map::new())),
            Some(object) => Ok(object.clone()),
        };
        let arguments = match parsed {
            Ok(mut value) => {
                add_counts(redactions, view.redact_json(&mut value, scope));
                value.to_string()
            }
            Err(text) => {
                let redacted = view.redact(&text, scope);
                add_counts(redactions, redacted.counts);
                redacted.text
            }
        };
        let arguments = cap(&arguments, MAX_MESSAGE_TEXT);
        *total += arguments.len();
        calls.push(ToolCall { id: call.id.clone(), name: call.function.name.clone(), arguments });
    }
    Ok(calls)
}

/// A message's text: a string, or text parts (joined by newlines); other parts are refused.
fn text_of(message: &WireMessage) -> Result<String, ApiError> {
    match &message.content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::with_capacity(parts.len());
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(text)) => texts.push(text),
                    _ => {
                        return Err(ApiError::invalid(
                            "unsupported_content",
                            "only text content is supported (no images, audio or files)",
                        ));
                    }
                }
            }
            Ok(texts.join("\n"))
        }
        Some(_) => Err(ApiError::invalid("invalid_request", "message content must be text or text parts")),
    }
}

/// OpenAI's function names (`[A-Za-z0-9_-]{1,64}`), plus `.` as page catalogs use it.
fn valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

/// Length caps are the agent's (one marking rule for both ways in).
pub use crate::agent::cap;

/// Reads `null` as the type's default (clients send `"tool_calls": null` and the like).
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
