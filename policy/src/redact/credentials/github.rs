//! GitHub tokens.
//!
//! Classic tokens (`ghp_` personal, `gho_` OAuth, `ghu_` user-to-server, `ghs_` server-to-server,
//! `ghr_` refresh) are the prefix and 36 base62 characters, the last 6 of which are the CRC32
//! (IEEE) of the first 30, base62-encoded with the alphabet `0-9A-Za-z` and left-padded with `0`
//! (GitHub, "Behind GitHub's new authentication token formats", 2021; checked against tokens
//! GitHub issued). A checksum mismatch is a look-alike. Longer bodies are valid as they are:
//! GitHub reserves lengths up to 255, refresh tokens are longer, and installation tokens are
//! moving to `ghs_<app id>_<JWT>` (2026).
//!
//! Fine-grained tokens are `github_pat_` + 22 base62 + `_` + 59 base62 (no published checksum):
//! that structure is valid, any other `github_pat_` body of 20 or more characters a look-alike.

use super::{run, vendors};

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Handles a `gh?_` or `github_pat_` prefix at `start..end`; returns where scanning resumes.
pub(super) fn at_prefix(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    if !super::starts_word(bytes, start) {
        return end;
    }
    let body_end = run(bytes, end, 255, |b| b.is_ascii_alphanumeric() || b == b'_');
    let body = &text[end..body_end];
    if &text[start..end] == "github_pat_" {
        return fine_grained(body, start, body_end, out);
    }
    if let Some(jwt_end) = installation_jwt(bytes, end, body_end) {
        super::secret(out, start, jwt_end);
        return jwt_end;
    }
    match body.len() {
        0..36 => return body_end,
        36 if body.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            if checksum_matches(body) {
                super::secret(out, start, body_end);
            } else {
                super::look_alike(out, start, body_end);
            }
        }
        _ if vendors::is_placeholder_body(body) => super::look_alike(out, start, body_end),
        _ => super::secret(out, start, body_end),
    }
    body_end
}

fn fine_grained(body: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let shaped = body.len() == 82
        && body.as_bytes()[22] == b'_'
        && body.bytes().enumerate().all(|(index, b)| index == 22 || b.is_ascii_alphanumeric());
    if shaped && !vendors::is_placeholder_body(body) {
        super::secret(out, start, end);
    } else if body.len() >= 20 {
        super::look_alike(out, start, end);
    }
    end
}

/// The end of a `ghs_<app id>_eyJ…` installation token whose digits start at `from`.
fn installation_jwt(bytes: &[u8], from: usize, body_end: usize) -> Option<usize> {
    let digits = run(bytes, from, 20, |b| b.is_ascii_digit());
    if digits == from || !bytes[digits..body_end].starts_with(b"_eyJ") || &bytes[from - 4..from] != b"ghs_" {
        return None;
    }
    let end = run(bytes, digits + 1, 4096, |b| super::is_base64url(b) || b == b'.');
    let end = end - bytes[..end].iter().rev().take_while(|b| **b == b'.').count();
    (end - digits > 40).then_some(end)
}

/// Whether the last 6 characters of a 36-character body are the base62 CRC32 of the first 30.
pub(super) fn checksum_matches(body: &str) -> bool {
    let (random, checksum) = body.split_at(30);
    checksum.as_bytes() == encode(crc32fast::hash(random.as_bytes()))
}

/// `value` in base62 (`0-9A-Za-z`), left-padded with `0` to 6 characters.
pub(super) fn encode(mut value: u32) -> [u8; 6] {
    let mut digits = [b'0'; 6];
    for slot in digits.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    digits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base62_checksum_known_answers() {
        // Computed independently (Python zlib.crc32 and a base62 encoder).
        assert_eq!(&encode(0), b"000000");
        assert_eq!(&encode(u32::MAX), b"4gfFC3");
        assert!(checksum_matches("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ0mLq17"));
        assert!(!checksum_matches("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ0mLq18"));
        assert!(!checksum_matches("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ0MlQ17"), "case matters");
    }
}
