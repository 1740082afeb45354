//! A page tool's input schema as a validator, and the check of the model's arguments against it.
//!
//! The gateway checks every call's arguments against the tool's own JSON Schema before anything
//! else happens to the call: before the policy decides on them, before an approval card asks a
//! human, before the page runs it. A call that does not fit goes back to the model as an error
//! it can fix; a human never approves arguments the tool would refuse.
//!
//! The schema is the page's, so it is untrusted: `$ref`s are resolved only inside it (nothing is
//! fetched from the network or read from disk), regular expressions run with a backtracking
//! limit, and a schema that does not compile keeps its tool away from the model (the gateway
//! could not check a call of it). Formats (`date`, `email`, …) are checked, as the page's inputs
//! check them; `time` and `date-time` as HTML spells them (seconds and offset optional, the
//! runtime's rule), not RFC 3339's stricter form, so the gateway never refuses what the page
//! accepts.
//!
//! The problems name where and which rule, never a value: the model's arguments hold the
//! originals of redacted values, and the message goes back to the model.

use regex::Regex;
use serde_json::Value;
use std::sync::{Arc, LazyLock};

/// Most problems reported for one call.
const MAX_PROBLEMS: usize = 5;
/// Backtracking steps one `pattern` may take on one value.
const BACKTRACK_LIMIT: usize = 100_000;

/// A compiled input schema; cheap to clone.
#[derive(Clone)]
pub struct ArgumentSchema(Arc<jsonschema::Validator>);

impl std::fmt::Debug for ArgumentSchema {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ArgumentSchema")
    }
}

impl ArgumentSchema {
    /// Compiles a tool's input schema; the error says, without page text, why it cannot be used.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .should_validate_formats(true)
            .with_format("time", |value| TIME.is_match(value))
            .with_format("date-time", html_date_time)
            .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(BACKTRACK_LIMIT))
            .build(schema)
            .map(|validator| Self(Arc::new(validator)))
            .map_err(|error| match error.kind() {
                jsonschema::error::ValidationErrorKind::Referencing(_) => {
                    "its input schema refers to a document outside itself".to_owned()
                }
                _ => "its input schema is not a valid JSON Schema".to_owned(),
            })
    }

    /// The arguments' problems, at most a few, each as `at /path: rule` (empty when they fit).
    pub fn problems(&self, args: &Value) -> Vec<String> {
        self.0
            .iter_errors(args)
            .take(MAX_PROBLEMS)
            .map(|error| {
                let path = error.instance_path().to_string();
                let place = if path.is_empty() { "the arguments".to_owned() } else { format!("at {path}") };
                format!("{place}: {}", error.masked_with("the value"))
            })
            .collect()
    }
}

/// A time as the page's inputs and the runtime accept it: `HH:MM`, optional seconds and
/// fraction, optional `Z` or offset.
const TIME_PATTERN: &str =
    r"([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d+)?)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)?";
static TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{TIME_PATTERN}$")).expect("the time pattern compiles"));
static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^(\d{{4}})-(\d{{2}})-(\d{{2}})[Tt ]{TIME_PATTERN}$"))
        .expect("the date-time pattern compiles")
});

/// A date and a time (see [`TIME_PATTERN`]) whose day exists in its month.
fn html_date_time(value: &str) -> bool {
    let Some(parts) = DATE_TIME.captures(value) else { return false };
    let number = |index: usize| parts[index].parse::<u32>().unwrap_or(0);
    policy::redact::is_date(Some(number(1)), number(2), number(3))
}

#[cfg(test)]
mod tests {
    use super::ArgumentSchema;
    use serde_json::json;

    fn expense() -> ArgumentSchema {
        ArgumentSchema::compile(&json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0},
                "date": {"type": "string", "format": "date"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            },
            "required": ["amount", "date"],
        }))
        .expect("compiles")
    }

    #[test]
    fn arguments_that_fit_have_no_problems() {
        assert!(expense().problems(&json!({"amount": 12.5, "date": "2026-11-26", "code": "EUR"})).is_empty());
    }

    #[test]
    fn a_missing_required_argument_is_named() {
        let problems = expense().problems(&json!({"amount": 12}));
        assert_eq!(problems, vec![r#"the arguments: "date" is a required property"#]);
    }

    #[test]
    fn wrong_types_formats_and_patterns_are_named_without_the_value() {
        let secret = "DE89370400440532013000";
        let problems = expense().problems(&json!({"amount": "twelve", "date": "26/11/2026", "code": secret}));
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|problem| problem.starts_with("at /amount:")), "{problems:?}");
        assert!(problems.iter().any(|problem| problem.starts_with("at /date:") && problem.contains("date")));
        assert!(problems.iter().any(|problem| problem.starts_with("at /code:")), "{problems:?}");
        for problem in &problems {
            assert!(!problem.contains(secret) && !problem.contains("twelve") && !problem.contains("26/11"));
        }
    }

    /// The page's inputs send `10:30` and `2026-11-26T10:30`; RFC 3339 would refuse both.
    #[test]
    fn times_are_checked_as_html_spells_them() {
        let schema = ArgumentSchema::compile(&json!({"properties": {
            "at": {"type": "string", "format": "time"},
            "when": {"type": "string", "format": "date-time"},
        }}))
        .expect("compiles");
        for (at, when) in [("10:30", "2026-11-26T10:30"), ("23:59:60.5Z", "2024-02-29 00:00:00+01:00")] {
            assert!(schema.problems(&json!({"at": at, "when": when})).is_empty(), "{at} {when}");
        }
        for (at, when) in
            [("24:00", "2026-02-29T10:30"), ("9:30", "2026-11-31T10:30"), ("10:30 pm", "2026-13-01T00:00")]
        {
            assert_eq!(schema.problems(&json!({"at": at, "when": when})).len(), 2, "{at} {when}");
        }
    }

    #[test]
    fn a_schema_that_does_not_compile_or_reaches_outside_is_refused() {
        assert!(ArgumentSchema::compile(&json!({"type": "text"})).is_err());
        let remote = ArgumentSchema::compile(&json!({"$ref": "https://example.com/schema.json"}));
        assert_eq!(remote.err().as_deref(), Some("its input schema refers to a document outside itself"));
        let local = json!({"$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}});
        let local = ArgumentSchema::compile(&local).expect("local refs resolve");
        assert_eq!(local.problems(&json!({"n": "x"})).len(), 1);
    }

    #[test]
    fn a_catastrophic_pattern_stops_at_its_backtracking_limit() {
        let schema = ArgumentSchema::compile(
            &json!({"properties": {"s": {"type": "string", "pattern": "^(a+)+\\1$"}}}),
        )
        .expect("compiles");
        let problems = schema.problems(&json!({"s": format!("{}b", "a".repeat(40))}));
        assert_eq!(problems.len(), 1, "an exhausted pattern is a problem, not a pass: {problems:?}");
    }
}
