//! The Wi-Fi network strings that QR codes carry (`WIFI:T:WPA;S:CorpGuest;P:…;;`, the format
//! phones read to join a network): the `P:` field is the network's password. Fields may come in
//! any order; `\;`, `\:`, `\,` and `\\` escape inside a value.

use super::Finding;
use super::value::Value;

/// The string's scheme.
pub(super) const TRIGGERS: &str = "WIFI:";

/// Longest string read, in bytes.
const MAX_STRING: usize = 512;

/// Handles a trigger at `start..end`; returns where scanning resumes.
pub(super) fn at_scheme(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    if start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
        return end;
    }
    let stop = super::floor_boundary(text, bytes.len().min(end + MAX_STRING));
    let mut field = end;
    while field < stop && !matches!(bytes[field], b';' | b'\n' | b'\r' | b'"' | b'\'') {
        let value_start = field + 2;
        let value_end = field_end(bytes, value_start.min(stop), stop);
        if bytes[field..].starts_with(b"P:") && value_end > value_start {
            super::password(text, Value { start: value_start, end: value_end, quoted: true }, out);
        }
        if bytes.get(value_end) != Some(&b';') {
            return value_end;
        }
        field = value_end + 1;
    }
    field
}

/// The end of a field's value from `at`: its unescaped `;` (or a line break, or `stop`).
fn field_end(bytes: &[u8], mut at: usize, stop: usize) -> usize {
    while at < stop {
        match bytes[at] {
            b'\\' => at += 2,
            b';' | b'\n' | b'\r' => return at,
            _ => at += 1,
        }
    }
    stop
}
