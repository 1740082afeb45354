//! Phone numbers: international (`+CC …`), North American (`(555) 123-4567`, `555-123-4567`)
//! and common European local formats (`030 1234567`, `0171-1234567`).
//!
//! Phone shapes overlap with dates and other numbers, so the validator counts digits (7–15, the
//! E.164 maximum) and refuses date-shaped candidates. Card numbers and IBANs are tried first.

/// The regex alternatives for phone candidates.
pub(crate) const PATTERN: &str = concat!(
    r"\+[1-9][0-9]{0,2}(?:[ .\-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){1,6}(?-u:\b)",
    r"|(?:\([0-9]{3}\) ?|(?-u:\b)[0-9]{3}[.\- ])[0-9]{3}[.\- ][0-9]{4}(?-u:\b)",
    r"|(?-u:\b)0[0-9]{1,4}(?:[ /.\-]?[0-9]{2,8}){1,3}(?-u:\b)",
);

/// The byte length of `candidate` when it is a plausible phone number.
pub(crate) fn recognize(candidate: &str) -> Option<usize> {
    let digits = candidate.bytes().filter(u8::is_ascii_digit).count();
    let international = candidate.starts_with('+');
    let enough = if international { (8..=15).contains(&digits) } else { (9..=12).contains(&digits) };
    (enough && !date_shaped(candidate) && !ssn_shaped(candidate)).then_some(candidate.len())
}

/// `AAA-GG-SSSS`: an SSN outside the issued ranges is not a phone number either.
fn ssn_shaped(candidate: &str) -> bool {
    let bytes = candidate.as_bytes();
    bytes.len() == 11
        && bytes[3] == b'-'
        && bytes[6] == b'-'
        && bytes.iter().enumerate().all(|(i, b)| i == 3 || i == 6 || b.is_ascii_digit())
}

/// `2024-01-15`, `15.01.2024`, `01/15/2024`: three digit groups with one repeated separator.
fn date_shaped(candidate: &str) -> bool {
    let groups: Vec<&str> = candidate.split(['-', '.', '/']).collect();
    if groups.len() != 3 || !groups.iter().all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    matches!(lengths.as_slice(), [4, 1..=2, 1..=2] | [1..=2, 1..=2, 4] | [1..=2, 1..=2, 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones() {
        for phone in [
            "+49 30 1234567",
            "+1 (555) 123-4567",
            "+441632960961",
            "555-123-4567",
            "(555) 123-4567",
            "030 12345678",
            "0171-1234567",
        ] {
            assert!(recognize(phone).is_some(), "{phone}");
        }
    }

    #[test]
    fn not_phones() {
        assert_eq!(recognize("15.01.2024"), None);
        assert_eq!(recognize("01.02.2024"), None);
        assert_eq!(recognize("+12"), None);
        assert_eq!(recognize("0123"), None);
    }
}
