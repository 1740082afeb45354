//! The Wi-Fi network strings that QR codes carry (`WIFI:T:WPA;S:CorpGuest;P:…;;`, the format
//! phones read to join a network): the `P:` field is the network's password. Fields may come in
//! any order; `\;`, `\:`, `\,` and `\\` escape inside a value.
//!
//! Also a bare `key` written after a network's `SSID` on the same line (`SSID: Office, key: …`):
//! there it is the network's password ([`key_after_ssid`]).

use super::Finding;
use super::key::Key;
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

/// How far back on its line a `key` looks for `SSID`.
const SSID_WINDOW: usize = 120;

/// A bare `key` (any case) at `name_start` with `SSID` earlier on its line: the network's key.
pub(super) fn key_after_ssid(text: &str, name_start: usize, name: &str) -> Option<Key> {
    if !name.eq_ignore_ascii_case("key") {
        return None;
    }
    let from = super::floor_boundary(text, name_start.saturating_sub(SSID_WINDOW));
    let line = text[from..name_start].rsplit(['\n', '\r']).next().unwrap_or_default();
    let names_network = line.as_bytes().windows(4).any(|window| window.eq_ignore_ascii_case(b"ssid"));
    names_network.then_some(Key::Secret { weak: false })
}
