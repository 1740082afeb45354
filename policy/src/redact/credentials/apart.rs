//! Values set apart from their name by layout rather than syntax:
//! - by markup: the name is a cell or term of its own and the value the next one
//!   (`<th>Password</th><td>…</td>`, `<dt>Token</dt><dd>…</dd>`), or the value sits in inline
//!   tags after the separator (`Password: <code>…</code>`, `<b>Password:</b> …`);
//! - by a line break: a label ending its line, the value alone on the next
//!   (`Password:` + `  …`), as notes, e-mails and YAML's plain scalars write it.
//!
//! Layout carries no quotes to mark a value, so only one token is taken, and never a plain word
//! (`<td>Password</td><td>string</td>` in an API's documentation names a type, `Password:` +
//! `Required` is a form's note).

use super::Finding;
use super::key::{self, Key};
use super::run;
use super::value::{self, Value};

/// Longest stretch of tags and blanks between a name and its value, in bytes.
const MAX_TAGS: usize = 160;

/// Longest value taken from layout, in bytes.
const MAX_TOKEN: usize = 256;

/// Elements that hold a label or a value in a table, a list of terms or inline text.
const ELEMENTS: [&str; 24] = [
    "td", "th", "dd", "dt", "span", "code", "kbd", "samp", "tt", "b", "strong", "em", "i", "mark", "pre",
    "div", "p", "label", "li", "var", "small", "u", "font", "br",
];

/// A name that is the whole text of its element (`<th>Password</th>`, `<dt>Token:</dt>`), its
/// value the text of the next one. Returns where scanning resumes when it is such a label.
pub(super) fn label_cell(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<Finding>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let colon = run(bytes, name_end, 4, |b| b == b' ' || b == b'\t' || b == b':');
    if !text[colon..].starts_with("</") {
        return None;
    }
    // The element's text may start with one qualifier (`<dt>API token</dt>`).
    let before = text[..name_start].trim_end_matches([' ', '\t']);
    let word = before.len() - before.trim_end_matches(|c: char| c.is_ascii_alphabetic()).len();
    let qualifier = (word > 0 && before.len() < name_start).then(|| &before[before.len() - word..]);
    let opened = if qualifier.is_some() { &before[..before.len() - word] } else { before };
    if !opened.trim_end_matches([' ', '\t']).ends_with('>') {
        return None;
    }
    let name = &text[name_start..name_end];
    let Some(Key::Secret { weak }) = key::classify(name, false, qualifier) else {
        return None;
    };
    let value = in_tags(text, colon)?;
    if value::accept(text, name, value, false, weak) {
        super::secret(out, value.start, value.end);
    }
    Some(value.start)
}

/// The value after a name's separator when tags come first (`Password: <code>…</code>`, the
/// `</b>` of `<b>Password:</b> …`): the text after one or more inline tags, up to the next tag
/// or line break. `None` when no tag comes first or the text is not one token.
pub(super) fn in_tags(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let stop = bytes.len().min(at + MAX_TAGS);
    let (mut index, mut tags) = (at, 0);
    while index < stop {
        match bytes[index] {
            b' ' | b'\t' | b'\r' | b'\n' => index += 1,
            // The separator after a label's closing tag (`<strong>Password</strong>: …`).
            b':' if tags > 0 && bytes[index - 1] == b'>' => index += 1,
            b'<' => {
                index = tag_end(text, index)?;
                tags += 1;
            }
            _ => break,
        }
    }
    if tags == 0 || index >= stop {
        return None;
    }
    token(text, index, |index| bytes[index] == b'<')
}

/// The value alone on the line after a label that ends its line (`Password:` + `  …`), `at`
/// being the line break, written or escaped as JSON text writes it (`\n`). `None` when that line
/// is not one token, or holds a name of its own (YAML's nested `value: …`, the next `NAME=…` of
/// an env file), a list item, a comment or markup.
pub(super) fn next_line(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let line = at + line_break(bytes, at)?;
    let start = run(bytes, line, 32, |b| b == b' ' || b == b'\t');
    if matches!(bytes.get(start), None | Some(b'-' | b'#' | b'<' | b'{' | b'['))
        || line_break(bytes, start).is_some()
    {
        return None;
    }
    if matches!(bytes.get(start), Some(b'"' | b'\'')) {
        // A quoted value (`"password":` + `  "…"`) is read as one.
        return value::read(text, start).filter(|value| value.quoted && value.end > value.start);
    }
    let ends = |index: usize| line_break(bytes, index).is_some() || matches!(bytes[index], b'\\' | b'"');
    let value = token(text, start, ends)?;
    // After `NAME=` (an env file's empty value) a line with `=` is the next assignment; after a
    // `:` (prose, YAML's plain scalar) an `=` is the value's own (`Password:` + `  QUU=Gdz…`).
    let label_sign = text[..at].trim_end_matches([' ', '\t']).bytes().next_back();
    let named =
        (label_sign == Some(b'=') && value.text(text).contains('=')) || value.text(text).ends_with(':');
    (!named).then_some(value)
}

/// The length of the line break at `at`: `\r\n`, `\n` or `\r`, or its escape in JSON text (`\n`,
/// `\r\n`, with any number of backslashes).
pub(super) fn line_break(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at..at + 2) {
        Some([b'\r', b'\n']) => return Some(2),
        _ if matches!(bytes.get(at), Some(b'\n' | b'\r')) => return Some(1),
        _ => {}
    }
    let letter = run(bytes, at, 8, |b| b == b'\\');
    match bytes.get(letter) {
        _ if letter == at => None,
        Some(b'n') => Some(letter + 1 - at),
        Some(b'r') => {
            // `\r\n` escaped is one break.
            let after = letter + 1;
            let newline =
                if bytes.get(after) == Some(&b'\\') { line_break(bytes, after).unwrap_or(0) } else { 0 };
            Some(after - at + newline)
        }
        _ => None,
    }
}

/// One token from `start` to the first index that `ends` (or the text's end), trailing blanks
/// left out: `None` when it is empty, holds a blank, is longer than `MAX_TOKEN`, or is a plain
/// word.
fn token(text: &str, start: usize, ends: impl Fn(usize) -> bool) -> Option<Value> {
    let bytes = text.as_bytes();
    let stop = bytes.len().min(start + MAX_TOKEN + 1);
    let mut end = start;
    while end < stop && !ends(end) {
        end += 1;
    }
    let end = super::floor_boundary(text, end);
    let written = text[start..end].trim_end_matches([' ', '\t']);
    let whole = end == bytes.len() || (end < stop && ends(end));
    if !whole || written.is_empty() || written.len() > MAX_TOKEN || written.contains([' ', '\t']) {
        return None;
    }
    (!is_plain_word(written)).then_some(Value { start, end: start + written.len(), quoted: false })
}

/// The end of the tag starting at `at` when it is one of `ELEMENTS` (opening or closing).
fn tag_end(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let name_start = if bytes.get(at + 1) == Some(&b'/') { at + 2 } else { at + 1 };
    let name_end = run(bytes, name_start, 8, |b| b.is_ascii_alphanumeric());
    let name = &text[name_start..name_end];
    if !ELEMENTS.iter().any(|element| name.eq_ignore_ascii_case(element)) {
        return None;
    }
    let close = run(bytes, name_end, 128, |b| b != b'>' && b != b'<');
    (bytes.get(close) == Some(&b'>')).then_some(close + 1)
}

/// A word of letters written in lower case or capitalized (`string`, `Required`): a type, a
/// note or a heading, not a password set apart by layout.
fn is_plain_word(written: &str) -> bool {
    let mut letters = written.chars();
    let first = letters.next().is_some_and(char::is_alphabetic);
    first && letters.all(|c| c.is_alphabetic() && c.is_lowercase())
}
