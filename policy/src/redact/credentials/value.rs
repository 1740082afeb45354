//! Reading an assigned value: where it starts and ends in every carrier (bare, quoted, quoted
//! inside JSON text as `\"…\"`), and whether a bare one is a word of prose.
//!
//! A bare value ends at whitespace, a quote, a backtick, a `&` that starts the next query
//! parameter (`&user=`; any other `&` is the value's, and an HTML character reference such as
//! `&equals;` is read through), `,`, `;`, `<`, or a JSON escape
//! (`\n`, `\r`, `\t`, `\"`, `\'`, with any number of backslashes); an unbalanced closing bracket
//! or one sentence-ending period is trimmed. A quoted value ends at its matching quote (escaped
//! quotes inside are skipped, and so are YAML's and SQL's doubled single quotes) and may hold
//! spaces, never a line break.

use super::placeholder;

/// Longest value read, in bytes.
pub(super) const MAX_VALUE: usize = 8192;

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
        Some(b'{') => braced(text, at).or_else(|| read_bare(text, at)),
        _ => read_bare(text, at),
    }
}

/// An ODBC value in braces, which may hold `;` (`Pwd={Rf4$t;6yH};`): the text inside, when the
/// closing brace ends the value (before `;`, a quote, whitespace or the end). Templates
/// (`{{ pw }}`) are not braced values.
fn braced(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    if bytes.get(at + 1) == Some(&b'{') {
        return None;
    }
    let close = super::run(bytes, at + 1, 256, |b| b != b'}' && b != b'\n' && b != b'{');
    let ends = bytes.get(close) == Some(&b'}')
        && bytes
            .get(close + 1)
            .is_none_or(|b| matches!(b, b';' | b'"' | b'\'' | b' ' | b'\t' | b'\r' | b'\n'));
    (ends && close > at + 1).then_some(Value { start: at + 1, end: close, quoted: true })
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
            // YAML and SQL write a quote inside single quotes as two (`'it''s'`).
            b'\'' if quote == b'\'' && escapes == 0 && bytes.get(index + 1) == Some(&b'\'') => index += 2,
            byte if byte == quote => return Some(index),
            _ => index += 1,
        }
    }
    None
}

/// The content of a YAML block scalar (`password: |` or `>-`, the secret on the lines below, as
/// Kubernetes and Helm values write long or multi-line secrets): when the bare value `indicator`
/// is a block indicator ending its line, the lines after it indented deeper than the line of
/// `name_start`, from the first one's first character to the last one's end. `None` otherwise.
pub(super) fn block_scalar(text: &str, name_start: usize, indicator: Value) -> Option<Value> {
    let written = indicator.text(text).as_bytes();
    let is_indicator = matches!(written.first(), Some(b'|' | b'>'))
        && written.len() <= 3
        && written[1..].iter().all(|b| matches!(b, b'-' | b'+' | b'1'..=b'9'));
    if indicator.quoted || !is_indicator {
        return None;
    }
    let line_end = |from: usize| text[from..].find('\n').map_or(text.len(), |index| from + index);
    let rest_of_line = text[indicator.end..line_end(indicator.end)].trim();
    if !rest_of_line.is_empty() && !rest_of_line.starts_with('#') {
        return None;
    }
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let key_line = super::line_start_within(text, name_start, 256)?;
    let key_indent = indent(&text[key_line..name_start]);
    let (mut start, mut end) = (None, 0);
    let mut at = line_end(indicator.end) + 1;
    while at < text.len() && at - indicator.end <= MAX_VALUE {
        let next = line_end(at);
        let line = &text[at..next];
        if !line.trim().is_empty() {
            if indent(line) <= key_indent {
                break;
            }
            start.get_or_insert(at + indent(line));
            end = at + line.trim_end().len();
        }
        at = next + 1;
    }
    Some(Value { start: start?, end, quoted: true })
}

/// The rest of the line as one value, when the key names a passphrase (`passphrase: correct
/// horse battery staple`) and the bare value read is the first of three to twelve words of
/// letters that make no sentence (see `placeholder::is_sentence`), up to a line break or a ` #`
/// comment. `None` otherwise.
pub(super) fn passphrase_line(text: &str, name: &str, first: Value) -> Option<Value> {
    // Also written as two words: `pass phrase`, `pass-phrase`, `Pass_Phrase`; compared from the
    // end, skipping the joiners, without building the joined name.
    let mut letters = name.bytes().rev().filter(|b| !matches!(b, b' ' | b'-' | b'_'));
    let names_passphrase = b"passphrase"
        .iter()
        .rev()
        .all(|wanted| letters.next().is_some_and(|b| b.eq_ignore_ascii_case(wanted)));
    if first.quoted || !names_passphrase {
        return None;
    }
    let rest = &text[first.start..];
    let line = rest.find(['\n', '\r', '"', '\'', '\\']).map_or(rest, |end| &rest[..end]);
    let line = line.split(" #").next().unwrap_or(line).trim_end();
    let words: Vec<&str> = line.split(' ').collect();
    let letters = words.iter().all(|word| !word.is_empty() && word.chars().all(char::is_alphabetic));
    let whole = (3..=12).contains(&words.len()) && letters && !placeholder::is_sentence(line);
    whole.then_some(Value { start: first.start, end: first.start + line.len(), quoted: false })
}

/// `user / password` under a name for both (`Credentials: admin / P4ss!`, `creds: svc | pw`,
/// `Zugangsdaten: bob / …`, `Username/Password: admin / P4ss!`): the pair as one value, so the
/// password after the separator is not left out. `None` otherwise.
pub(super) fn user_and_password(text: &str, name_start: usize, name: &str, first: Value) -> Option<Value> {
    let for_both = ["credential", "credentials", "creds"]
        .iter()
        .chain(&super::languages::CREDENTIAL_WORDS)
        .any(|word| super::ends_with_folded(name, word));
    if first.quoted || !(for_both || names_user_first(text, name_start)) {
        return None;
    }
    let rest = &text[first.end..];
    let separator = [" / ", " | ", " : "].iter().find(|separator| rest.starts_with(**separator))?;
    let second = read(text, first.end + separator.len()).filter(|second| !second.quoted)?;
    Some(Value { start: first.start, end: second.end, quoted: false })
}

/// Whether the password's name at `name_start` is the second of a pair written with `/`:
/// `username/password`, `User/Pass`, `login/pw`.
fn names_user_first(text: &str, name_start: usize) -> bool {
    let before = &text[..name_start];
    ["user/", "username/", "user name/", "login/", "userid/"]
        .iter()
        .any(|pair| super::ends_with_folded(before, pair))
}

/// The rest of the line as one value, for `key=value` lines of properties, INI and `.env` files
/// (`db.password=my secret pass 1`, `password = Kaffee und Kuchen 42`): the key starts its line,
/// `=` separates it, the value is bare and starts with a word of letters, and no other `key=`
/// follows on the line. It ends before a ` #` or ` ;` comment. `None` otherwise.
pub(super) fn rest_of_line(text: &str, name_start: usize, name_end: usize, first: Value) -> Option<Value> {
    // A key starts its line after at most some indentation.
    let line_start = super::line_start_within(text, name_start, 64)?;
    let starts_line = text[line_start..name_start].bytes().all(|b| b == b' ' || b == b'\t');
    let separator = &text[name_end..first.start];
    // A first word that could be the whole password (`pässwörd1 ok`) is; one of letters only
    // (`my secret pass 1`) starts a password of words.
    let word = first.text(text).chars().all(char::is_alphabetic);
    if first.quoted || !word || !starts_line || !separator.contains('=') || separator.contains([':', '>']) {
        return None;
    }
    let rest = &text[first.start..];
    let line = rest.find(['\n', '\r']).map_or(rest, |end| &rest[..end]);
    let line = line.split(" #").next().unwrap_or(line).split(" ;").next().unwrap_or(line).trim_end();
    let more = &line[first.end - first.start..];
    if more.is_empty() || more.contains('=') || !more.starts_with(' ') {
        return None;
    }
    Some(Value { start: first.start, end: first.start + line.len(), quoted: false })
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
            b'&' if reference_len(&bytes[end..]) > 0 => end += reference_len(&bytes[end..]),
            // `&` belongs to a password (`Xy7pq&`, `Tr0ub4dor&3`) unless it joins the next query
            // parameter (`&user=…`).
            b'&' if !starts_parameter(&bytes[end + 1..stop]) => end += 1,
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

/// Whether `bytes` start with a query parameter's name and `=` (`user=`, `redirect_uri=`).
fn starts_parameter(bytes: &[u8]) -> bool {
    let name = super::run(bytes, 0, 64, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'[' | b']')
    });
    name > 0 && bytes.get(name) == Some(&b'=')
}

/// The length of the HTML character reference `&name;`, `&#NN;` or `&#xNN;` that `bytes` starts
/// with (one left undecoded is part of the value it stands in), or 0.
fn reference_len(bytes: &[u8]) -> usize {
    let (digits, from): (fn(&u8) -> bool, usize) = match bytes.get(1..3) {
        Some([b'#', b'x' | b'X']) => (u8::is_ascii_hexdigit, 3),
        Some([b'#', _]) => (u8::is_ascii_digit, 2),
        _ if bytes.get(1).is_some_and(u8::is_ascii_alphabetic) => (u8::is_ascii_alphanumeric, 1),
        _ => return 0,
    };
    let end = super::run(bytes, from, 32, |b| digits(&b));
    if end > from && bytes.get(end) == Some(&b';') { end + 1 } else { 0 }
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

/// Whether a bare value is an ordinary word, or a number without letters, followed by more prose
/// on the same line, as in "password: at least 12 characters" (the value read would be `at`) or
/// "password: 8-64 characters". A value mixing letters and digits is taken as a secret.
pub(super) fn is_prose(text: &str, value: Value) -> bool {
    let word = value.text(text);
    let letters = word.bytes().all(|b| b.is_ascii_alphabetic() || b == b'\'');
    let no_letters = !word.bytes().any(|b| b.is_ascii_alphabetic());
    if !letters && !no_letters {
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

/// Whether `value`, a whole JSON string under the key `name`, passes the checks of a quoted value.
pub(super) fn accept_whole(name: &str, value: &str, weak_key: bool) -> bool {
    accept(value, name, Value { start: 0, end: value.len(), quoted: true }, true, weak_key)
}

/// Whether `value` passes the checks for its separator and key.
pub(super) fn accept(text: &str, name: &str, value: Value, strong: bool, weak_key: bool) -> bool {
    let written = value.text(text);
    if placeholder::is_placeholder(written)
        || placeholder::is_path(written)
        || placeholder::is_sentence(written)
        || (!value.quoted && placeholder::is_call_or_index(written))
        || written.starts_with("-----BEGIN")
    {
        return false;
    }
    if name.eq_ignore_ascii_case("pwd") || name.eq_ignore_ascii_case("oldpwd") {
        // The shell's working directory, not a password, whatever it holds.
        return !written.starts_with('/') && !written.starts_with('~');
    }
    let lower = name.to_ascii_lowercase();
    let aws_secret = lower.contains("secret_access") || lower.contains("secretaccess");
    if aws_secret && written.len() == 40 && written.bytes().all(|b| b.is_ascii_hexdigit()) {
        // A git SHA, never an AWS secret access key (those are base64, mixed case).
        return false;
    }
    if weak_key && written.len() < 12 {
        return false;
    }
    let short_number = written.len() < 4 && written.bytes().all(|b| b.is_ascii_digit());
    strong || !(is_prose(text, value) || short_number)
}
