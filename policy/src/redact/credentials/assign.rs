//! Secrets assigned to a key in every common syntax: `key=value`, `key: value` (YAML, logs),
//! `"key": "value"` (JSON, also escaped inside JSON text), `key => 'value'`, `KEY="value"`
//! (env, shell, INI, TOML), `?token=…&`, `--password value` / `--password=value`,
//! `<password>value</password>`, and pairs written as `name: DB_PASSWORD` + `value: …` (Kubernetes
//! env lists) or `<add key="DbPassword" value="…"/>`.
//!
//! Only the value is reported. Strong separators (`=` without spaces, `=>`, `:=`, a quoted key or
//! value, XML, `--flag=`) take any value that is not a placeholder. Weak ones (an unquoted
//! `key: value`, a spaced `key = value`, `--flag value`) are also how prose is written
//! ("password: at least 12 characters"), so there a value that is an ordinary word followed by
//! more prose is skipped, and so are pure numbers under four digits.
//!
//! A name with no separator after it is handed on: a CSV header cell to `csv`, a name in a
//! sentence to `prose`.

use super::key::{self, Key};
use super::value::{self, Value};
use super::{apart, call, cli, csv, device, header, html, prose, run, table, wifi};

/// Handles a key word found at `start..end`; returns where scanning resumes.
pub(super) fn at_keyword(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let mut name_start = start;
    while name_start > 0
        && is_name(bytes[name_start - 1])
        && !super::after_escape(bytes, name_start)
        && start - name_start < 64
    {
        name_start -= 1;
    }
    let mut name_end = run(bytes, end, 64, is_name);
    if text[name_end..].starts_with(|c: char| c.is_alphabetic() && !c.is_ascii()) {
        // A name spelled beyond ASCII (`contraseña`), up to a particle linking it to its value
        // (`密码是 …`), which the name does not hold.
        let rest = &text[name_end..super::floor_boundary(text, name_end + 64)];
        let word = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
        let particle = PARTICLES.iter().filter_map(|particle| rest[..word].find(particle)).min();
        name_end += particle.unwrap_or(word);
    }
    // `pass phrase`, written as two words, is one name.
    let phrase_end = name_end + " phrase".len();
    if text[name_start..name_end].eq_ignore_ascii_case("pass")
        && text.get(name_end..phrase_end).is_some_and(|word| word.eq_ignore_ascii_case(" phrase"))
        && !bytes.get(phrase_end).copied().is_some_and(is_name)
    {
        name_end = phrase_end;
    }
    let query = name_start > 0 && matches!(bytes[name_start - 1], b'?' | b'&');
    let dashes = run(bytes, name_start, 2, |b| b == b'-') - name_start;
    name_start += run(bytes, name_start, 8, |b| b == b'-' || b == b'.') - name_start;
    while name_end > name_start && matches!(bytes[name_end - 1], b'.' | b'-') {
        name_end -= 1;
    }
    if name_start >= name_end {
        return end;
    }
    if in_placeholder(bytes, name_start, name_end) {
        return name_end;
    }
    if html::is_password_field(text, name_start, name_end) {
        return html::password_input(text, name_start, out);
    }
    let in_code = call::argument(text, name_start, name_end, out)
        .or_else(|| call::pair(text, name_start, name_end, out))
        .or_else(|| call::tuple(text, name_start, name_end, out));
    if let Some(resume) = in_code {
        return resume;
    }
    let assigned = may_assign(text, name_start, name_end, dashes == 2);
    let cell = !assigned && csv::cell(bytes, name_start, name_end).is_some();
    let in_prose = !assigned && prose::may_follow(text, name_start, name_end);
    if !assigned
        && let Some(resume) = device::after_name(text, name_start, name_end, out)
            .or_else(|| cli::redis_prompt(text, name_start, name_end, out))
            .or_else(|| apart::label_cell(text, name_start, name_end, out))
            .or_else(|| table::markdown(text, name_start, name_end, out))
            .or_else(|| table::html(text, name_start, name_end, out))
    {
        return resume;
    }
    if !assigned && !cell && !in_prose {
        return name_end;
    }
    let name = &text[name_start..name_end];
    let classified = key::classify(name, query, prose_word_before(text, name_start));
    let Some(key) = classified.or_else(|| wifi::key_after_ssid(text, name_start, name)) else {
        return name_end;
    };
    if !assigned {
        return match key {
            Key::Secret { weak: false } => {
                match cell.then(|| csv::at_header(text, name_start, name_end, out)).flatten() {
                    Some(resume) => resume,
                    None if in_prose => prose::around_name(text, name_start, name_end, out),
                    None => name_end,
                }
            }
            // Key material in a sentence (`the KEK is …`), where the value must look like a
            // secret as any in prose; a table's column of it may be a recipe's.
            Key::Material if in_prose => prose::around_name(text, name_start, name_end, out),
            _ => name_end,
        };
    }
    match key {
        Key::Authorization => header::authorization(text, name_end, out),
        Key::Bearer => header::bearer(text, name_end, out),
        Key::Secret { .. } | Key::Material => {
            let weak = key == Key::Secret { weak: true };
            let flag = dashes == 2;
            let Some((value, strong)) =
                separated(text, name_start, name_end, flag).or_else(|| paired(text, name_start, name_end))
            else {
                return name_end;
            };
            let (value, strong) = match value::block_scalar(text, name_start, value)
                .or_else(|| value::passphrase_line(text, name, value))
                .or_else(|| value::user_and_password(text, name_start, name, value))
                .or_else(|| value::rest_of_line(text, name_start, name_end, value))
            {
                Some(whole) => (whole, true),
                None => (value, strong),
            };
            let written = value.text(text);
            if written.contains("EXAMPLE") && written.len() >= 16 && !written.contains(' ') {
                // A vendor's documented example (`wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`).
                super::look_alike(out, value.start, value.end);
            } else if value::accept(text, name, value, strong, weak) && key.admits(written) {
                super::secret(out, value.start, value.end);
            }
            value.start
        }
    }
}

/// Particles that link a name to its value in Chinese (`是`, `为`, `為`), Japanese (`は`) and
/// Korean (`는`, `은`): `密码是 …`, `パスワードは …`, `비밀번호는 …`.
const PARTICLES: [&str; 6] = ["\u{662f}", "\u{4e3a}", "\u{70ba}", "\u{306f}", "\u{b294}", "\u{c740}"];

/// The length of the particle at `at`, or 0.
fn particle_len(text: &str, at: usize) -> usize {
    let rest = text.get(at..).unwrap_or_default();
    PARTICLES.iter().find(|particle| rest.starts_with(*particle)).map_or(0, |particle| particle.len())
}

/// Whether the name is the kind of a placeholder (`[credential 1]`): text the model already saw
/// redacted, or its own answer, holds them.
fn in_placeholder(bytes: &[u8], name_start: usize, name_end: usize) -> bool {
    let digits = run(bytes, name_end + 1, 8, |b| b.is_ascii_digit());
    name_start > 0
        && bytes[name_start - 1] == b'['
        && bytes.get(name_end) == Some(&b' ')
        && digits > name_end + 1
        && bytes.get(digits) == Some(&b']')
}

/// A cheap first look: whether anything after (or before) the name can make it an assignment,
/// so the many key words of prose ("the author", "a key to") are dropped at once.
fn may_assign(text: &str, name_start: usize, name_end: usize, flag: bool) -> bool {
    let bytes = text.as_bytes();
    let closed = run(bytes, name_end, 4, |b| matches!(b, b'"' | b'\'' | b'\\' | b']'));
    let next = run(bytes, closed, 16, |b| b == b' ' || b == b'\t');
    let opened = name_start.checked_sub(1).map(|index| bytes[index]);
    matches!(bytes.get(next), Some(b'=' | b':'))
        || particle_len(text, next) > 0
        || (opened == Some(b'<') && bytes.get(name_end) == Some(&b'>'))
        || (flag && next > closed)
        || &bytes[closed..next] == b"\t"
        || (next > name_end && bytes[name_start..name_end].eq_ignore_ascii_case(b"bearer"))
        || is_name_label(bytes, name_start)
        || netrc_password(text, name_start, name_end)
}

/// Whether the text before the name is a `name`/`key` label (`name: DB_PASSWORD`, `key="…"`).
fn is_name_label(bytes: &[u8], name_start: usize) -> bool {
    let mut index = name_start;
    while index > 0
        && name_start - index < 8
        && matches!(bytes[index - 1], b'"' | b'\'' | b'\\' | b' ' | b':' | b'=')
    {
        index -= 1;
    }
    let before = &bytes[..index];
    // A label is followed by its separator (`name: X`, `key="X"`); `key password` is prose.
    bytes[index..name_start].iter().any(|&b| b == b':' || b == b'=')
        && [b"name".as_slice(), b"key".as_slice()].iter().any(|label| {
            before.len() >= label.len()
                && before[before.len() - label.len()..].eq_ignore_ascii_case(label)
                && before
                    .len()
                    .checked_sub(label.len() + 1)
                    .is_none_or(|i| !before[i].is_ascii_alphanumeric())
        })
}

/// The value after `name` and its separator, and whether the separator is a strong one.
fn separated(text: &str, name_start: usize, name_end: usize, flag: bool) -> Option<(Value, bool)> {
    let bytes = text.as_bytes();
    let opened = name_start.checked_sub(1).map(|index| bytes[index]);
    let key_quoted = matches!(opened, Some(b'"' | b'\''));
    if opened == Some(b'<') && bytes.get(name_end) == Some(&b'>') {
        return xml(text, name_start, name_end);
    }
    let mut at = run(bytes, name_end, 4, |b| matches!(b, b'"' | b'\'' | b'\\' | b']'));
    if netrc_password(text, name_start, name_end) {
        let value = value::read(text, run(bytes, at, 4, |b| b == b' ' || b == b'\t'))?;
        return Some((value, true));
    }
    let spaced_before = run(bytes, at, 16, |b| b == b' ' || b == b'\t');
    let spaced = spaced_before > at;
    // One tab alone: a cell of a table pasted as text (`Password<TAB>…`).
    let tabbed = &bytes[at..spaced_before] == b"\t";
    at = spaced_before;
    let rest = &bytes[at.min(bytes.len())..];
    let (separator_len, strong) = if rest.starts_with(b"=>") || rest.starts_with(b":=") {
        (2, true)
    } else if rest.starts_with(b"==") {
        (2, false)
    } else if rest.starts_with(b"=") {
        (1, !spaced || flag)
    } else if rest.starts_with(b":") && !rest.starts_with(b"::") && !rest.starts_with(b"://") {
        (1, key_quoted)
    } else if rest.starts_with(b":: ") {
        // LDIF's base64 value (`userPassword:: e1NTSEF9…`); `std::string` has no space.
        (2, false)
    } else if (flag && spaced) || tabbed {
        (0, false)
    } else if particle_len(text, at) > 0 {
        // `密码为：…`: a colon (fullwidth, unless the scan text folded it) may follow the particle.
        let after = at + particle_len(text, at);
        let colon = if text[after..].starts_with('\u{ff1a}') {
            '\u{ff1a}'.len_utf8()
        } else {
            run(bytes, after, 1, |b| b == b':') - after
        };
        (after + colon - at, false)
    } else {
        return None;
    };
    at += separator_len;
    let mut value_at = run(bytes, at, 16, |b| b == b' ' || b == b'\t');
    // Markdown's emphasis closing a label (`**Password:** …`, `__Token:__ …`); `***` is a mask.
    let emphasis = run(bytes, value_at, 3, |b| b == b'*' || b == b'_');
    let label = rest.starts_with(b":") && (1..=2).contains(&(emphasis - value_at));
    if label && matches!(bytes.get(emphasis), Some(b' ' | b'\t')) {
        value_at = run(bytes, emphasis, 16, |b| b == b' ' || b == b'\t');
    }
    let value = match bytes.get(value_at) {
        Some(b'<') => return apart::in_tags(text, value_at).map(|value| (value, false)),
        Some(b'\n' | b'\r' | b'\\') if separator_len > 0 && apart::line_break(bytes, value_at).is_some() => {
            return apart::next_line(text, value_at).map(|value| (value, value.quoted));
        }
        _ => value::read(text, value_at)?,
    };
    if separator_len == 2 && rest.starts_with(b"==") && !value.quoted {
        return None;
    }
    if separator_len == 0 && bytes[value.start] == b'-' {
        return None;
    }
    if tabbed && !flag && !super::shape::looks_secret(value.text(text)) {
        // A table's cell holds a description as often as a value (`password<TAB>string`).
        return None;
    }
    if particle_len(text, at - separator_len) > 0
        && !value.text(text).bytes().any(|b| b.is_ascii_alphanumeric())
    {
        // After a particle, a value of the sentence's own script is prose (`パスワードはありません`).
        return None;
    }
    Some((value, strong || value.quoted))
}

/// `machine host login ada password Xy7pQ2m` (`.netrc`): `password` after `login <name> `.
fn netrc_password(text: &str, name_start: usize, name_end: usize) -> bool {
    let name = &text[name_start..name_end];
    let before = text[..name_start].trim_end_matches([' ', '\t']);
    let mut words = before.rsplit([' ', '\t']).filter(|word| !word.is_empty());
    (name == "password" || name == "passwd")
        && before.len() < name_start
        && text[name_end..].starts_with([' ', '\t'])
        && words.nth(1) == Some("login")
}

/// `<password>value</password>`: the element's text, when the closing tag follows it.
fn xml(text: &str, name_start: usize, name_end: usize) -> Option<(Value, bool)> {
    let start = name_end + 1;
    let end = start + text[start..super::floor_boundary(text, start + 4096)].find('<')?;
    let closing = text[end..].strip_prefix("</")?.strip_prefix(&text[name_start..name_end])?;
    closing.starts_with('>').then_some((Value { start, end, quoted: true }, true))
}

/// A key named as the value of `name`/`key` with its value in a sibling `value` field:
/// `- name: DB_PASSWORD` + `value: hunter2`, `{"name": "API_KEY", "value": "…"}`,
/// `<add key="DbPassword" value="…" />`, or the element's text after it in Java's XML
/// properties (`<entry key="password">…</entry>`).
fn paired(text: &str, name_start: usize, name_end: usize) -> Option<(Value, bool)> {
    let bytes = text.as_bytes();
    if !is_name_label(bytes, name_start) {
        return None;
    }
    // Java's XML properties, `<entry key="password">…</entry>`: the element's text.
    let closed = run(bytes, name_end, 2, |b| b == b'"' || b == b'\'');
    if bytes.get(closed) == Some(&b'>') {
        let start = closed + 1;
        let end = start + text[start..super::floor_boundary(text, start + 4096)].find('<')?;
        return text[end..].starts_with("</").then_some((Value { start, end, quoted: true }, true));
    }
    let window = &text[name_end..super::floor_boundary(text, name_end + 120)];
    let offset = window.find("value").or_else(|| window.find("Value"))?;
    let value_name = name_end + offset;
    if bytes[value_name - 1].is_ascii_alphanumeric() {
        return None;
    }
    let (value, _) = separated(text, value_name, value_name + 5, false)?;
    Some((value, true))
}

/// The word right before `name_start` when one space separates them (`API` in `API key:`).
fn prose_word_before(text: &str, name_start: usize) -> Option<&str> {
    let word = text[..name_start].strip_suffix(' ')?.rsplit(|c: char| !c.is_ascii_alphabetic()).next()?;
    (!word.is_empty()).then_some(word)
}
