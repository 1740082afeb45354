//! Structural parsing of the configuration file: TOML syntax, types and unknown keys.
//!
//! Serde stops at the first structural error. Unknown keys are the common mistake (a typo, a key
//! from another version), so this module reports all of them in one run: it parses the file into
//! a spanned document once, and each time serde names an unknown key (or a value of the wrong
//! type) it removes that entry from the document and deserializes again. Every problem carries
//! the key's full dotted path, found by its place in the document (`sites.tasks.uptream`),
//! because serde cannot name map keys that keep their own spans.

use super::problem::{LineIndex, Problem};
use super::raw::RawConfig;
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue, Deserializer};

/// How many problems one run reports before it stops looking.
const MAX_PROBLEMS: usize = 100;

/// The file as `RawConfig`, with the problems that did not stop it: every unknown key, each
/// removed from what the caller receives. `Err` carries those plus the structural error that did.
pub(super) fn deserialize(text: &str, lines: &LineIndex) -> Result<(RawConfig, Vec<Problem>), Vec<Problem>> {
    let mut document = DeTable::parse(text).map_err(|error| {
        vec![Problem {
            line: error.span().map(|span| lines.line_of(span.start)),
            key: String::new(),
            message: error.message().trim().to_owned(),
        }]
    })?;
    let mut problems = Vec::new();
    loop {
        let deserializer = Deserializer::from(document.clone());
        let error = match RawConfig::deserialize(deserializer) {
            Ok(raw) => return Ok((raw, in_file_order(problems))),
            Err(error) => error,
        };
        let message = error.message().trim().to_owned();
        let span = error.span();
        let line = span.as_ref().map(|span| lines.line_of(span.start));
        if let Some(field) = missing_field(&message) {
            // A required key removed below for a wrong type is reported once, not twice.
            if !problems.iter().any(|problem: &Problem| last_segment(&problem.key) == field) {
                let table = span.and_then(|span| path_of_value(document.get_ref(), &span, ""));
                problems.push(Problem { line, key: table.unwrap_or_default(), message });
            }
            return Err(in_file_order(problems));
        }
        let removed = match &span {
            Some(span) if problems.len() < MAX_PROBLEMS => remove_key(document.get_mut(), span, "")
                .or_else(|| remove_value(document.get_mut(), span, "")),
            _ => None,
        };
        match removed {
            Some(key) => problems.push(Problem { line, key, message }),
            None => {
                problems.push(Problem { line, key: String::new(), message });
                return Err(in_file_order(problems));
            }
        }
    }
}

fn in_file_order(mut problems: Vec<Problem>) -> Vec<Problem> {
    problems.sort_by_key(|problem| problem.line);
    problems
}

/// The field a serde "missing field `name`" message names.
fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

fn last_segment(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Removes the entry whose key sits exactly at `span`, anywhere in `table`; returns its path.
fn remove_key(table: &mut DeTable<'_>, span: &Range<usize>, parent: &str) -> Option<String> {
    let found = table.keys().find(|key| key.span() == *span).cloned();
    if let Some(key) = found {
        table.remove(&key);
        return Some(join(parent, key.get_ref()));
    }
    // Table headers and dotted keys put a table's keys outside its value's span: search every child.
    for (key, value) in table.iter_mut() {
        let path = join(parent, key.get_ref());
        if let Some(found) = remove_in_value(value, span, &path) {
            return Some(found);
        }
    }
    None
}

fn remove_in_value(value: &mut Spanned<DeValue<'_>>, span: &Range<usize>, path: &str) -> Option<String> {
    match value.get_mut() {
        DeValue::Table(table) => remove_key(table, span, path),
        DeValue::Array(array) => array
            .iter_mut()
            .enumerate()
            .find_map(|(index, item)| remove_in_value(item, span, &format!("{path}[{index}]"))),
        _ => None,
    }
}

/// Removes the entry whose scalar value (or array item) sits at `span`: an error about a value's
/// type or content. Returns its path.
fn remove_value(table: &mut DeTable<'_>, span: &Range<usize>, parent: &str) -> Option<String> {
    let mut found = None;
    for (key, value) in table.iter_mut() {
        let path = join(parent, key.get_ref());
        if value.span() == *span {
            found = Some(key.clone());
            break;
        }
        let deeper = match value.get_mut() {
            DeValue::Table(inner) => remove_value(inner, span, &path),
            DeValue::Array(array) => {
                array.iter_mut().enumerate().find_map(|(index, item)| match item.get_mut() {
                    DeValue::Table(inner) => remove_value(inner, span, &format!("{path}[{index}]")),
                    _ => None,
                })
            }
            _ => None,
        };
        if deeper.is_some() {
            return deeper;
        }
        if contains(&value.span(), span)
            && (!is_container(value.get_ref()) || is_plain_array(value.get_ref()))
        {
            found = Some(key.clone());
            break;
        }
    }
    let key = found?;
    table.remove(&key);
    Some(join(parent, key.get_ref()))
}

/// The path of the table or value whose span is exactly `span`.
fn path_of_value(table: &DeTable<'_>, span: &Range<usize>, parent: &str) -> Option<String> {
    table.iter().find_map(|(key, value)| {
        let path = join(parent, key.get_ref());
        if value.span() == *span {
            return Some(path);
        }
        match value.get_ref() {
            DeValue::Table(inner) => path_of_value(inner, span, &path),
            DeValue::Array(array) => {
                array.iter().enumerate().find_map(|(index, item)| match item.get_ref() {
                    DeValue::Table(inner) => path_of_value(inner, span, &format!("{path}[{index}]")),
                    _ => None,
                })
            }
            _ => None,
        }
    })
}

fn is_plain_array(value: &DeValue<'_>) -> bool {
    matches!(value, DeValue::Array(array) if !array.iter().any(|item| item.get_ref().is_table()))
}

fn is_container(value: &DeValue<'_>) -> bool {
    matches!(value, DeValue::Table(_) | DeValue::Array(_))
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// `parent.key`, with the key quoted as TOML does when it is not a bare key.
fn join(parent: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    let key = if bare { key.to_owned() } else { format!("{key:?}") };
    if parent.is_empty() { key } else { format!("{parent}.{key}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<Problem> {
        match deserialize(text, &LineIndex::new(text)) {
            Ok((_, problems)) => problems,
            Err(problems) => problems,
        }
    }

    const BASE: &str = "public_url = \"https://gw.example\"\n[server]\nlisten = \"127.0.0.1:8080\"\n\
                        admin_listen = \"127.0.0.1:9090\"\n";

    #[test]
    fn every_unknown_key_is_reported_with_its_full_path() {
        let text = format!(
            "{BASE}colour = 1\n[sites.tasks]\nhost = \"tasks.example\"\nuptream = \"http://x\"\n\
             upstream = \"http://127.0.0.1:1\"\n[sites.\"odd.name\"]\nhost = \"b.example\"\n\
             upstream = \"http://127.0.0.1:2\"\nextra = true\n"
        );
        let found = problems(&text);
        let keys: Vec<_> = found.iter().map(|problem| problem.key.as_str()).collect();
        assert_eq!(keys, ["server.colour", "sites.tasks.uptream", "sites.\"odd.name\".extra"], "{found:?}");
        assert_eq!(found[1].line, Some(8));
        assert!(found[1].message.contains("unknown field `uptream`"), "{found:?}");
    }

    #[test]
    fn unknown_keys_and_a_type_error_are_reported_together() {
        let text = format!("{BASE}bogus = 1\n[limits]\nmax_connections = \"many\"\n[sites.a]\nhost = 1\n");
        let found = problems(&text);
        let keys: Vec<_> = found.iter().map(|problem| problem.key.as_str()).collect();
        assert_eq!(keys, ["server.bogus", "limits.max_connections", "sites.a.host"], "{found:?}");
        assert_eq!(found[1].line, Some(7));
    }

    #[test]
    fn syntax_errors_name_their_line() {
        let found = problems("public_url = \n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].line, Some(1));
    }
}
