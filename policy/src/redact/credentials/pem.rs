//! PEM private keys (RFC 7468): `-----BEGIN (RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----`
//! through the matching `-----END … PRIVATE KEY-----`, and `PGP PRIVATE KEY BLOCK`s.
//!
//! The body must be base64 that decodes, read past line breaks, spaces, the escapes `\n`, `\r`,
//! `\t` of keys carried inside JSON strings (with any number of backslashes), and RFC 1421
//! headers (`Proc-Type:`, `DEK-Info:`; PGP's `Version:`, `Comment:`). The whole block is
//! reported. A short block whose body does not decode (`...`, `<your key here>`, `REDACTED`) is a
//! look-alike; one holding 64 or more base64 characters around something odd is still reported. A
//! key cut off before its END line is reported up to the end of its base64 body, when at least 64
//! base64 characters are there.
//!
//! A whole block in base64 (`LS0tLS1CRUdJTi…`, as Kubernetes secrets and kubeconfigs hold keys)
//! is read the same way, once decoded.
//!
//! Public keys and certificates (`PUBLIC KEY`, `RSA PUBLIC KEY`, `CERTIFICATE`, …) are reported as
//! look-alikes when complete and their body decodes, so no other recognizer reads numbers inside
//! them; a look-alike never spans text that is not a block (a BEGIN whose END belongs to a later
//! block), since it would shield the secrets in there.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const BEGIN: &str = "-----BEGIN ";
const DASHES: &str = "-----";
const MAX_BLOCK: usize = 32 * 1024;

pub(super) const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Handles `-----BEGIN ` at `start`; returns where scanning resumes.
pub(super) fn at_begin(text: &str, start: usize, out: &mut Vec<super::Finding>) -> usize {
    let label_start = start + BEGIN.len();
    let bytes = text.as_bytes();
    let label_end =
        super::run(bytes, label_start, 48, |b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ');
    if !text[label_end..].starts_with(DASHES) || label_end == label_start {
        return label_start;
    }
    let label = &text[label_start..label_end];
    let body_start = label_end + DASHES.len();
    let window = &text[body_start..super::floor_boundary(text, body_start + MAX_BLOCK)];
    let end_line = format!("-----END {label}-----");
    let private = label.ends_with("PRIVATE KEY") || label == "PGP PRIVATE KEY BLOCK";
    // An END further on than another BEGIN belongs to a later block: this one was cut off.
    let found = window.find(&end_line).filter(|&offset| !window[..offset].contains(BEGIN));
    match found {
        Some(offset) => {
            let block_end = body_start + offset + end_line.len();
            let body = &window[..offset];
            let base64_chars = body_chars(body).count();
            if private && decodes(body, label.starts_with("PGP")) {
                super::secret(out, start, block_end);
            } else if private && base64_chars >= 64 && !is_placeholder_body(body) {
                // Mostly key material with something odd inside (`...` between two halves):
                // still a private key.
                super::secret(out, start, block_end);
            } else if (private && body.len() <= 512) || (!private && decodes(body, false)) {
                // A placeholder (`...`, `<your key here>`) or a public key or certificate.
                super::look_alike(out, start, block_end);
            } else {
                return body_start;
            }
            block_end
        }
        None if private => {
            let body_end = truncated_body_end(bytes, body_start);
            let body = &text[body_start..body_end];
            if body_chars(body).filter(|b| *b != b'=').count() >= 64 {
                super::secret(out, start, body_end);
            }
            body_end.max(body_start)
        }
        None => body_start,
    }
}

/// `-----BEGIN ` in base64, as Kubernetes secrets (`tls.key: LS0tLS1CRUdJTi…`), kubeconfigs
/// (`client-key-data:`), Helm values and `base64 -w0` output carry keys.
pub(super) const BASE64_BEGIN: &str = "LS0tLS1CRUdJTi";

/// Handles [`BASE64_BEGIN`] at `start`: a base64 run (wrapped lines included) that decodes to a
/// PEM block is reported whole when the block is a private key, and as a look-alike when it is a
/// certificate or public key. Returns where scanning resumes.
pub(super) fn at_base64_begin(text: &str, start: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let is_base64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    if start > 0 && is_base64(bytes[start - 1]) {
        return start + BASE64_BEGIN.len();
    }
    // The run, across the line breaks of wrapped output (`base64` wraps at 76, PEM at 64).
    let mut end = super::run(bytes, start, 4 * MAX_BLOCK, is_base64);
    let mut line = end - start;
    while matches!(line, 64 | 76) && end - start < 4 * MAX_BLOCK {
        let next = super::skip_blank(bytes, end, bytes.len().min(end + 8));
        let line_end = super::run(bytes, next, 4 * MAX_BLOCK, is_base64);
        if next == end || line_end == next {
            break;
        }
        (line, end) = (line_end - next, line_end);
    }
    let payload: Vec<u8> = bytes[start..end].iter().copied().filter(|&b| is_base64(b) && b != b'=').collect();
    let usable = payload.len() - payload.len() % 4;
    let Ok(decoded) = LENIENT.decode(&payload[..usable]) else {
        return start + BASE64_BEGIN.len();
    };
    let decoded = String::from_utf8_lossy(&decoded);
    let label = decoded
        .strip_prefix(BEGIN)
        .and_then(|rest| rest.split_once(DASHES))
        .map(|(label, _)| label)
        .filter(|label| label.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' '));
    match label {
        Some(label) if label.ends_with("PRIVATE KEY") || label == "PGP PRIVATE KEY BLOCK" => {
            super::secret(out, start, end);
        }
        Some(_) => super::look_alike(out, start, end),
        None => return start + BASE64_BEGIN.len(),
    }
    end
}

/// A body that is a stand-in: masked or repeated characters, or `EXAMPLE`.
fn is_placeholder_body(body: &str) -> bool {
    let chars: Vec<u8> = body_chars(body).collect();
    let text = String::from_utf8_lossy(&chars);
    super::placeholder::is_masked(&text) || text.contains("EXAMPLE")
}

/// Whether the body decodes as base64 (PGP armor: has at least 64 base64 characters).
fn decodes(body: &str, pgp: bool) -> bool {
    let Some(chars) = lines(body).filter(|line| !line.contains(':')).try_fold(Vec::new(), |mut all, line| {
        for byte in line.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=') {
                all.push(byte);
            } else if !matches!(byte, b' ' | b'\t') {
                return None;
            }
        }
        Some(all)
    }) else {
        return false;
    };
    if pgp {
        return chars.len() >= 64;
    }
    let mut payload: Vec<u8> = chars.into_iter().filter(|b| *b != b'=').collect();
    if payload.len() % 4 == 1 {
        // A dangling character (a body cut one short): judge the rest.
        payload.pop();
    }
    payload.len() >= 16 && !is_placeholder_body(body) && LENIENT.decode(&payload).is_ok()
}

/// The body's lines, split at real line breaks and at `\n` / `\r` escapes (any backslashes).
fn lines(body: &str) -> impl Iterator<Item = &str> {
    body.split(['\n', '\r']).flat_map(|line| {
        let mut parts = Vec::new();
        let mut rest = line;
        while let Some(index) = rest.find('\\') {
            parts.push(&rest[..index]);
            let after = rest[index..].trim_start_matches('\\');
            rest = after.strip_prefix(['n', 'r', 't']).unwrap_or(after);
        }
        parts.push(rest);
        parts
    })
}

/// The base64 characters of a body, skipping whitespace and escapes.
fn body_chars(body: &str) -> impl Iterator<Item = u8> + '_ {
    lines(body).flat_map(str::bytes).filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// The end of a cut-off key's body: base64, whitespace and line-break escapes, trimmed.
fn truncated_body_end(bytes: &[u8], from: usize) -> usize {
    let stop = bytes.len().min(from + MAX_BLOCK);
    let mut index = from;
    let mut last = from;
    while index < stop {
        match bytes[index] {
            b if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=') => {
                index += 1;
                last = index;
            }
            _ => match super::skip_blank(bytes, index, stop) {
                after if after > index => index = after,
                _ => break,
            },
        }
    }
    last
}
