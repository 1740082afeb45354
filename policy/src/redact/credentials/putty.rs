//! PuTTY private key files (`.ppk`, versions 2 and 3): `PuTTY-User-Key-File-N: <algorithm>`, the
//! public lines, then `Private-Lines: N` and N lines of base64, which hold the private key
//! (encrypted or not: an encrypted one falls to a guessed passphrase offline). Those N lines are
//! reported; the header, the public lines and `Private-MAC:` stay. Line breaks may be real or the
//! `\n` escapes of JSON text. Lines that are not base64 (`...`, `<private key>`) are a look-alike.

const PRIVATE_LINES: &str = "Private-Lines:";

/// Furthest the private lines are looked for after the file's first line, in bytes.
const MAX_FILE: usize = 32 * 1024;

/// Handles `PuTTY-User-Key-File-` ending at `end`; returns where scanning resumes.
pub(super) fn at_header(text: &str, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let window = &text[end..super::floor_boundary(text, end + MAX_FILE)];
    // The private lines of this file, not of a later one.
    let file = window.find("PuTTY-User-Key-File-").map_or(window, |next| &window[..next]);
    let Some(offset) = file.find(PRIVATE_LINES) else {
        return end;
    };
    let bytes = text.as_bytes();
    let count_start = super::run(bytes, end + offset + PRIVATE_LINES.len(), 4, |b| b == b' ');
    let count_end = super::run(bytes, count_start, 3, |b| b.is_ascii_digit());
    let Ok(count) = text[count_start..count_end].parse::<usize>() else {
        return end;
    };
    let Some(body_start) = line_break(bytes, count_end) else {
        return end;
    };
    let mut at = body_start;
    let mut body_end = body_start;
    let mut base64 = true;
    for _ in 0..count {
        let line_end = super::run(bytes, at, 4096, |b| !matches!(b, b'\n' | b'\r' | b'\\'));
        base64 &= line_end > at
            && bytes[at..line_end]
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
        body_end = line_end;
        match line_break(bytes, line_end) {
            Some(next) => at = next,
            None => break,
        }
    }
    if body_end == body_start {
        return end;
    }
    if base64 && !super::placeholder::is_masked(&text[body_start..body_end]) {
        super::secret(out, body_start, body_end);
    } else {
        super::look_alike(out, body_start, body_end);
    }
    body_end
}

/// Where the next line starts, when a line break (`\n`, `\r\n`, or their JSON escapes) is at `at`.
fn line_break(bytes: &[u8], at: usize) -> Option<usize> {
    let mut index = at;
    let mut broke = false;
    loop {
        match bytes.get(index) {
            Some(b'\r') => index += 1,
            Some(b'\n') => return Some(index + 1),
            Some(b'\\') => {
                let after = super::run(bytes, index, 8, |b| b == b'\\');
                match bytes.get(after) {
                    Some(b'n') => return Some(after + 1),
                    Some(b'r') => index = after + 1,
                    _ => return broke.then_some(index),
                }
            }
            _ => return broke.then_some(index),
        }
        broke = true;
    }
}
