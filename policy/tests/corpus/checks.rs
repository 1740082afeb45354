//! Check-digit algorithms and encodings, written from the specifications so the corpus does not
//! share code with the recognizers it measures.
//!
//! - Luhn (ISO/IEC 7812-1) for payment cards;
//! - ISO 7064 MOD 97-10 for IBANs (ISO 13616) and the French NIR key;
//! - ISO 7064 MOD 11,10 for the German Steuer-IdNr;
//! - CRC-32 (IEEE 802.3, reflected, as zlib) and base62 for GitHub's token checksum;
//! - base64 (RFC 4648, standard and URL-safe) for PEM bodies, JWTs and keys.

/// True when `digits` (ASCII digits only) passes Luhn.
pub fn luhn_ok(digits: &str) -> bool {
    luhn_sum(digits.bytes().map(|b| u32::from(b - b'0')), false) % 10 == 0
}

/// The Luhn check digit to append to `payload`.
pub fn luhn_digit(payload: &str) -> char {
    let sum = luhn_sum(payload.bytes().map(|b| u32::from(b - b'0')), true);
    char::from(b'0' + ((10 - sum % 10) % 10) as u8)
}

/// Luhn's sum from the right; `double_first` doubles the rightmost digit (payload without check).
fn luhn_sum(digits: impl DoubleEndedIterator<Item = u32>, double_first: bool) -> u32 {
    digits
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if (i % 2 == 0) == double_first {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum()
}

/// The remainder mod 97 of an alphanumeric string read with letters as 10..35 (ISO 13616).
pub fn mod97(text: &str) -> u32 {
    let mut remainder = 0u32;
    for c in text.chars() {
        let value = c.to_digit(36).unwrap_or(0);
        remainder = if value >= 10 { (remainder * 100 + value) % 97 } else { (remainder * 10 + value) % 97 };
    }
    remainder
}

/// True when the compact `iban` passes mod-97.
pub fn iban_ok(iban: &str) -> bool {
    iban.len() > 4 && mod97(&format!("{}{}", &iban[4..], &iban[..4])) == 1
}

/// The IBAN for `country` and `bban`, with its check digits.
pub fn iban_with_check(country: &str, bban: &str) -> String {
    let check = 98 - mod97(&format!("{bban}{country}00"));
    format!("{country}{check:02}{bban}")
}

/// The ISO 7064 MOD 11,10 check digit for `payload` (ASCII digits).
pub fn mod11_10_digit(payload: &str) -> char {
    let mut product = 10u32;
    for b in payload.bytes() {
        let mut sum = (u32::from(b - b'0') + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    char::from(b'0' + ((11 - product) % 10) as u8)
}

/// The German IdNr rule for the first ten digits: no leading zero, exactly one digit present two
/// or three times, every other at most once, and (since 2016) never three equal in a row.
pub fn de_tax_digits_ok(first10: &str) -> bool {
    let bytes = first10.as_bytes();
    if bytes.len() != 10 || bytes[0] == b'0' {
        return false;
    }
    let mut counts = [0u8; 10];
    for b in bytes {
        counts[usize::from(b - b'0')] += 1;
    }
    let repeated: Vec<u8> = counts.iter().copied().filter(|c| *c > 1).collect();
    let triple_run = bytes.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]);
    repeated.len() == 1 && (repeated[0] == 2 || repeated[0] == 3) && !triple_run
}

/// True when `id` (11 digits) is a valid German IdNr.
pub fn de_tax_ok(id: &str) -> bool {
    id.len() == 11
        && id.bytes().all(|b| b.is_ascii_digit())
        && de_tax_digits_ok(&id[..10])
        && mod11_10_digit(&id[..10]) == char::from(id.as_bytes()[10])
}

/// The NIR key for the first 13 characters (Corsica `2A`/`2B` read as 19/18).
pub fn nir_key(first13: &str) -> u32 {
    let numeric = first13.replacen("2A", "19", 1).replacen("2B", "18", 1);
    let value: u64 = numeric.parse().unwrap_or(0);
    97 - (value % 97) as u32
}

/// CRC-32 as zlib computes it.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// `value` in base62 (0-9A-Za-z), left-padded with `0` to `width`.
pub fn base62(mut value: u32, width: usize) -> String {
    let mut out = Vec::new();
    while value > 0 {
        out.push(super::rng::BASE62[(value % 62) as usize]);
        value /= 62;
    }
    while out.len() < width {
        out.push(b'0');
    }
    out.reverse();
    String::from_utf8(out).expect("base62 is ASCII")
}

/// The GitHub token checksum of the random part: CRC-32 in six base62 characters.
pub fn github_checksum(random: &str) -> String {
    base62(crc32(random.as_bytes()), 6)
}

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// URL-safe base64 without padding (JWT segments).
pub fn base64url(data: &[u8]) -> String {
    base64(data).trim_end_matches('=').replace('+', "-").replace('/', "_")
}
