//! Tokens of messaging platforms whose prefix is two or three letters, too short to say "token"
//! on its own: the rest of the token's published shape has to, checked byte by byte.
//!
//! - Twilio: an API key SID is `SK` + 32 lower-case hex, and is reported like an AWS access key
//!   id (with its secret when written `SK…:secret`, as basic auth does). An account SID (`AC` +
//!   32 hex) only names the account: every API URL and response shows it, so it stays; the auth
//!   token written after it (`AC…:` + 32 hex) is reported alone.
//! - Discord bot tokens: the bot's user id in base64 (17 to 20 digits, so 23 to 27 characters
//!   that must decode to those digits), `.`, 6 characters (a timestamp), `.`, and 27 to 38 of
//!   base64url (an HMAC). The id's two first characters start its trigger: the base64 of a first
//!   digit and the `3` that starts every digit's byte (`MT` for `1`, `Mj` for `2`… `OT` for `9`).
//! - Discord's older user tokens of accounts with two-factor sign-in: `mfa.` and the HMAC alone,
//!   64 to 128 characters of base64url (84 in practice).
//! - Meta's Graph API (Facebook, Instagram, WhatsApp Business): access tokens are `EAA` + letters
//!   and digits, 100 and more in practice; 40 of both cases and digits are required, not followed
//!   by base64's `+`, `/` or `=` (which would make them a slice of a base64 blob). Square's
//!   access tokens start the same way (`EAAA` + 60 of base64url, `-` and `_` among them) and
//!   are read here for that, with `platforms`' shape.
//!
//! A token whose secret part is filler (`xxxx`, `abcdef…`, see `vendors::is_placeholder_body`) is
//! a look-alike.

use super::{run, starts_word, vendors};

/// The triggers: each token's whole shape, not only its prefix. Two letters alone (`MT`, `ND`,
/// `AC`) start words and base64 runs everywhere, and handing every one to a recognizer cost a
/// typical 8 KB page 8 µs (13 %); a regex that also reads the rest of the shape turns them down
/// inside its own scan, for about half of that. With Mailgun's `key-…` (see
/// `vendors::MAILGUN_TRIGGER`) they make a set of their own, read independently of the others.
pub(super) const TRIGGERS: &str = concat!(
    r"SK[0-9a-f]{32}|AC[0-9a-f]{32}:[0-9a-f]{32}|EAA[0-9A-Za-z]{40}|EAAA[0-9A-Za-z_-]{60}|mfa\.[A-Za-z0-9_-]{64}",
    r"|(?:MT|Mj|Mz|ND|NT|Nj|Nz|OD|OT)[A-Za-z0-9_-]{21,26}\.[A-Za-z0-9_-]{6}\.",
);

/// Length of a Twilio SID's hex part, of an auth token and of an API key's secret.
const TWILIO_HEX: usize = 32;

/// The fewest letters and digits after `EAA` taken as a Graph API token.
const MIN_META_BODY: usize = 40;

/// The longest HMAC after `mfa.` read as one (they are 84 characters).
const MAX_MFA_BODY: usize = 128;

/// Handles a match of `TRIGGERS` at `start`; returns where scanning resumes.
pub(super) fn at_shape(text: &str, start: usize, out: &mut Vec<super::Finding>) -> usize {
    let end =
        start + if text[start..].starts_with("EAA") || text[start..].starts_with("mfa") { 3 } else { 2 };
    let bytes = text.as_bytes();
    if !starts_word(bytes, start) {
        return start + 1;
    }
    let found = match &text[start..end] {
        "SK" => twilio_api_key(bytes, end),
        "AC" => twilio_auth_token(bytes, end),
        "EAA" => meta(bytes, start, end).or_else(|| square(bytes, start)),
        "mfa" => discord_mfa(bytes, start),
        _ => discord(bytes, start),
    };
    let Some((body, token_end, report_from)) = found else {
        return start + 1;
    };
    vendors::report(text, report_from, body, token_end, out);
    token_end
}

/// `SK` + 32 hex, and `:` + its 32-character secret when one follows: (body, end, start).
fn twilio_api_key(bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
    let sid_end = lower_hex(bytes, from)?;
    let secret_end = run(bytes, sid_end + 1, TWILIO_HEX + 1, |b| b.is_ascii_alphanumeric());
    let end = if bytes.get(sid_end) == Some(&b':') && secret_end - sid_end - 1 == TWILIO_HEX {
        secret_end
    } else {
        sid_end
    };
    Some((from, end, from - 2))
}

/// `AC` + 32 hex + `:` + a 32-hex auth token: the token alone.
fn twilio_auth_token(bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
    let sid_end = lower_hex(bytes, from)?;
    let token = sid_end + 1;
    let token_end = run(bytes, token, TWILIO_HEX + 1, |b| b.is_ascii_hexdigit());
    let ends = !bytes.get(token_end).is_some_and(|&b| super::is_base64url(b));
    (bytes.get(sid_end) == Some(&b':') && token_end - token == TWILIO_HEX && ends)
        .then_some((token, token_end, token))
}

/// The end of exactly 32 lower-case hex digits from `from`, not followed by a letter or digit.
fn lower_hex(bytes: &[u8], from: usize) -> Option<usize> {
    let end = run(bytes, from, TWILIO_HEX + 1, |b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let ends = !bytes.get(end).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_');
    (end - from == TWILIO_HEX && ends).then_some(end)
}

/// `EAA` + at least 40 letters and digits of both cases with digits among them.
fn meta(bytes: &[u8], start: usize, from: usize) -> Option<(usize, usize, usize)> {
    let end = run(bytes, from, 4096, |b| b.is_ascii_alphanumeric());
    let body = &bytes[from..end];
    let random = body.iter().any(u8::is_ascii_uppercase)
        && body.iter().any(u8::is_ascii_lowercase)
        && body.iter().any(u8::is_ascii_digit);
    let in_base64 = |b: Option<&u8>| b.is_some_and(|b| matches!(b, b'+' | b'/' | b'=' | b'_' | b'-'));
    let before = start.checked_sub(1).and_then(|at| bytes.get(at));
    (body.len() >= MIN_META_BODY && random && !in_base64(bytes.get(end)) && !in_base64(before))
        .then_some((from, end, start))
}

/// A Square access token (`platforms`), which starts like Meta's: (its body, end, `start`).
fn square(bytes: &[u8], start: usize) -> Option<(usize, usize, usize)> {
    let end = super::platforms::square(bytes, start)?;
    Some((start + "EAAA".len(), end, start))
}

/// A Discord `mfa.` token starting at `start`: (the HMAC's start, the end, `start`).
fn discord_mfa(bytes: &[u8], start: usize) -> Option<(usize, usize, usize)> {
    let from = start + "mfa.".len();
    let end = run(bytes, from, MAX_MFA_BODY + 1, super::is_base64url);
    (end - from <= MAX_MFA_BODY).then_some((from, end, start))
}

/// A Discord bot token starting at `start`: (the HMAC's start, the end, `start`).
fn discord(bytes: &[u8], start: usize) -> Option<(usize, usize, usize)> {
    let id_end = run(bytes, start, 28, |b| b.is_ascii_alphanumeric());
    if !(23..=27).contains(&(id_end - start)) || bytes.get(id_end) != Some(&b'.') {
        return None;
    }
    let time_end = run(bytes, id_end + 1, 7, super::is_base64url);
    if time_end - id_end - 1 != 6 || bytes.get(time_end) != Some(&b'.') {
        return None;
    }
    let hmac = time_end + 1;
    let end = run(bytes, hmac, 39, super::is_base64url);
    if !(27..=38).contains(&(end - hmac)) || !decodes_to_digits(&bytes[start..id_end]) {
        return None;
    }
    Some((hmac, end, start))
}

/// Whether unpadded base64 `encoded` decodes to 17 to 20 ASCII digits, the first not `0` (a
/// Discord snowflake id).
fn decodes_to_digits(encoded: &[u8]) -> bool {
    let mut decoded = Vec::with_capacity(20);
    for group in encoded.chunks(4) {
        let Some(values) = group.iter().map(|&b| sextet(b)).collect::<Option<Vec<u32>>>() else {
            return false;
        };
        if values.len() < 2 {
            return false;
        }
        let bits = values.iter().fold(0u32, |bits, &value| bits << 6 | value) << (6 * (4 - values.len()));
        let bytes = bits.to_be_bytes();
        decoded.extend_from_slice(&bytes[1..values.len()]);
    }
    (17..=20).contains(&decoded.len())
        && decoded.iter().all(u8::is_ascii_digit)
        && decoded.first() != Some(&b'0')
}

/// The value of a base64 character of the standard alphabet's letters and digits.
fn sextet(byte: u8) -> Option<u32> {
    let value = match byte {
        b'A'..=b'Z' => byte - b'A',
        b'a'..=b'z' => byte - b'a' + 26,
        b'0'..=b'9' => byte - b'0' + 52,
        _ => return None,
    };
    Some(u32::from(value))
}
