//! Password fields of HTML source that reaches the model (a tool result, a pasted page, a crawl):
//! the `value` of an `<input>` whose `type` is `password`, or whose `autocomplete` says it holds
//! one (`current-password`, `new-password`). Such a field prefilled by the server holds the
//! password itself, whatever the field's `name` (`pw`, `pin`, `j_password`). Attributes may come
//! in any order and be quoted or bare; in JSON text their quotes are escaped (`\"`).

use super::{header, value};

/// Furthest the tag's `<` is looked for before the attribute, and its `>` after it, in bytes.
const MAX_TAG: usize = 4096;

/// Whether the name at `name_start..name_end` (found by a key-word trigger) is the value of a
/// `type` or `autocomplete` attribute saying the field holds a password.
pub(super) fn is_password_field(text: &str, name_start: usize, name_end: usize) -> bool {
    let name = &text[name_start..name_end];
    let says_password =
        ["password", "current-password", "new-password"].iter().any(|word| name.eq_ignore_ascii_case(word));
    if !says_password {
        return false;
    }
    let before = text[..name_start].trim_end_matches(['"', '\'', '\\']).trim_end();
    let Some(before) = before.strip_suffix('=') else {
        return false;
    };
    let before = before.trim_end().as_bytes();
    ["type", "autocomplete"].iter().any(|attribute| {
        before.len() > attribute.len()
            && before[before.len() - attribute.len()..].eq_ignore_ascii_case(attribute.as_bytes())
            && before[before.len() - attribute.len() - 1].is_ascii_whitespace()
    })
}

/// Reports the `value` of the `<input>` tag around `at` (inside its attributes); returns where
/// scanning resumes.
pub(super) fn password_input(text: &str, at: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let floor = at.saturating_sub(MAX_TAG);
    let Some(open) =
        bytes[floor..at].iter().rposition(|&b| b == b'<' || b == b'>').map(|index| floor + index)
    else {
        return at;
    };
    if !starts_tag(bytes, open, "input") {
        return at;
    }
    let stop = super::floor_boundary(text, at + MAX_TAG);
    let mut index = open + 6;
    while index < stop {
        index = super::skip_blank(bytes, index, stop);
        let name_end =
            super::run(bytes, index, 64, |b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':'));
        if name_end == index {
            break; // `>`, `/>`, or not an attribute
        }
        let after_name = super::run(bytes, name_end, 16, |b| b == b' ');
        if bytes.get(after_name) != Some(&b'=') {
            index = name_end;
            continue;
        }
        let value_at = super::run(bytes, after_name + 1, 16, |b| b == b' ');
        let Some(read) = value::read(text, value_at) else {
            break;
        };
        if text[index..name_end].eq_ignore_ascii_case("value") {
            header::report(text, read.start, read.end, 1, out);
            return read.end;
        }
        // Past the closing quote (and its backslashes in JSON text).
        index = super::run(bytes, read.end, 8, |b| matches!(b, b'"' | b'\'' | b'\\'));
    }
    at
}

/// Whether the tag `name` (`tr`, `/th`…, any case) opens at `at`.
pub(super) fn starts_tag(bytes: &[u8], at: usize, name: &str) -> bool {
    let end = at + 1 + name.len();
    bytes.get(at) == Some(&b'<')
        && bytes.get(at + 1..end).is_some_and(|written| written.eq_ignore_ascii_case(name.as_bytes()))
        && bytes.get(end).is_some_and(|&b| b == b'>' || b == b'/' || b.is_ascii_whitespace())
}
