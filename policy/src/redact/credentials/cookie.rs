//! Cookies in `Cookie:` and `Set-Cookie:` headers (HTTP dumps, logs, curl's `-H 'Cookie: …'`,
//! JSON `"Cookie": "…"`, also inside JSON text) and in curl's `-b`/`--cookie` (see `cli`): a
//! session cookie is a bearer credential, and whoever holds it is signed in until it expires.
//!
//! A `Cookie` header holds `name=value` pairs split by `;`; a `Set-Cookie` header holds one pair
//! and then its attributes (`Path`, `Expires`, `HttpOnly`…), which are never secrets (RFC 6265).
//! A value is reported when its name says it signs someone in (`session`, `sid`, `auth`, `token`,
//! `remember`, `login`, `jwt`, any case, from eight characters), or when it is at least
//! [`RANDOM_LENGTH`] long and mixes letters with digits, as session ids and signed values do.
//! Preferences (`theme=dark`, `lang=en-US`, `consent=true`) stay, as do placeholders.

use super::{placeholder, run};

/// Names that mark a cookie as signing someone in (compared without case, as parts of the name).
const SESSION_NAMES: [&str; 7] = ["sess", "sid", "auth", "token", "remember", "login", "jwt"];

/// The shortest value of any other cookie that is taken as a random secret.
const RANDOM_LENGTH: usize = 16;

/// The shortest value of a session-named cookie that is taken.
const SESSION_LENGTH: usize = 8;

/// Handles a `Cookie:` trigger at `start..end` (the name, an optional closing quote and the
/// colon); returns where scanning resumes.
pub(super) fn header(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    if !super::starts_word(bytes, start) {
        return end;
    }
    let set_cookie = start >= 4 && bytes[start - 4..start].eq_ignore_ascii_case(b"set-");
    let mut at = run(bytes, end, 8, |b| b == b' ' || b == b'\t');
    // A JSON value opens with a quote (escaped inside JSON text).
    let quote = run(bytes, at, 4, |b| b == b'\\');
    if bytes.get(quote) == Some(&b'"') {
        at = quote + 1;
    }
    let stop = run(bytes, at, 8192, |b| !matches!(b, b'\r' | b'\n' | b'"' | b'\'' | b'\\' | b'<' | b'`'));
    pairs(text, at, stop, set_cookie, out);
    stop
}

/// Reports the secret values among the `name=value` pairs of `text[at..stop]` (split by `;`),
/// or of its first pair only (`first_only`: a `Set-Cookie` header, whose attributes follow). A
/// header's value, and the value of curl's `-b`/`--cookie` (where a word without `=` names a
/// cookie file instead).
pub(super) fn pairs(text: &str, at: usize, stop: usize, first_only: bool, out: &mut Vec<super::Finding>) {
    let mut pair_start = at;
    for pair in text[at..stop].split(';') {
        let begin = pair_start + (pair.len() - pair.trim_start().len());
        pair_start += pair.len() + 1;
        let Some((name, value)) = text[begin..begin + pair.trim_start().len()].split_once('=') else {
            continue;
        };
        // A cookie's value holds no whitespace (RFC 6265): what follows is the line's prose.
        let value = value.split(char::is_whitespace).next().unwrap_or_default();
        let value_start = begin + name.len() + 1;
        if is_secret(name.trim(), value) {
            super::secret(out, value_start, value_start + value.len());
        }
        if first_only {
            break;
        }
    }
}

/// The header line that a value stored under the JSON key `key` belongs to, when `key` names a
/// cookie header (`cookie`, `Set-Cookie`, any case): structured logs and HAR files keep the
/// header's value under its name.
pub(crate) fn cookie_header(key: &str) -> Option<&'static str> {
    if key.eq_ignore_ascii_case("cookie") {
        Some("Cookie: ")
    } else if key.eq_ignore_ascii_case("set-cookie") {
        Some("Set-Cookie: ")
    } else {
        None
    }
}

/// Whether the cookie `name=value` holds a credential.
fn is_secret(name: &str, value: &str) -> bool {
    if value.is_empty() || placeholder::is_placeholder(value) {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    let session = SESSION_NAMES.iter().any(|word| lower.contains(word));
    let random = value.len() >= RANDOM_LENGTH
        && value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_alphabetic());
    (session && value.len() >= SESSION_LENGTH) || random
}
