//! The citizen identification number of the People's Republic of China (公民身份号码), as on the
//! resident identity card.
//!
//! Eighteen characters (GB 11643-1999, "Citizen identification number"): the six-digit code of
//! the place of registration, whose first two digits are a province (11–15, 21–23, 31–37, 41–46,
//! 50–54, 61–65, or 81–83 for Hong Kong, Macau and Taiwan residents), the date of birth as
//! `YYYYMMDD` (a real day, from 1900 to this year), a three-digit sequence number, and a check
//! character by ISO 7064 MOD 11-2: Σ dᵢ × (2¹⁷⁻ⁱ mod 11) over the first seventeen digits, mod 11,
//! indexes `10X98765432` (so it is a digit or `X`).
//!
//! Written together (`440304199001011233`, `62010219770315001X`, the `X` in either case) or in the
//! groups some forms print, `440304 19900101 1233`. A number with a province and a date of birth
//! whose check character fails is a look-alike.

use super::date::{current_year, is_date, number};
use super::{for_each_unread, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// The number's length.
const LENGTH: usize = 18;

/// The check characters, indexed by the weighted sum mod 11.
const CHECK: &[u8; 11] = b"10X98765432";

/// The weights 2¹⁷⁻ⁱ mod 11 of the first seventeen digits.
const WEIGHTS: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];

/// Pushes every resident id in `text` (its digit `groups` listed): valid ones, and look-alikes
/// whose check character fails.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    // Digits everywhere, except that the check character may be X.
    let allowed = |index: usize, byte: u8| {
        byte.is_ascii_digit() || (index == LENGTH - 1 && matches!(byte, b'X' | b'x'))
    };
    for_each_unread(groups, |Group { start, end }| {
        if !matches!(end - start, 6 | 17 | 18) || !matches!(bytes[start], b'1'..=b'6' | b'8') {
            return None;
        }
        let ((id, end), grouped) = match (end - start, bytes.get(end)) {
            (18, _) | (17, Some(b'X' | b'x')) => {
                (read_groups::<LENGTH>(bytes, start, &[18], None, allowed)?, false)
            }
            (6, Some(b' ')) => (read_groups::<LENGTH>(bytes, start, &[6, 8, 4], Some(b' '), allowed)?, true),
            _ => return None,
        };
        if !has_shape(&id) || !standalone(text, start, end, grouped) {
            return None;
        }
        out.push(Finding { start, end, kind: RedactionKind::CnResidentId, valid: check_matches(&id) });
        Some(end)
    });
}

/// Whether eighteen digit values (0–9, the check character a digit) are a valid resident id: for
/// the card recognizer, which leaves such a number to this one.
pub(crate) fn is_valid_digits(values: &[u8]) -> bool {
    let Ok(values) = <[u8; LENGTH]>::try_from(values) else {
        return false;
    };
    let id = values.map(|value| b'0' + value);
    has_shape(&id) && check_matches(&id)
}

/// A province and a date of birth from 1900 to this year.
fn has_shape(id: &[u8; LENGTH]) -> bool {
    let province_ok =
        matches!(number(&id[..2]), 11..=15 | 21..=23 | 31..=37 | 41..=46 | 50..=54 | 61..=65 | 81..=83);
    let year = number(&id[6..10]);
    province_ok
        && year >= 1900
        && is_date(Some(year), number(&id[10..12]), number(&id[12..14]))
        && year <= current_year()
}

/// Whether the last character is the MOD 11-2 check character of the first seventeen.
fn check_matches(id: &[u8; LENGTH]) -> bool {
    let sum: u32 =
        id[..17].iter().zip(WEIGHTS).map(|(&digit, weight)| u32::from(digit - b'0') * weight).sum();
    CHECK[(sum % 11) as usize] == id[17].to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("440304199001011233", valid("440304199001011233")),
            ("身份证号：62010219770315001X。", valid("62010219770315001X")),
            ("id 62010219770315001x,", valid("62010219770315001x")),
            ("(510108200002294560)", valid("510108200002294560")),
            ("310115 19850709 8879", valid("310115 19850709 8879")),
            ("620102 19770315 001X", valid("620102 19770315 001X")),
            // Wrong check character: a look-alike.
            ("440304199001011234", look_alike("440304199001011234")),
            ("62010219770315001", vec![]),
            ("650102198808081180", look_alike("650102198808081180")),
            // No province, no date of birth (29 February 1999, the future, before 1900).
            ("990304199001011233", vec![]),
            ("740304199001011233", vec![]),
            ("510108199902294560", vec![]),
            ("11010520991231001X", vec![]),
            ("440304189001011233", vec![]),
            // Inside longer numbers or words, other groupings.
            ("4403041990010112331", vec![]),
            ("9440304199001011233", vec![]),
            ("440304199001011233x", vec![]),
            ("62010219770315001XY", vec![]),
            ("a440304199001011233", vec![]),
            ("440304-19900101-1233", vec![]),
            ("7 440304 19900101 1233", vec![]),
        ];
        assert_finds(find, &cases);
    }

    #[test]
    fn digit_values_for_cards() {
        let values: Vec<u8> = b"440304199001011233".iter().map(|d| d - b'0').collect();
        assert!(is_valid_digits(&values));
        assert!(!is_valid_digits(&values[..17]));
        let mut wrong = values.clone();
        wrong[17] = 4;
        assert!(!is_valid_digits(&wrong));
    }
}
