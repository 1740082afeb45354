//! `user:password@host` written without a scheme: `ssh admin:…@10.0.0.5`, `root:…@db01.corp:5432`.
//! A URL's userinfo (`scheme://user:password@host`) is `url.rs`'s and a Go DSN's (`@tcp(`) is
//! `dsn.rs`'s. With no syntax to say it, the password must look like one on its own
//! (`shape::looks_secret`: `mailto:jane@corp.com` has none), the user must be a name of letters,
//! digits, `.`, `_` and `-`, and a host must follow: an IPv4 address, a bracketed IPv6 address,
//! `localhost`, a dotted name, or a name of one label with a port (`db01:5432`).

use super::value::Value;
use super::{Finding, run, shape};

/// The trigger: every `@`, found with a byte search in a set of its own.
pub(super) const TRIGGERS: &str = "@";

/// Longest user and password read back from the `@`, in bytes.
const MAX_USERINFO: usize = 256;

/// Longest host name read after the `@`.
const MAX_HOST: usize = 253;

/// Handles an `@` at `at`; returns where scanning resumes.
pub(super) fn at_sign(text: &str, at: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    if !host_follows(bytes, at + 1) {
        return at + 1;
    }
    // Back to what cannot be in a user name or a password written bare (an address's local part
    // is usually a few bytes); another `@` ends it too, so one host's credentials never run into
    // another's.
    let stops = |b: u8| {
        b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'`' | b'(' | b'<' | b'>' | b',' | b'=' | b'@')
    };
    let from = super::run_back(bytes, at, MAX_USERINFO, |b| !stops(b));
    let userinfo = &text[from..at];
    let Some(colon) = userinfo.find(':') else {
        return at + 1;
    };
    let (user, password) = (&userinfo[..colon], &userinfo[colon + 1..]);
    let user_ok = !user.is_empty()
        && user.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    // `scheme://user:password@host` is a URL's; its `//` ends up in the password read here.
    if user_ok && !password.contains("//") && shape::looks_secret(password) {
        super::password(text, Value { start: from + colon + 1, end: at, quoted: false }, out);
    }
    at + 1
}

/// Whether a host starts at `from`: an IPv4 address, `[` (IPv6), `localhost`, two or more labels
/// of letters, digits and `-` joined by dots, or one label with a port, then no more of a word.
fn host_follows(bytes: &[u8], from: usize) -> bool {
    if bytes.get(from) == Some(&b'[') {
        return true;
    }
    let label = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    let end = run(bytes, from, MAX_HOST, |b| label(b) || b == b'.');
    let host = &bytes[from..end];
    let host = host.strip_suffix(b".").unwrap_or(host);
    let dotted = host.split(|&b| b == b'.').filter(|part| !part.is_empty()).count() >= 2
        && !host.starts_with(b".")
        && !host.windows(2).any(|pair| pair == b"..");
    let after = from + host.len();
    let ends = !bytes.get(after).is_some_and(|&b| b == b'_' || b == b'@');
    // A name of one label (`db01`) counts with a port after it: `root:…@db01:5432`.
    let with_port = host.first().is_some_and(u8::is_ascii_alphabetic)
        && bytes.get(after) == Some(&b':')
        && bytes.get(after + 1).is_some_and(u8::is_ascii_digit);
    (dotted || with_port || host.eq_ignore_ascii_case(b"localhost")) && ends
}
