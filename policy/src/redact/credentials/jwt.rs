//! JSON Web Tokens (RFC 7519, JWS compact form): `header.payload.signature`, three base64url
//! segments, where the header decodes to a JSON object with `alg` and the payload to a JSON
//! object. The signature may be empty only for `"alg": "none"`. The whole token is reported.
//!
//! An `eyJ…` that fails to decode, or that has more than three segments (a JWE has five), is not
//! a JWT and is not reported: a secret assigned to a key is still found by the assignment
//! recognizer.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::{is_base64url, run};

const MAX_SEGMENT: usize = 16 * 1024;

/// Handles `eyJ` at `start`; returns where scanning resumes.
pub(super) fn at_header(text: &str, start: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    if start > 0 && is_base64url(bytes[start - 1]) && !super::after_escape(bytes, start) {
        return start + 3;
    }
    let segment = |from: usize| {
        let end = run(bytes, from, MAX_SEGMENT, is_base64url);
        (end, run(bytes, end, 2, |b| b == b'='))
    };
    let (header_end, header_padded) = segment(start);
    if bytes.get(header_padded) != Some(&b'.') {
        return header_padded;
    }
    let (payload_end, payload_padded) = segment(header_padded + 1);
    if payload_end == header_padded + 1 || bytes.get(payload_padded) != Some(&b'.') {
        return payload_padded;
    }
    let (signature_end, signature_padded) = segment(payload_padded + 1);
    if bytes.get(signature_padded) == Some(&b'.')
        && bytes.get(signature_padded + 1).is_some_and(|&b| is_base64url(b))
    {
        // Four or more segments: a JWE or something else.
        return signature_padded + 1;
    }
    let Some(alg) = header_alg(&text[start..header_end]) else {
        return header_padded;
    };
    if !is_object(&text[header_padded + 1..payload_end]) {
        return payload_padded;
    }
    let unsigned = signature_end == payload_padded + 1;
    if unsigned && !alg.eq_ignore_ascii_case("none") {
        return payload_padded;
    }
    let end = if unsigned { payload_padded + 1 } else { signature_padded };
    super::secret(out, start, end);
    end
}

/// The header's `alg`, when the segment decodes to a JSON object that has one.
fn header_alg(segment: &str) -> Option<String> {
    let decoded = URL_SAFE_NO_PAD.decode(segment).ok()?;
    let serde_json::Value::Object(header) = serde_json::from_slice(&decoded).ok()? else {
        return None;
    };
    header.get("alg")?.as_str().map(str::to_owned)
}

fn is_object(segment: &str) -> bool {
    URL_SAFE_NO_PAD
        .decode(segment)
        .ok()
        .and_then(|decoded| serde_json::from_slice::<serde_json::Value>(&decoded).ok())
        .is_some_and(|value| value.is_object())
}
