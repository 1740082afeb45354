//! The form guard: finds the agent's marker on a form submission, whatever its encoding, so the
//! proxy can refuse agent-marked submissions to approval-gated forms that carry no valid, unused
//! approval. The runtime marks its submissions with the fields `__toolgate_call` and
//! `__toolgate_approval` (or the `X-Toolgate-Call` / `X-Toolgate-Approval` headers); human
//! submissions carry neither and pass untouched. Pure functions, no I/O.
//!
//! It fails closed: a body it cannot parse (malformed, unknown encoding, too large) counts as
//! marked — an error — when the marker text appears anywhere in it or the headers mark it.

use super::multipart;
use crate::inventory::canonical_json;
use http::{HeaderMap, Method};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// The largest body the guard parses.
pub const MAX_GUARDED_BODY: usize = 1024 * 1024;
/// The field carrying the call id.
pub const CALL_FIELD: &str = "__toolgate_call";
/// The field carrying the approval token.
pub const APPROVAL_FIELD: &str = "__toolgate_approval";
/// The header carrying the call id.
pub const CALL_HEADER: &str = "x-toolgate-call";
/// The header carrying the approval token.
pub const APPROVAL_HEADER: &str = "x-toolgate-approval";
/// Most fields one body may have.
const MAX_FIELDS: usize = 10_000;
/// Headers frameworks read as a method override.
const OVERRIDE_HEADERS: [&str; 3] = ["x-http-method-override", "x-http-method", "x-method-override"];

/// An agent-marked submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMark {
    /// The call id (empty when only a token was sent: still marked).
    pub call_id: String,
    /// The approval token, if one was sent.
    pub token: Option<String>,
    /// The effective method, after any method override.
    pub method: Method,
    /// The other fields in order (JSON values other than strings as canonical JSON; file parts
    /// left out), for comparing with the approved arguments.
    pub fields: Vec<(String, String)>,
}

/// Why a submission must be refused without looking further.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The body is larger than the guard parses and may carry the marker.
    #[error("the submission is too large to check")]
    TooLarge,
    /// The body (or a marker header) cannot be parsed and may carry the marker.
    #[error("malformed marked submission: {0}")]
    Malformed(&'static str),
    /// The marker or method override is given twice with different values.
    #[error("conflicting {0} in the submission")]
    Conflicting(&'static str),
}

impl GuardError {
    /// Every value [`reason`](Self::reason) returns (metrics start each at 0).
    pub const REASONS: [&'static str; 3] = ["marked_too_large", "marked_malformed", "marked_conflicting"];

    /// A bounded label for metrics and audit.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::TooLarge => "marked_too_large",
            Self::Malformed(_) => "marked_malformed",
            Self::Conflicting(_) => "marked_conflicting",
        }
    }
}

/// Finds the agent marker on a submission with this method, headers and body. `Ok(None)`: not
/// marked (forward as-is). `Err`: treat as marked and refuse. A GET form carries its fields in
/// the query: check it with [`query_mark`] as well.
pub fn agent_submission(
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Option<AgentMark>, GuardError> {
    let header_call = header_value(headers, CALL_HEADER)?;
    let header_token = header_value(headers, APPROVAL_HEADER)?;
    let header_marked = header_call.is_some() || header_token.is_some();
    let fail = |error: GuardError| {
        if header_marked || mentions_marker(body) { Err(error) } else { Ok(None) }
    };
    if body.len() > MAX_GUARDED_BODY {
        return fail(GuardError::TooLarge);
    }
    let fields = match body_fields(headers, body) {
        Ok(fields) => fields,
        Err(reason) => return fail(GuardError::Malformed(reason)),
    };
    let mut override_method = header_value_any(headers, &OVERRIDE_HEADERS)?;
    mark(method, fields, header_call, header_token, &mut override_method)
}

/// Finds the agent marker in a query string (GET forms). Same answers as [`agent_submission`].
pub fn query_mark(
    method: &Method,
    headers: &HeaderMap,
    query: &str,
) -> Result<Option<AgentMark>, GuardError> {
    if query.len() > MAX_GUARDED_BODY {
        return if mentions_marker(query.as_bytes()) { Err(GuardError::TooLarge) } else { Ok(None) };
    }
    let fields = match urlencoded(query.as_bytes()) {
        Ok(fields) => fields,
        Err(reason) if mentions_marker(query.as_bytes()) => return Err(GuardError::Malformed(reason)),
        Err(_) => return Ok(None),
    };
    let mut override_method = header_value_any(headers, &OVERRIDE_HEADERS)?;
    mark(method, fields, None, None, &mut override_method)
}

/// Whether the submitted fields carry exactly the approved arguments: every top-level argument
/// appears with the value the runtime fills in (strings as-is, numbers as JSON text, `true` as a
/// present checkbox, `false`/`null` as absent or empty, arrays as repeated fields). Fields the
/// arguments do not mention (hidden inputs) are ignored; non-object arguments never match.
pub fn fields_match_args(canonical_args: &str, fields: &[(String, String)]) -> bool {
    let Ok(Value::Object(arguments)) = serde_json::from_str::<Value>(canonical_args) else { return false };
    arguments.iter().all(|(name, expected)| {
        let submitted: Vec<&str> =
            fields.iter().filter(|(field, _)| field == name).map(|(_, value)| value.as_str()).collect();
        match expected {
            Value::Null | Value::Bool(false) => submitted.iter().all(|value| value.is_empty()),
            Value::Bool(true) => submitted.len() == 1 && !submitted[0].is_empty(),
            Value::Array(items) => {
                submitted.len() == items.len()
                    && items.iter().zip(&submitted).all(|(item, value)| same(item, value))
            }
            other => submitted.len() == 1 && same(other, submitted[0]),
        }
    })
}

/// Whether a submitted field's text is the approved value: numbers by value (the page writes
/// `42` for an approved `42.0`, or `100` for `1e2`), everything else by its text.
fn same(expected: &Value, submitted: &str) -> bool {
    match expected {
        Value::Number(number) => {
            let approved = number.as_f64();
            let sent = submitted.trim().parse::<f64>().ok().filter(|value| value.is_finite());
            approved.is_some() && approved == sent
        }
        other => render(other) == submitted,
    }
}

/// The mark from the parsed fields and marker headers, or `None` when nothing marks it.
fn mark(
    method: &Method,
    fields: Vec<(String, String)>,
    header_call: Option<String>,
    header_token: Option<String>,
    override_method: &mut Option<String>,
) -> Result<Option<AgentMark>, GuardError> {
    let (mut call, mut token) = (header_call, header_token);
    let mut rest = Vec::with_capacity(fields.len());
    for (name, value) in fields {
        let slot = match normalized(&name).as_str() {
            CALL_FIELD => (&mut call, "call marker"),
            APPROVAL_FIELD => (&mut token, "approval token"),
            "_method" => (&mut *override_method, "method override"),
            _ => {
                rest.push((name, value));
                continue;
            }
        };
        merge(slot.0, value, slot.1)?;
    }
    if call.is_none() && token.is_none() {
        return Ok(None);
    }
    let method = match override_method {
        Some(name) => Method::from_bytes(name.trim().to_ascii_uppercase().as_bytes())
            .map_err(|_| GuardError::Malformed("invalid method override"))?,
        None => method.clone(),
    };
    Ok(Some(AgentMark { call_id: call.unwrap_or_default(), token, method, fields: rest }))
}

fn merge(slot: &mut Option<String>, value: String, what: &'static str) -> Result<(), GuardError> {
    match slot {
        Some(known) if *known != value => Err(GuardError::Conflicting(what)),
        Some(_) => Ok(()),
        None => {
            *slot = Some(value);
            Ok(())
        }
    }
}

/// The fields of the body by its content type; `Err` when it cannot be read with certainty.
fn body_fields(headers: &HeaderMap, body: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let mut types = headers.get_all(http::header::CONTENT_TYPE).iter();
    let content_type = match (types.next(), types.next()) {
        (None, _) => None,
        (Some(value), None) => Some(value.to_str().map_err(|_| "Content-Type is not ASCII")?),
        (Some(_), Some(_)) => return Err("repeated Content-Type"),
    };
    let Some(content_type) = content_type else {
        return if body.is_empty() { Ok(Vec::new()) } else { Err("body without a Content-Type") };
    };
    let (essence, parameters) = content_type.split_at(content_type.find(';').unwrap_or(content_type.len()));
    let essence = essence.trim().to_ascii_lowercase();
    let fields = match essence.as_str() {
        "application/x-www-form-urlencoded" => urlencoded(body)?,
        "multipart/form-data" => {
            let parameters = multipart::parameters(parameters)?;
            let boundary = parameters
                .iter()
                .find(|(name, _)| name == "boundary")
                .map(|(_, value)| value.as_str())
                .ok_or("multipart body without a boundary")?;
            multipart_fields(boundary, body)?
        }
        "text/plain" => plain_text(body)?,
        json if json == "application/json" || json.ends_with("+json") => json_fields(body)?,
        _ if body.is_empty() => Vec::new(),
        _ => return Err("unsupported Content-Type"),
    };
    if fields.len() > MAX_FIELDS { Err("too many fields") } else { Ok(fields) }
}

fn urlencoded(body: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let count = body.iter().filter(|byte| **byte == b'&').count();
    if count >= MAX_FIELDS {
        return Err("too many fields");
    }
    Ok(form_urlencoded::parse(body).map(|(name, value)| (name.into_owned(), value.into_owned())).collect())
}

fn multipart_fields(boundary: &str, body: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let mut fields = Vec::new();
    for part in multipart::parse(boundary, body)? {
        let marker = [CALL_FIELD, APPROVAL_FIELD, "_method"].contains(&normalized(&part.name).as_str());
        match (part.filename, marker) {
            // The runtime never sends its marker as a file: a file part so named is refused.
            (Some(_), true) => return Err("marker sent as a file"),
            (Some(_), false) => {}
            (None, _) => {
                let value =
                    String::from_utf8(part.content).map_err(|_| "multipart text field is not UTF-8")?;
                fields.push((part.name, value));
            }
        }
    }
    Ok(fields)
}

fn plain_text(body: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let text = std::str::from_utf8(body).map_err(|_| "text/plain body is not UTF-8")?;
    let mut fields = Vec::new();
    for line in text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)) {
        if line.is_empty() {
            continue;
        }
        let (name, value) = line.split_once('=').ok_or("text/plain line without '='")?;
        fields.push((name.to_owned(), value.to_owned()));
    }
    Ok(fields)
}

/// Top-level members of a JSON object body (every member, duplicates included, so a repeated
/// marker with another value is seen); other JSON values have no fields.
fn json_fields(body: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let value: Value = serde_json::from_slice(body).map_err(|_| "malformed JSON body")?;
    if !value.is_object() {
        return if mentions_marker(body) {
            Err("marker inside a JSON body that is not an object")
        } else {
            Ok(Vec::new())
        };
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let members = deserializer.deserialize_map(Members).map_err(|_| "malformed JSON body")?;
    Ok(members.into_iter().map(|(name, value)| (name, render(&value))).collect())
}

struct Members;

impl<'de> Visitor<'de> for Members {
    type Value = Vec<(String, Value)>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Value>()? {
            if members.len() == MAX_FIELDS {
                return Err(serde::de::Error::custom("too many members"));
            }
            members.push(member);
        }
        Ok(members)
    }
}

/// A value as a form field carries it.
fn render(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => canonical_json(other),
    }
}

/// A field name as frameworks may read it: ASCII case folded, `.`, ` ` and `-` as `_` (PHP), and
/// a trailing `[...]` (array syntax) dropped.
fn normalized(name: &str) -> String {
    let base = name.find('[').map_or(name, |bracket| &name[..bracket]);
    base.trim()
        .chars()
        .map(|character| match character {
            '.' | ' ' | '-' => '_',
            other => other.to_ascii_lowercase(),
        })
        .collect()
}

/// Whether the marker's name appears anywhere in `bytes`: raw, percent-decoded, or with JSON
/// `\u00XX` escapes undone (ASCII case folded).
fn mentions_marker(bytes: &[u8]) -> bool {
    const NEEDLE: &[u8] = b"toolgate";
    let contains =
        |haystack: &[u8]| haystack.windows(NEEDLE.len()).any(|window| window.eq_ignore_ascii_case(NEEDLE));
    let decoded: Vec<u8> = form_urlencoded::parse(bytes)
        .flat_map(|(name, value)| [name.into_owned().into_bytes(), value.into_owned().into_bytes()])
        .flatten()
        .collect();
    contains(bytes) || contains(&decoded) || contains(&unescape_json(bytes))
}

/// `bytes` with JSON `\u00XX` escapes replaced by the byte they name.
fn unescape_json(bytes: &[u8]) -> Vec<u8> {
    let mut output = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = bytes[index..]
            .starts_with(b"\\u00")
            .then(|| bytes.get(index + 4..index + 6))
            .flatten()
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 16).ok());
        match escaped {
            Some(byte) => {
                output.push(byte);
                index += 6;
            }
            None => {
                output.push(bytes[index]);
                index += 1;
            }
        }
    }
    output
}

/// The one value of a marker header; repeated with different values or unreadable is refused.
fn header_value(headers: &HeaderMap, name: &'static str) -> Result<Option<String>, GuardError> {
    header_value_any(headers, &[name])
}

fn header_value_any(headers: &HeaderMap, names: &[&'static str]) -> Result<Option<String>, GuardError> {
    let mut found: Option<String> = None;
    for name in names {
        for value in headers.get_all(*name) {
            let text = value.to_str().map_err(|_| GuardError::Malformed("marker header is not ASCII"))?;
            merge(&mut found, text.trim().to_owned(), "marker or override headers")?;
        }
    }
    Ok(found)
}

#[cfg(test)]
#[path = "form_guard_tests.rs"]
mod tests;
