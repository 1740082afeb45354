//! Payment card numbers: 13–19 digits, optionally split by spaces or dashes, passing Luhn.

/// The regex alternative for card candidates.
pub(crate) const PATTERN: &str = r"(?-u:\b)[0-9](?:[ \-]?[0-9]){12,18}(?-u:\b)";

/// The byte length of the Luhn-valid card number at the start of `candidate`: the whole
/// candidate, else the longest prefix ending before a separator (the greedy pattern may have
/// taken a following group of digits, as in `4111 1111 1111 1111 123`).
pub(crate) fn recognize(candidate: &str) -> Option<usize> {
    let ends = candidate
        .bytes()
        .enumerate()
        .filter(|(_, b)| !b.is_ascii_digit())
        .map(|(index, _)| index)
        .chain(std::iter::once(candidate.len()));
    let mut ends: Vec<usize> = ends.collect();
    ends.reverse();
    ends.into_iter().find(|&end| {
        let prefix = &candidate[..end];
        let digits = prefix.bytes().filter(u8::is_ascii_digit).count();
        (13..=19).contains(&digits) && luhn(prefix)
    })
}

/// The Luhn check over the digits of `text` (other characters ignored).
fn luhn(text: &str) -> bool {
    let mut sum = 0u32;
    for (position, byte) in text.bytes().rev().filter(u8::is_ascii_digit).enumerate() {
        let mut digit = u32::from(byte - b'0');
        if position % 2 == 1 {
            digit *= 2;
            if digit > 9 {
                digit -= 9;
            }
        }
        sum += digit;
    }
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_cards() {
        assert!(recognize("4111111111111111").is_some());
        assert!(recognize("4111 1111 1111 1111").is_some());
        assert!(recognize("5500-0000-0000-0004").is_some());
        assert!(recognize("378282246310005").is_some(), "amex, 15 digits");
        assert_eq!(recognize("4111 1111 1111 1111 123"), Some(19), "trailing group cut off");
    }

    #[test]
    fn invalid_cards() {
        assert_eq!(recognize("4111111111111112"), None, "luhn");
        assert_eq!(recognize("411111111111"), None, "12 digits");
    }
}
