//! The typed `[sites.<id>.forms]` section: which legacy forms of a site become agent tools, by
//! CSS selector rules or the opt-in `auto` mode. Rules are compiled (selectors parsed, names
//! checked) once here, so a typo is a configuration error with its line, not a page failure.
//!
//! A rule's `path` scopes it to pages: one URL path glob or a list, where `*` matches any run of
//! characters (`/` included) and everything else matches itself (`/admin/staff/employee/add/`,
//! `/tickets/*/edit`). A selector alone matches forms on every page of the site, so a form with
//! the same id on an "add" and a "change" page would become the same tool on both:
//! `check-config` warns about every rule without `path`.
//!
//! A rule's `action` (one glob or a list, on the path the form's `action` resolves to against
//! the page) keeps it to forms that submit there, for pages that hold several similar forms.
//!
//! A rule's `error_selector` names where the site shows its own errors, for reading its answer
//! to an agent's submission (`outcomes`); it is checked as a selector here.

use super::raw;
pub use injector::PathGlob;
use injector::{FormRuleSpec, FormRules};
use std::sync::Arc;

/// One rule's scope: its tool name and the page paths it applies to (empty: every page).
#[derive(Debug, Clone)]
pub struct FormScope {
    /// The rule's tool name (for warnings).
    pub name: String,
    /// The path globs; empty when the rule has no `path`.
    pub paths: Vec<PathGlob>,
    /// The rule's `error_selector`: where the site shows its own error messages.
    pub error_selector: Option<String>,
}

impl FormScope {
    /// Whether the rule applies on the page at `path`.
    pub fn applies_to(&self, path: &str) -> bool {
        self.paths.is_empty() || self.paths.iter().any(|glob| glob.matches(path))
    }
}

impl super::Checker<'_> {
    /// Compiles a site's form rules and each one's page scope; every broken rule, parameter or
    /// path is reported with the rule's line.
    pub(super) fn forms(
        &mut self,
        site_key: &str,
        raw: Option<&raw::RawForms>,
    ) -> Option<(Arc<FormRules>, Vec<FormScope>)> {
        let Some(raw) = raw else { return Some((Arc::new(FormRules::default()), Vec::new())) };
        let mut specs = Vec::with_capacity(raw.rules.len());
        let mut scopes = Vec::with_capacity(raw.rules.len());
        let mut broken = false;
        for (index, rule) in raw.rules.iter().enumerate() {
            let key = format!("{site_key}.forms.rule[{index}]");
            let mut paths = Vec::new();
            for pattern in rule.get_ref().path.as_ref().map_or(&[][..], raw::OneOrMany::items) {
                match PathGlob::new(pattern) {
                    Ok(glob) => paths.push(glob),
                    Err(message) => {
                        self.problem(rule, &format!("{key}.path"), &message);
                        broken = true;
                    }
                }
            }
            let error_selector = rule.get_ref().error_selector.clone();
            if let Some(css) = &error_selector
                && let Err(message) = injector::check_error_selector(css)
            {
                self.problem(
                    rule,
                    &format!("{key}.error_selector"),
                    &format!("{css:?} is not a selector: {message}"),
                );
                broken = true;
            }
            scopes.push(FormScope { name: rule.get_ref().name.clone(), paths, error_selector });
            let mut params = Vec::new();
            let mut param_schemas = Vec::new();
            for (control, value) in &rule.get_ref().params {
                match param(value) {
                    Ok((description, schema)) => {
                        params.extend(description.map(|text| (control.clone(), text)));
                        param_schemas.extend(schema.map(|fragment| (control.clone(), fragment)));
                    }
                    Err(message) => {
                        self.problem(rule, &format!("{key}.params.{control}"), &message);
                        broken = true;
                    }
                }
            }
            let spec = FormRuleSpec {
                selector: rule.get_ref().selector.clone(),
                name: rule.get_ref().name.clone(),
                description: rule.get_ref().description.clone(),
                params,
                param_schemas,
                autosubmit: rule.get_ref().autosubmit,
                method: rule.get_ref().method.clone(),
                action: rule.get_ref().action.as_ref().map_or_else(Vec::new, |globs| globs.items().to_vec()),
            };
            // Compiled alone first, so each broken rule is reported with its own line.
            if let Err(error) = FormRules::new(vec![spec.clone()], false) {
                let message = error.to_string();
                let message = message.split_once(": ").map_or(message.as_str(), |(_, rest)| rest);
                self.problem(rule, &key, message);
                broken = true;
            }
            specs.push(spec);
        }
        if broken {
            return None;
        }
        match FormRules::new(specs, raw.auto) {
            Ok(rules) => Some((Arc::new(rules), scopes)),
            Err(error) => {
                self.problem(&raw.rules[0], &format!("{site_key}.forms"), &error.to_string());
                None
            }
        }
    }
}

/// JSON Schema formats a parameter may name (JSON Schema 2020-12 §7.3, the ones a form value
/// can carry).
const FORMATS: [&str; 11] = [
    "date",
    "time",
    "date-time",
    "duration",
    "email",
    "uri",
    "uri-reference",
    "uuid",
    "hostname",
    "ipv4",
    "ipv6",
];

/// A parameter as written: a description, or a table with an optional `description` and the
/// JSON Schema keywords `format`, `pattern`, `examples`, `minimum`, `maximum`, `minLength` and
/// `maxLength`. Returns the description and the schema fragment (serialized JSON, without the
/// description), each only when given.
fn param(value: &serde_json::Value) -> Result<(Option<String>, Option<String>), String> {
    use serde_json::Value;
    let table = match value {
        Value::String(text) => return Ok((Some(text.clone()), None)),
        Value::Object(table) => table,
        _ => return Err("must be a description or a table of JSON Schema keywords".to_owned()),
    };
    let mut description = None;
    let mut fragment = serde_json::Map::new();
    for (keyword, value) in table {
        match (keyword.as_str(), value) {
            ("description", Value::String(text)) => description = Some(text.clone()),
            ("format", Value::String(format)) if FORMATS.contains(&format.as_str()) => {
                fragment.insert(keyword.clone(), value.clone());
            }
            ("format", _) => return Err(format!("format must be one of {}", FORMATS.join(", "))),
            ("pattern", Value::String(pattern)) => {
                // Browsers read it as an ECMAScript regular expression; Rust's syntax is the
                // portable subset JSON Schema recommends, so what passes here works there.
                regex::Regex::new(pattern)
                    .map_err(|error| format!("pattern {pattern:?} is not valid: {error}"))?;
                fragment.insert(keyword.clone(), value.clone());
            }
            ("examples", Value::Array(_)) => {
                fragment.insert(keyword.clone(), value.clone());
            }
            ("minimum" | "maximum", Value::Number(_)) => {
                fragment.insert(keyword.clone(), value.clone());
            }
            ("minLength" | "maxLength", Value::Number(number)) if number.as_u64().is_some() => {
                fragment.insert(keyword.clone(), value.clone());
            }
            (
                "description" | "pattern" | "examples" | "minimum" | "maximum" | "minLength" | "maxLength",
                _,
            ) => return Err(format!("{keyword} has the wrong type")),
            _ => {
                return Err(format!(
                    "unknown key {keyword:?} (allowed: description, format, pattern, examples, minimum, maximum, \
                     minLength, maxLength)"
                ));
            }
        }
    }
    let bounds = |low: &str, high: &str| {
        let number = |key: &str| fragment.get(key).and_then(Value::as_f64);
        number(low).zip(number(high)).is_some_and(|(low, high)| low > high)
    };
    if bounds("minimum", "maximum") || bounds("minLength", "maxLength") {
        return Err("a minimum is above its maximum".to_owned());
    }
    let fragment = (!fragment.is_empty()).then(|| Value::Object(fragment).to_string());
    Ok((description, fragment))
}

#[cfg(test)]
mod tests {
    #[test]
    fn params_are_descriptions_or_schema_fragments() {
        use super::param;
        use serde_json::json;
        assert_eq!(param(&json!("Full name")), Ok((Some("Full name".to_owned()), None)));
        let (description, fragment) =
            param(&json!({"description": "Hiring day", "format": "date", "examples": ["2026-04-01"]}))
                .expect("ok");
        assert_eq!(description.as_deref(), Some("Hiring day"));
        assert_eq!(fragment.as_deref(), Some(r#"{"examples":["2026-04-01"],"format":"date"}"#));
        assert_eq!(param(&json!({"maxLength": 120})), Ok((None, Some(r#"{"maxLength":120}"#.to_owned()))));
        for (bad, needle) in [
            (json!({"format": "dat"}), "format must be one of"),
            (json!({"pattern": "(unclosed"}), "is not valid"),
            (json!({"minimum": 5, "maximum": 1}), "above its maximum"),
            (json!({"maxlength": 3}), "unknown key \"maxlength\""),
            (json!({"minimum": "1"}), "wrong type"),
            (json!(3), "must be a description"),
        ] {
            let error = param(&bad).expect_err("refused");
            assert!(error.contains(needle), "{bad}: {error}");
        }
    }
}
