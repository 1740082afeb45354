//! What the client reads back, in OpenAI's format: a whole `chat.completion`, or the
//! `chat.completion.chunk` objects of a stream.

use super::calls::Checked;
use super::exchange::Exchange;
use crate::llm::{ToolCall, Usage};
use serde_json::{Value, json};

/// The JSON answer every endpoint uses (`response::json` reads well at the call sites).
pub use crate::http::json;

/// A whole answer: the model's text followed by the refusals, and the allowed calls.
pub fn completion(
    exchange: &Exchange,
    text: Option<String>,
    checked: &Checked,
    finish_reason: Option<&str>,
    usage: Option<Usage>,
) -> Value {
    let refusals = checked.refusal_text();
    let content = match (text.filter(|text| !text.is_empty()), refusals.is_empty()) {
        (Some(text), true) => Some(text),
        (Some(text), false) => Some(format!("{text}\n\n{refusals}")),
        (None, false) => Some(refusals),
        (None, true) => None,
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !checked.allowed.is_empty() {
        message["tool_calls"] = checked.allowed.iter().map(tool_call).collect();
    }
    json!({
        "id": exchange.id,
        "object": "chat.completion",
        "created": exchange.created,
        "model": exchange.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish(checked, finish_reason),
            "logprobs": null,
        }],
        "usage": usage_value(usage),
    })
}

/// One chunk of a stream with `delta` for choice 0.
pub fn chunk(exchange: &Exchange, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": exchange.id,
        "object": "chat.completion.chunk",
        "created": exchange.created,
        "model": exchange.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": null}],
    })
}

/// The last chunk of a stream that asked for `include_usage`: no choices, the token counts.
pub fn usage_chunk(exchange: &Exchange, usage: Option<Usage>) -> Value {
    json!({
        "id": exchange.id,
        "object": "chat.completion.chunk",
        "created": exchange.created,
        "model": exchange.model,
        "choices": [],
        "usage": usage_value(usage),
    })
}

/// The delta that carries the allowed tool calls, each whole.
pub fn tool_calls_delta(calls: &[ToolCall]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let mut value = tool_call(call);
            value["index"] = json!(index);
            value
        })
        .collect();
    json!({"tool_calls": calls})
}

/// Why the answer ended, as the client should read it: `tool_calls` only when calls remain.
pub fn finish<'a>(checked: &Checked, model_said: Option<&'a str>) -> &'a str {
    match model_said {
        _ if !checked.allowed.is_empty() => "tool_calls",
        Some("length") => "length",
        Some("content_filter") => "content_filter",
        _ => "stop",
    }
}

fn tool_call(call: &ToolCall) -> Value {
    json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
}

fn usage_value(usage: Option<Usage>) -> Value {
    let usage = usage.unwrap_or(Usage { input_tokens: 0, output_tokens: 0 });
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    })
}
