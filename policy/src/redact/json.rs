//! Redacting structured values: every string of a JSON value, in an order that keeps schemas
//! restorable.
//!
//! Tool results and tool input schemas reach the model as JSON. Each string is redacted on its
//! own (object keys are names the page and the model share, and stay). The strings under the
//! value-bearing keywords of JSON Schema (`const`, `enum`, `default`, `examples`), anywhere in the
//! tree, are redacted in a first pass and every other string in a second, so a form option's own
//! spelling of a value is the one its placeholder restores, even when a `title` or `description`
//! elsewhere mentions it in another spelling first.
//!
//! Each string is handed over with the key it is the value of: the nearest enclosing object key,
//! looking through arrays and through the value keywords, whose strings are values of the property
//! that holds them (the `default` of a `password` property is a password). Strings with no key
//! above them have none.

use serde_json::Value;

/// JSON Schema keywords whose strings are values the page expects back verbatim.
const VALUE_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Calls `redact` with the key (see above) and the text of every string in `value`, value
/// keywords first; a `Some` answer replaces the string.
pub(super) fn redact_strings(
    value: &mut Value,
    redact: &mut dyn FnMut(Option<&str>, &str) -> Option<String>,
) {
    walk(value, Pass::Values, None, redact);
    walk(value, Pass::Rest, None, redact);
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

fn walk(
    value: &mut Value,
    pass: Pass,
    key: Option<&str>,
    redact: &mut dyn FnMut(Option<&str>, &str) -> Option<String>,
) {
    match value {
        Value::String(text) if pass != Pass::Values => {
            if let Some(redacted) = redact(key, text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, pass, key, redact)),
        Value::Object(map) => {
            for (name, item) in map.iter_mut() {
                let keyword = VALUE_KEYWORDS.contains(&name.as_str());
                let inner = match (pass, keyword) {
                    (Pass::Values, true) => Pass::All,
                    (Pass::Rest, true) => continue,
                    (other, _) => other,
                };
                walk(item, inner, if keyword { key } else { Some(name.as_str()) }, redact);
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

    #[test]
    fn whole_strings_under_secret_keys_are_credentials() {
        let secret = ["MPmQLyUqLOHwYjSr3", "/wIw0QbeID3IoY20zu7Sv+t"].concat();
        let mut value = json!({
            "aws_secret_access_key": secret,
            "db": {"password": "horse-maple", "password_policy": "strict", "user": "app"},
            "api_key": "${API_KEY}",
            "token": "expired",
            "schema": {"properties": {"passwd": {"default": "Zonnig2025?", "title": "Password"}}},
            "notes": ["password reset"]
        });
        let mut scope = Placeholders::new();
        let counts = Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut scope);
        let placeholder = value["aws_secret_access_key"].as_str().unwrap_or_default().to_owned();
        assert!(placeholder.starts_with("[credential "), "{value}");
        assert_eq!(scope.restore(&placeholder).0, secret);
        assert!(value["db"]["password"].as_str().is_some_and(|text| text.starts_with("[credential")));
        let passwd = &value["schema"]["properties"]["passwd"];
        assert!(passwd["default"].as_str().is_some_and(|text| text.starts_with("[credential")), "{value}");
        assert_eq!(passwd["title"], "Password");
        assert_eq!(value["db"]["password_policy"], "strict");
        assert_eq!(value["db"]["user"], "app");
        assert_eq!(value["api_key"], "${API_KEY}");
        assert_eq!(value["token"], "expired");
        assert_eq!(value["notes"][0], "password reset");
        assert_eq!(counts.values().sum::<usize>(), 3);
    }
}
