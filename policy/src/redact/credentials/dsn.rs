//! The password of a Go MySQL driver DSN, `user:password@tcp(host:3306)/db` (also `@unix(…)`):
//! no scheme marks it as a URL, so the protocol after the `@` does. The password runs from the
//! first `:` after the user's name to that `@` (it may hold `:` and `@` itself).

use super::Finding;
use super::value::Value;

/// The protocols a DSN names after its credentials.
pub(super) const TRIGGERS: &str = r"@tcp\(|@tcp6\(|@unix\(";

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
