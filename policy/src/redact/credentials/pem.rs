//! PEM private keys (RFC 7468): `-----BEGIN (RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----`
//! through the matching `-----END … PRIVATE KEY-----`, and `PGP PRIVATE KEY BLOCK`s.
//!
//! The body must be base64 that decodes, read past line breaks, spaces, the escapes `\n`, `\r`,
//! `\t` of keys carried inside JSON strings (with any number of backslashes), and RFC 1421
//! headers (`Proc-Type:`, `DEK-Info:`; PGP's `Version:`, `Comment:`). The whole block is
//! reported. A block whose body does not decode (`...`, `<your key here>`) is a look-alike. A key
//! cut off before its END line is reported up to the end of its base64 body, when at least 64
//! base64 characters are there.
//!
//! Public keys and certificates (`PUBLIC KEY`, `RSA PUBLIC KEY`, `CERTIFICATE`, …) are reported as
//! look-alikes when complete, so no other recognizer reads numbers inside them.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const BEGIN: &str = "-----BEGIN ";
const DASHES: &str = "-----";
const MAX_BLOCK: usize = 32 * 1024;

const LENIENT: GeneralPurpose = GeneralPurpose::new(
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
    match window.find(&end_line) {
        Some(offset) => {
            let block_end = body_start + offset + end_line.len();
            let body = &window[..offset];
            if !private {
                super::look_alike(out, start, block_end);
            } else if decodes(body, label.starts_with("PGP")) {
                super::secret(out, start, block_end);
            } else {
                super::look_alike(out, start, block_end);
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
    let payload: Vec<u8> = chars.into_iter().filter(|b| *b != b'=').collect();
    payload.len() >= 16 && LENIENT.decode(&payload).is_ok()
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
            b' ' | b'\t' | b'\r' | b'\n' => index += 1,
            b'\\' => {
                let after = super::run(bytes, index, stop - index, |b| b == b'\\');
                if !matches!(bytes.get(after), Some(b'n' | b'r' | b't')) {
                    break;
                }
                index = after + 1;
            }
            _ => break,
        }
    }
    last
}
