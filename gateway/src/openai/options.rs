//! The chat completion parameters a client may set besides the conversation and its tools:
//! checked here, then passed on to the model server. Ranges are OpenAI's; text the model server
//! reads (`stop`, a `json_schema`'s strings) is redacted with the request's placeholders; a named
//! `tool_choice` must name a tool the policy lets the model see. Parameters the gateway does
//! not support are refused by `request.rs` before this runs, never dropped.

use super::ApiError;
use crate::agent::cap;
use crate::llm::ModelOptions;
use policy::redact::add_counts;
use policy::{Counts, Placeholders, PolicyView, ToolRef};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// Most stop sequences (OpenAI's limit).
const MAX_STOP: usize = 4;
/// Longest stop sequence.
const MAX_STOP_TEXT: usize = 256;
/// Largest `response_format` (serialized).
const MAX_RESPONSE_FORMAT: usize = 16 * 1024;

/// The parameters as the client sent them (part of the request body).
#[derive(Debug, Default, Deserialize)]
pub struct WireOptions {
    /// Sampling temperature, 0 to 2.
    #[serde(default)]
    temperature: Option<f64>,
    /// Nucleus sampling, 0 to 1.
    #[serde(default)]
    top_p: Option<f64>,
    /// Seed for reproducible sampling.
    #[serde(default)]
    seed: Option<i64>,
    /// Stop sequences: a string or up to four.
    #[serde(default)]
    stop: Option<Value>,
    /// −2 to 2.
    #[serde(default)]
    presence_penalty: Option<f64>,
    /// −2 to 2.
    #[serde(default)]
    frequency_penalty: Option<f64>,
    /// `text`, `json_object` or `json_schema`.
    #[serde(default)]
    response_format: Option<Value>,
    /// Whether the model may call several tools at once.
    #[serde(default)]
    parallel_tool_calls: Option<bool>,
    /// An end-user id some clients send. Accepted and never passed on: the model server does
    /// not learn who asks (the audit log records the signed-in user).
    #[serde(default, rename = "user")]
    _user: Option<serde::de::IgnoredAny>,
}

/// The parameters of a request, checked; `choice` is its `tool_choice`, `offered` and
/// `withheld` its tools.
pub(super) fn check(
    view: &PolicyView,
    body: &WireOptions,
    choice: Option<&Value>,
    offered: &HashMap<String, ToolRef>,
    withheld: &[(String, String)],
    scope: &mut Placeholders,
    redactions: &mut Counts,
) -> Result<ModelOptions, ApiError> {
    Ok(ModelOptions {
        temperature: within(body.temperature, "temperature", 0.0, 2.0)?,
        top_p: within(body.top_p, "top_p", 0.0, 1.0)?,
        seed: body.seed,
        stop: stop(body.stop.as_ref(), view, scope, redactions)?,
        presence_penalty: within(body.presence_penalty, "presence_penalty", -2.0, 2.0)?,
        frequency_penalty: within(body.frequency_penalty, "frequency_penalty", -2.0, 2.0)?,
        response_format: response_format(body.response_format.as_ref(), view, scope, redactions)?,
        tool_choice: tool_choice(choice, offered, withheld)?,
        parallel_tool_calls: body.parallel_tool_calls,
    })
}

fn within(value: Option<f64>, name: &str, low: f64, high: f64) -> Result<Option<f64>, ApiError> {
    match value {
        Some(number) if !(low..=high).contains(&number) => {
            Err(ApiError::invalid("invalid_request", format!("{name} must be between {low} and {high}")))
        }
        other => Ok(other),
    }
}

fn stop(
    value: Option<&Value>,
    view: &PolicyView,
    scope: &mut Placeholders,
    redactions: &mut Counts,
) -> Result<Vec<String>, ApiError> {
    let texts: Vec<&str> = match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(items)) if items.len() <= MAX_STOP => {
            items.iter().map(Value::as_str).collect::<Option<_>>().ok_or_else(stop_error)?
        }
        Some(_) => return Err(stop_error()),
    };
    if texts.iter().any(|text| text.is_empty() || text.len() > MAX_STOP_TEXT) {
        return Err(stop_error());
    }
    Ok(texts
        .into_iter()
        .map(|text| {
            let redacted = view.redact(text, scope);
            add_counts(redactions, redacted.counts);
            redacted.text
        })
        .collect())
}

fn stop_error() -> ApiError {
    ApiError::invalid(
        "invalid_request",
        format!("stop must be a string or at most {MAX_STOP} strings of 1 to {MAX_STOP_TEXT} bytes"),
    )
}

fn response_format(
    value: Option<&Value>,
    view: &PolicyView,
    scope: &mut Placeholders,
    redactions: &mut Counts,
) -> Result<Option<Value>, ApiError> {
    let Some(format) = value.filter(|value| !value.is_null()) else { return Ok(None) };
    let kind = format.get("type").and_then(Value::as_str);
    let valid = match kind {
        Some("text" | "json_object") => format.as_object().is_some_and(|object| object.len() == 1),
        Some("json_schema") => format.get("json_schema").is_some_and(|schema| {
            schema.get("name").and_then(Value::as_str).is_some()
                && schema.get("schema").is_none_or(Value::is_object)
        }),
        _ => false,
    };
    if !valid {
        return Err(ApiError::invalid(
            "invalid_request",
            "response_format must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or \
             {\"type\": \"json_schema\", \"json_schema\": {\"name\": …, \"schema\": {…}}}",
        ));
    }
    if format.to_string().len() > MAX_RESPONSE_FORMAT {
        return Err(ApiError::invalid(
            "invalid_request",
            format!("response_format is larger than {MAX_RESPONSE_FORMAT} bytes"),
        ));
    }
    let mut format = format.clone();
    add_counts(redactions, view.redact_json(&mut format, scope));
    Ok(Some(format))
}

/// `none` already kept every tool from the model (`request.rs`), so it is not passed on.
fn tool_choice(
    value: Option<&Value>,
    offered: &HashMap<String, ToolRef>,
    withheld: &[(String, String)],
) -> Result<Option<Value>, ApiError> {
    let Some(choice) = value.filter(|value| !value.is_null()) else { return Ok(None) };
    match choice.as_str() {
        Some("none") => return Ok(None),
        Some("auto") => return Ok(Some(choice.clone())),
        Some("required") if offered.is_empty() => {
            return Err(ApiError::invalid(
                "tool_not_available",
                "tool_choice is \"required\", but no tool of this request is available to you on this site",
            ));
        }
        Some("required") => return Ok(Some(choice.clone())),
        _ => {}
    }
    let named = (choice.get("type").and_then(Value::as_str) == Some("function"))
        .then(|| choice.get("function")?.get("name")?.as_str())
        .flatten();
    let Some(name) = named else {
        return Err(ApiError::invalid(
            "invalid_request",
            "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": …}}",
        ));
    };
    if offered.contains_key(name) {
        return Ok(Some(serde_json::json!({ "type": "function", "function": { "name": name } })));
    }
    let reason = withheld
        .iter()
        .find(|(withheld, _)| withheld == name)
        .map_or_else(|| "it is not among this request's tools".to_owned(), |(_, reason)| reason.clone());
    Err(ApiError::invalid(
        "tool_not_available",
        format!("tool_choice names {}, which is not available to you on this site ({reason})", cap(name, 64)),
    ))
}
