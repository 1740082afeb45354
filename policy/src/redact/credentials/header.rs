//! `Authorization:` and `Proxy-Authorization:` header values (HTTP dumps, logs, curl's
//! `-H 'Authorization: Bearer …'`, JSON `"Authorization": "Basic …"`), a lone `Bearer <token>`,
//! and a lone `Basic <credentials>` whose base64 decodes to `user:password`.
//!
//! The value is `scheme credentials` (RFC 9110 §11.4): only the credentials are reported, for any
//! scheme (`Bearer`, `Basic`, `Token`, `Bot`, `Digest`, …). For single-token schemes the
//! credentials end at whitespace or a comma; for parameter schemes (`Digest`, `OAuth`,
//! `AWS4-HMAC-SHA256`) they run to the end of the header value. A value with no scheme is taken
//! as a raw token when it is at least 8 characters long.

use super::value;
use super::{placeholder, run};

const PARAMETER_SCHEMES: [&str; 4] = ["digest", "oauth", "aws4-hmac-sha256", "hoba"];

/// Single-token schemes (IANA's registry and common API practice).
const SCHEMES: [&str; 14] = [
    "basic",
    "bearer",
    "token",
    "bot",
    "negotiate",
    "ntlm",
    "mutual",
    "apikey",
    "api-key",
    "key",
    "sso-key",
    "ssws",
    "jwt",
    "splunk",
];

/// Handles the header name ending at `name_end`; returns where scanning resumes.
pub(super) fn authorization(text: &str, name_end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let mut at = run(bytes, name_end, 4, |b| matches!(b, b'"' | b'\'' | b'\\'));
    at = run(bytes, at, 8, |b| b == b' ' || b == b'\t');
    if !matches!(bytes.get(at), Some(b':' | b'=')) {
        return name_end;
    }
    at = run(bytes, at + 1, 8, |b| b == b' ' || b == b'\t');
    let region_end = match value::read(text, at) {
        Some(found) if found.quoted => {
            at = found.start;
            found.end
        }
        Some(_) => line_end(bytes, at),
        None => return at,
    };
    let scheme_end = run(bytes, at, 32, |b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let credentials = run(bytes, scheme_end, 8, |b| b == b' ');
    let (start, end) = if scheme_end > at && credentials > scheme_end && credentials < region_end {
        let scheme = text[at..scheme_end].to_ascii_lowercase();
        let end = if PARAMETER_SCHEMES.contains(&scheme.as_str()) {
            params_end(bytes, credentials, region_end)
        } else if bytes[credentials] == b'[' {
            // An already-bracketed value (`[credential 1]`) is taken whole.
            let close = run(bytes, credentials, 48, |b| b != b']' && b != b'\n');
            if bytes.get(close) == Some(&b']') {
                close + 1
            } else {
                token_end(bytes, credentials, region_end)
            }
        } else {
            token_end(bytes, credentials, region_end)
        };
        // An unknown scheme in prose ("Authorization: header with each request") is no header.
        let token_like = end - credentials >= 12 && bytes[credentials..end].iter().any(u8::is_ascii_digit);
        if !SCHEMES.contains(&scheme.as_str()) && !PARAMETER_SCHEMES.contains(&scheme.as_str()) && !token_like
        {
            return credentials;
        }
        (credentials, end)
    } else {
        let end = token_end(bytes, at, region_end);
        if end - at < 8 {
            return end.max(at);
        }
        (at, end)
    };
    // Real credentials are long; "Bearer tokens must…" is prose.
    report(text, start, end, 8, out);
    start
}

/// Handles `Bearer` ending at `name_end` outside a header: `Bearer <token>` with a token of at
/// least 16 characters holding a letter and a digit.
pub(super) fn bearer(text: &str, name_end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let start = run(bytes, name_end, 4, |b| b == b' ');
    if start == name_end {
        return name_end;
    }
    let end = run(bytes, start, 8192, |b| b.is_ascii_alphanumeric() || b"._~+/=-".contains(&b));
    let token = &bytes[start..end];
    if token.len() >= 16 && token.iter().any(u8::is_ascii_digit) && token.iter().any(u8::is_ascii_alphabetic)
    {
        report(text, start, end, 16, out);
    }
    start
}

/// Handles `Basic` at `start..end` outside a header (prose, a CSV cell, a form's option): the
/// base64 after it is reported when it decodes to printable `user:password`.
pub(super) fn basic(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    use base64::Engine;
    let bytes = text.as_bytes();
    let from = run(bytes, end, 4, |b| b == b' ');
    if from == end || !super::starts_word(bytes, start) {
        return end;
    }
    let body_end = run(bytes, from, 4096, |b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    let padded = run(bytes, body_end, 2, |b| b == b'=');
    let body = &text[from..body_end];
    if body.len() < 8 || bytes.get(padded).is_some_and(|&b| super::is_base64url(b) || b == b'=') {
        return end;
    }
    let trimmed = if body.len() % 4 == 1 { &body[..body.len() - 1] } else { body };
    let pair = super::pem::LENIENT.decode(trimmed).ok().and_then(|decoded| String::from_utf8(decoded).ok());
    let credentials = pair.is_some_and(|pair| {
        pair.find(':').is_some_and(|colon| colon > 0 && colon + 1 < pair.len())
            && !pair.chars().any(char::is_control)
    });
    if credentials {
        super::secret(out, from, padded);
        return padded;
    }
    end
}

/// Reports `start..end`, without a closing bracket it does not open (`(Authorization: Bearer
/// $TOKEN)`), unless it is shorter than `min` or a placeholder.
pub(super) fn report(text: &str, start: usize, mut end: usize, min: usize, out: &mut Vec<super::Finding>) {
    for (open, close) in [('(', ')'), ('[', ']')] {
        while text[start..end].ends_with(close)
            && text[start..end].matches(open).count() < text[start..end].matches(close).count()
        {
            end -= 1;
        }
    }
    let credentials = &text[start..end];
    if end < start + min.max(1) || placeholder::is_placeholder(credentials) {
        return;
    }
    if credentials.contains("EXAMPLE") {
        super::look_alike(out, start, end);
    } else {
        super::secret(out, start, end);
    }
}

/// The end of a header value on one line: a line break, a quote, a JSON escape or `<`.
fn line_end(bytes: &[u8], from: usize) -> usize {
    let mut index = from;
    let stop = bytes.len().min(from + 8192);
    while index < stop {
        match bytes[index] {
            b'\r' | b'\n' | b'"' | b'\'' | b'`' | b'<' => break,
            b'\\' => {
                let after = run(bytes, index, stop - index, |b| b == b'\\');
                if matches!(bytes.get(after), Some(b'n' | b'r' | b't' | b'"' | b'\'') | None) {
                    break;
                }
                index = after;
            }
            _ => index += 1,
        }
    }
    trim_end(bytes, from, index)
}

/// The end of `name=value` / `name="value"` parameters separated by commas (`Digest …`).
fn params_end(bytes: &[u8], from: usize, limit: usize) -> usize {
    let mut end = from;
    let mut at = from;
    loop {
        let name_end = run(bytes, at, 64, |b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
        if name_end == at || bytes.get(name_end) != Some(&b'=') {
            break;
        }
        let value_start = name_end + 1;
        let value_end = if bytes.get(value_start) == Some(&b'"') {
            match run(bytes, value_start + 1, 1024, |b| b != b'"' && b != b'\n') {
                close if bytes.get(close) == Some(&b'"') => close + 1,
                _ => break,
            }
        } else {
            run(bytes, value_start, 1024, |b| {
                !matches!(b, b' ' | b'\t' | b',' | b'"' | b'\'' | b'\r' | b'\n')
            })
        };
        end = value_end;
        at = run(bytes, value_end, 8, |b| b == b',' || b == b' ');
        if at == value_end {
            break;
        }
    }
    if end == from { token_end(bytes, from, limit) } else { end }
}

/// The end of one token: whitespace, `,` or `;` (or `end`).
fn token_end(bytes: &[u8], from: usize, end: usize) -> usize {
    run(bytes, from, end.saturating_sub(from), |b| !matches!(b, b' ' | b'\t' | b',' | b';'))
}

fn trim_end(bytes: &[u8], from: usize, mut end: usize) -> usize {
    while end > from && matches!(bytes[end - 1], b' ' | b'\t' | b',' | b';') {
        end -= 1;
    }
    end
}
