//! Redacting structured values: every string of a JSON value, in an order that keeps schemas
//! restorable.
//!
//! Tool results and tool input schemas reach the model as JSON. Each string is redacted on its
//! own (object keys are names the page and the model share, and stay). The strings under the
//! value-bearing keywords of JSON Schema (`const`, `enum`, `default`, `examples`), anywhere in the
//! tree, are redacted in a first pass and every other string in a second, so a form option's own
//! spelling of a value is the one its placeholder restores, even when a `title` or `description`
//! elsewhere mentions it in another spelling first.

use serde_json::Value;

/// JSON Schema keywords whose strings are values the page expects back verbatim.
const VALUE_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Calls `redact` on every string in `value`, value keywords first; a `Some` answer replaces the
/// string.
pub(super) fn redact_strings(value: &mut Value, redact: &mut dyn FnMut(&str) -> Option<String>) {
    walk(value, Pass::Values, redact);
    walk(value, Pass::Rest, redact);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Only strings under a value keyword.
    Values,
    /// Every string not under a value keyword.
    Rest,
    /// Every string (inside a value keyword, in the first pass).
    All,
}

fn walk(value: &mut Value, pass: Pass, redact: &mut dyn FnMut(&str) -> Option<String>) {
    match value {
        Value::String(text) if pass != Pass::Values => {
            if let Some(redacted) = redact(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, pass, redact)),
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let keyword = VALUE_KEYWORDS.contains(&key.as_str());
                let inner = match (pass, keyword) {
                    (Pass::Values, true) => Pass::All,
                    (Pass::Rest, true) => continue,
                    (other, _) => other,
                };
                walk(item, inner, redact);
            }
        }
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Placeholders, RedactionSet, Redactor};
    use serde_json::json;

    #[test]
    fn every_schema_string_is_redacted_value_first() {
        let mut schema = json!({
            "type": "object",
            "description": "Pay from DE89370400440532013000 or ask a@b.com",
            "properties": {
                "account": {
                    "title": "Main account DE89 3704 0044 0532 0130 00",
                    "oneOf": [{"title": "Main account DE89 3704 0044 0532 0130 00",
                               "const": "DE89 3704 0044 0532 0130 00"}],
                    "enum": ["DE89 3704 0044 0532 0130 00"],
                    "default": "GB82 WEST 1234 5698 7654 32",
                    "examples": ["jo@example.org"]
                }
            }
        });
        let mut scope = Placeholders::new();
        let counts = Redactor::default().redact_json(&mut schema, &RedactionSet::builtin(), &mut scope);
        let text = schema.to_string();
        assert!(!text.contains("DE89") && !text.contains("GB82") && !text.contains("example.org"), "{text}");
        let option = schema["properties"]["account"]["oneOf"][0]["const"].as_str().expect("a string");
        assert_eq!(schema["properties"]["account"]["enum"][0], option);
        assert_eq!(counts.values().sum::<usize>(), 8);
        // The option's own spelling comes back, not the description's compact one.
        assert_eq!(scope.restore(option).0, "DE89 3704 0044 0532 0130 00");
    }
}
