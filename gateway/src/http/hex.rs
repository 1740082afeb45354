//! Lower-case hexadecimal, both ways: the one encoder for ids, tokens and digests.

/// `bytes` as lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        let [high, low] = digits(byte);
        text.push(char::from(high));
        text.push(char::from(low));
    }
    text
}

/// The two lower-case hex digits of `byte`, as ASCII bytes (for ids written without allocating).
pub fn digits(byte: u8) -> [u8; 2] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    [DIGITS[usize::from(byte >> 4)], DIGITS[usize::from(byte & 0x0f)]]
}

/// The bytes of an even-length hex text (either case), or `None`.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    // `from_str_radix` alone would take a sign (`+1`): only hex digits are hex.
    if !text.len().is_multiple_of(2) || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|index| u8::from_str_radix(&text[index..index + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(unhex("000fA5ff"), Some(vec![0x00, 0x0f, 0xa5, 0xff]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex("+1"), None);
    }
}
