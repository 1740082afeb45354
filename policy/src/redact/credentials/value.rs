//! Reading an assigned value: where it starts and ends in every carrier (bare, quoted, quoted
//! inside JSON text as `\"…\"`), and whether it is a secret or a placeholder, mask, variable
//! reference or a word of prose.
//!
//! A bare value ends at whitespace, a quote, a backtick, `&`, `,`, `;`, `<`, or a JSON escape
//! (`\n`, `\r`, `\t`, `\"`, `\'`, with any number of backslashes); an unbalanced closing bracket
//! or one sentence-ending period is trimmed. A quoted value ends at its matching quote (escaped
//! quotes inside are skipped) and may hold spaces, never a line break.

/// Longest value read, in bytes.
const MAX_VALUE: usize = 8192;

/// A value's byte range in the scan text and how it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Value {
    pub(super) start: usize,
    pub(super) end: usize,
    /// Written between quotes.
    pub(super) quoted: bool,
}

impl Value {
    pub(super) fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }
}

/// Reads the value that starts at `at` (just past the separator and its spaces).
pub(super) fn read(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let quote_at = super::run(bytes, at, 8, |b| b == b'\\');
    let escapes = quote_at - at;
    match bytes.get(quote_at) {
        Some(&quote @ (b'"' | b'\'' | b'`')) => match closing_quote(bytes, quote_at + 1, quote, escapes) {
            Some(end) => Some(Value { start: quote_at + 1, end, quoted: true }),
            None => read_bare(text, quote_at + 1),
        },
        _ if escapes > 0 => None,
        _ => read_bare(text, at),
    }
}

/// The index of the quote closing a value opened by `quote` after `escapes` backslashes. In JSON
/// text each level of nesting doubles the backslashes, so the closing quote carries exactly as
/// many as the opening one (modulo escaped backslashes) and an escaped quote inside carries more.
fn closing_quote(bytes: &[u8], from: usize, quote: u8, escapes: usize) -> Option<usize> {
    let stop = bytes.len().min(from + MAX_VALUE);
    let mut index = from;
    while index < stop {
        match bytes[index] {
            b'\n' | b'\r' => return None,
            b'\\' => {
                let run_start = index;
                index = super::run(bytes, index, stop - index, |b| b == b'\\');
                let backslashes = index - run_start;
                if bytes.get(index) == Some(&quote) {
                    if backslashes >= escapes && (backslashes - escapes).is_multiple_of(2 * (escapes + 1)) {
                        return Some(run_start);
                    }
                    if backslashes < escapes {
                        return Some(run_start);
                    }
                    index += 1;
                }
            }
            byte if byte == quote => return Some(index),
            _ => index += 1,
        }
    }
    None
}

/// A bare value from `at`.
fn read_bare(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    // An already-bracketed value (`[credential 1]`, `[REDACTED]`) is taken whole.
    if bytes.get(at) == Some(&b'[') {
        let close = super::run(bytes, at + 1, 48, |b| b != b']' && b != b'\n');
        if bytes.get(close) == Some(&b']') {
            return Some(Value { start: at, end: close + 1, quoted: false });
        }
    }
    let stop = super::floor_boundary(text, bytes.len().min(at + MAX_VALUE));
    let mut end = at;
    while end < stop {
        match bytes[end] {
            b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`' | b'&' | b',' | b';' | b'<' => break,
            b'\\' => {
                let after = super::run(bytes, end, stop - end, |b| b == b'\\');
                if matches!(bytes.get(after), Some(b'n' | b'r' | b't' | b'"' | b'\'') | None) {
                    break;
                }
                end = after;
            }
            _ => end += 1,
        }
    }
    let end = trim_bare(&text[at..end]) + at;
    (end > at).then_some(Value { start: at, end, quoted: false })
}

/// The length of a bare value without an unbalanced closing bracket or a sentence's period.
fn trim_bare(value: &str) -> usize {
    let mut value = value;
    for (open, close) in [('(', ')'), ('[', ']'), ('{', '}')] {
        while value.ends_with(close) && value.matches(open).count() < value.matches(close).count() {
            value = &value[..value.len() - 1];
        }
    }
    if let Some(stripped) = value.strip_suffix('.')
        && !stripped.ends_with('.')
    {
        value = stripped;
    }
    value.len()
}

/// Words that stand for no value, or for a value kept elsewhere (case-insensitive, compared with
/// `_`, `-`, spaces and dots removed). `changeme`, `changeit` and `password` are publicly known
/// defaults or template text: they hide nothing, and redacting them would only hide the template.
const NOT_SECRETS: [&str; 45] = [
    "n/a",
    "null",
    "none",
    "nil",
    "undefined",
    "empty",
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "na",
    "required",
    "optional",
    "string",
    "str",
    "int",
    "bool",
    "boolean",
    "text",
    "hidden",
    "masked",
    "redacted",
    "removed",
    "omitted",
    "tbd",
    "todo",
    "unknown",
    "unset",
    "notset",
    "changeme",
    "changeit",
    "password",
    "passwd",
    "secret",
    "token",
    "example",
    "sample",
    "placeholder",
    "dummy",
    "flag",
    "option",
    "value",
    "variable",
];

/// Whether `value` is not a secret itself: empty, masked (`***`, `xxxx`, `•••`), a template or
/// variable reference (`${DB_PASSWORD}`, `$DB_PASSWORD`, `{{ password }}`, `%s`, `<password>`,
/// `[credential 1]`), a code reference (`config.password`, `db_password`), or a word in
/// [`NOT_SECRETS`].
pub(super) fn is_placeholder(value: &str) -> bool {
    let bytes = value.as_bytes();
    if !bytes.iter().any(u8::is_ascii_alphanumeric) || is_masked(value) {
        return true;
    }
    let first = bytes[0];
    let last = bytes[bytes.len() - 1];
    let wrapped = matches!((first, last), (b'<', b'>') | (b'[', b']') | (b'{', b'}') | (b'(', b')'));
    if wrapped
        || value.starts_with("${")
        || value.starts_with("$(")
        || value.starts_with("$_")
        || value.starts_with("{{")
        || value.starts_with("{%")
        || value.starts_with("#{")
        || value.starts_with("%(")
        || value.starts_with("$env:")
        || value.starts_with("%env(")
        || matches!(value, "%s" | "%d" | "%r" | "?")
        || (first == b'%' && last == b'%' && bytes.len() > 2)
        || is_upper_variable(value)
        || is_code_reference(value)
    {
        return true;
    }
    let folded: String =
        value.chars().filter(|c| !matches!(c, '_' | '-' | ' ' | '.')).flat_map(char::to_lowercase).collect();
    NOT_SECRETS.contains(&folded.as_str()) || is_template_text(&folded)
}

/// `***`, `•••`, `…`, or every letter and digit the same (`xxxx`, `XXXXXXXX`, `0000`).
pub(super) fn is_masked(value: &str) -> bool {
    if value.contains("***") || value.contains("\u{2022}\u{2022}") || value.contains('\u{2026}') {
        return true;
    }
    let mut alphanumerics = value.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase());
    match alphanumerics.next() {
        Some(first) => alphanumerics.all(|b| b == first),
        None => true,
    }
}

/// `$DB_PASSWORD`: a shell or env-file variable (upper case, as such variables are written).
fn is_upper_variable(value: &str) -> bool {
    value.strip_prefix('$').is_some_and(|name| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            && name.as_bytes()[0].is_ascii_uppercase()
    })
}

/// A value that is code, not data: `settings.DB_PASSWORD`, `os.environ`, `db_password`,
/// `getpass()`.
fn is_code_reference(value: &str) -> bool {
    const OBJECTS: [&str; 16] = [
        "self",
        "this",
        "config",
        "settings",
        "cfg",
        "conf",
        "env",
        "os",
        "process",
        "args",
        "opts",
        "options",
        "params",
        "secrets",
        "credentials",
        "vars",
    ];
    let is_identifier = |part: &str| {
        !part.is_empty()
            && !part.as_bytes()[0].is_ascii_digit()
            && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    let call = value.trim_end_matches(['(', ')', '[']);
    let parts: Vec<&str> = call.split('.').collect();
    if !parts.iter().all(|part| is_identifier(part)) {
        return false;
    }
    if call.len() < value.len()
        || (parts.len() > 1 && OBJECTS.contains(&parts[0].to_ascii_lowercase().as_str()))
    {
        return true;
    }
    let lower = call.to_ascii_lowercase();
    lower.contains('_')
        && !lower.bytes().any(|b| b.is_ascii_digit())
        && ["password", "passwd", "token", "secret", "apikey", "api_key"]
            .iter()
            .any(|word| lower.contains(word))
}

/// Template text such as `your_api_key_here`, `YOUR-TOKEN`, `<insert password>`, `replace_me`.
fn is_template_text(folded: &str) -> bool {
    if folded.contains("example") || folded.contains("placeholder") || folded.contains("replaceme") {
        return true;
    }
    if folded.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    let names_a_secret = ["pass", "pwd", "token", "key", "secret"].iter().any(|word| folded.contains(word));
    let starts = ["your", "my", "enter", "insert", "replace", "put", "add", "paste"];
    (names_a_secret && starts.iter().any(|start| folded.starts_with(start))) || folded.ends_with("here")
}

/// Whether a bare value is an ordinary word followed by more prose on the same line, as in
/// "password: at least 12 characters" (the value read would be `at`).
pub(super) fn is_prose(text: &str, value: Value) -> bool {
    let word = value.text(text);
    if !word.bytes().all(|b| b.is_ascii_alphabetic() || b == b'\'') {
        return false;
    }
    let bytes = text.as_bytes();
    let next = super::run(bytes, value.end, 16, |b| b == b' ' || b == b'\t');
    if next == value.end || !bytes.get(next).is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    // The next word starts another `key=value` or `key: value`: a log line, not prose.
    let after = super::run(bytes, next, 64, |b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    !matches!(bytes.get(after), Some(b'=' | b':'))
}

/// True for a path such as `/run/secrets/db` or `~/.pgpass`: the value names a file holding the
/// secret, not the secret itself.
pub(super) fn is_path(value: &str) -> bool {
    let rest =
        value.strip_prefix('~').or_else(|| value.strip_prefix("..")).or_else(|| value.strip_prefix('.'));
    let rest = rest.unwrap_or(value);
    rest.starts_with('/')
        && rest.matches('/').count() >= 2
        && rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-'))
}
