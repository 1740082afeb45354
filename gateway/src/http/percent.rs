//! Percent-decoding for the checks that must see a path as a lenient server would: every `%XX`
//! escape decoded, an invalid one kept as written, `+` left alone (it is not a space in a path).

/// `text` with its percent-escapes decoded `rounds` times (double encoding needs two), stopping
/// early once a round changes nothing; bytes that are not UTF-8 become U+FFFD.
pub fn percent_decode(text: &str, rounds: usize) -> String {
    let mut current = text.to_owned();
    for _ in 0..rounds {
        let next = decode_once(&current);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

fn decode_once(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|byte| (*byte as char).to_digit(16));
        match (bytes[index], hex(index + 1), hex(index + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                index += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn escapes_are_decoded_round_by_round() {
        assert_eq!(percent_decode("/%2Etoolgate/a+b", 1), "/.toolgate/a+b");
        assert_eq!(percent_decode("%252F%252F", 1), "%2F%2F");
        assert_eq!(percent_decode("%252F%252F", 2), "//");
        assert_eq!(percent_decode("%zz%4", 3), "%zz%4");
        assert_eq!(percent_decode("a&b=%41", 1), "a&b=A");
    }
}
