//! The password of a Go MySQL driver DSN, `user:password@tcp(host:3306)/db` (also `@unix(…)`):
//! no scheme marks it as a URL, so the protocol after the `@` does. The password runs from the
//! first `:` after the user's name to that `@` (it may hold `:` and `@` itself).
//!
//! Also Oracle's JDBC URLs with a logon, `jdbc:oracle:thin:user/password@host:1521/service` (and
//! `:oci:`): the password runs from the `/` after the user's name to the next `@`.

use super::Finding;
use super::value::Value;

/// The protocols a DSN names after its credentials, and Oracle's JDBC drivers.
pub(super) const TRIGGERS: &str = r"@tcp\(|@tcp6\(|@unix\(|oracle:thin:|oracle:oci:";

/// Longest user and password read back from the `@`, in bytes.
const MAX_CREDENTIALS: usize = 256;

/// Handles a trigger at `start` (the `@`); returns where scanning resumes.
pub(super) fn at_protocol(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let from = super::run_back(text.as_bytes(), start, MAX_CREDENTIALS, |b| {
        !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`' | b'=' | b'(' | b',')
    });
    let Some(colon) = text[from..start].find(':').map(|offset| from + offset) else {
        return end;
    };
    let found = Value { start: colon + 1, end: start, quoted: true };
    if colon > from && found.end > found.start {
        super::password(text, found, out);
    }
    end
}

/// Handles Oracle's `oracle:thin:` or `oracle:oci:` ending at `end`; returns where scanning
/// resumes.
pub(super) fn at_oracle(text: &str, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let user_end =
        super::run(bytes, end, 128, |b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'#'));
    if user_end == end || bytes.get(user_end) != Some(&b'/') {
        return end;
    }
    let password_end = super::run(bytes, user_end + 1, MAX_CREDENTIALS, |b| {
        !matches!(b, b'@' | b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`' | b'<')
    });
    if bytes.get(password_end) != Some(&b'@') || password_end == user_end + 1 {
        return end;
    }
    super::password(text, Value { start: user_end + 1, end: password_end, quoted: true }, out);
    password_end
}
