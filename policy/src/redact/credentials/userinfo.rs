//! `user:password@host` written without a scheme: `ssh admin:…@10.0.0.5`, `root:…@db01.corp:5432`,
//! `git clone admin:…@build.internal:repo.git`. A URL's userinfo (`scheme://user:password@host`)
//! is `url.rs`'s and a Go DSN's (`@tcp(`) is `dsn.rs`'s. The user must be a name of letters,
//! digits, `.`, `_` and `-`, and a host must follow: an IPv4 address, a bracketed IPv6 address,
//! `localhost`, a dotted name, or a name of one label (`build`, `db01:5432`); an image's digest
//! (`node:20-alpine@sha256:…`) is none. With no scheme to say what the word before the `@` is,
//! the more the text around says, the less the password must look like one:
//! - a password that looks like one on its own (`shape::looks_secret`) needs only the host;
//! - one a person chose (`hunter2`: `shape::is_chosen_password`) needs a host of a known shape,
//!   or a user name that starts with a letter before a bare label (`alice:hunter2@build`);
//! - any other password, as in a URL (`pw`, `s3cret`), needs a remote: a port or a path after
//!   the host (`build.internal:repo.git`, `db01:5432`, `host/db`), or a command on the line that
//!   connects to one (`git clone`, `ssh`, `psql`, `mysql`: `cli::connects_before`), and a user
//!   name that starts with a letter.
//!
//! A password of digits only is a port or a time (`localhost:8080@…`, `at 10:30@home`), and the
//! local part of an address (`mailto:jane@corp.example`, `Re:jane@…`) is the address's: the
//! e-mail recognizer reports it whole, which outlasts the shorter span reported here.

use super::value::Value;
use super::{Finding, cli, run, shape};

/// The trigger: every `@`, found with a byte search in a set of its own.
pub(super) const TRIGGERS: &str = "@";

/// Longest user and password read back from the `@`, in bytes.
const MAX_USERINFO: usize = 256;

/// Longest host name read after the `@`.
const MAX_HOST: usize = 253;

/// What follows an `@`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Host {
    /// A name of one label and nothing after it that says it is a host (`@build`).
    Label,
    /// An IP address, `localhost`, a dotted name, or a label with a port.
    Known,
}

/// Handles an `@` at `at`; returns where scanning resumes.
pub(super) fn at_sign(text: &str, at: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let Some((host, remote)) = host_after(bytes, at + 1) else {
        return at + 1;
    };
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
    if !user_ok || password.contains("//") || password.bytes().all(|b| b.is_ascii_digit()) {
        return at + 1;
    }
    // A `:` or `/` inside a weaker password says the words before it are a scheme's or a path's
    // (`jdbc:oracle:thin:scott/…@db01:1521`, read by `dsn.rs`).
    let plain = !password.contains([':', '/']);
    let named = user.starts_with(|c: char| c.is_ascii_alphabetic());
    let taken = shape::looks_secret(password)
        || (plain && (host == Host::Known || named) && shape::is_chosen_password(password))
        || (plain && named && (remote || cli::connects_before(text, from)));
    if taken {
        super::password(text, Value { start: from + colon + 1, end: at, quoted: false }, out);
    }
    at + 1
}

/// The host that starts at `from`, and whether a port or a path follows it (`:5432`, `:repo.git`,
/// `/db`): an IPv4 address, `[` (IPv6), `localhost`, two or more labels of letters, digits and
/// `-` joined by dots, or one label starting with a letter, then no more of a word.
fn host_after(bytes: &[u8], from: usize) -> Option<(Host, bool)> {
    if bytes.get(from) == Some(&b'[') {
        return Some((Host::Known, false));
    }
    let label = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    let end = run(bytes, from, MAX_HOST, |b| label(b) || b == b'.');
    let host = &bytes[from..end];
    let host = host.strip_suffix(b".").unwrap_or(host);
    let dotted = host.split(|&b| b == b'.').filter(|part| !part.is_empty()).count() >= 2
        && !host.starts_with(b".")
        && !host.windows(2).any(|pair| pair == b"..");
    let after = from + host.len();
    if bytes.get(after).is_some_and(|&b| b == b'_' || b == b'@') {
        return None;
    }
    let port = bytes.get(after) == Some(&b':') && bytes.get(after + 1).is_some_and(u8::is_ascii_digit);
    let path = match bytes.get(after) {
        Some(b'/') => true,
        Some(b':') => {
            bytes.get(after + 1).is_some_and(|&b| b.is_ascii_alphanumeric() || b"/~._".contains(&b))
        }
        _ => false,
    };
    let digest = host.len() > 3 && host.starts_with(b"sha") && host[3..].iter().all(u8::is_ascii_digit);
    let label_only = !dotted && host.first().is_some_and(u8::is_ascii_alphabetic) && !digest;
    if dotted || host.eq_ignore_ascii_case(b"localhost") || (label_only && port) {
        Some((Host::Known, port || path))
    } else if label_only {
        Some((Host::Label, path))
    } else {
        None
    }
}
