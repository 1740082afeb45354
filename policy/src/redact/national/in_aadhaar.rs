//! The Indian Aadhaar number, with its Verhoeff check digit.
//!
//! Twelve digits, the first never 0 or 1, the last a Verhoeff check digit over the other eleven
//! (UIDAI's "Aadhaar Numbering Scheme"; J. Verhoeff, "Error Detecting Decimal Codes", 1969: the
//! dihedral group D5's multiplication table and its permutation of each position).
//!
//! Written as on the Aadhaar letter and card, in three groups of four joined by spaces
//! (`2345 6789 0124`) or dashes (`2345-6789-0124`), one separator throughout; twelve digits
//! together only after a word that names the number (`Aadhaar`, `Aadhar`, `आधार`, `UIDAI`,
//! `UID`), since twelve bare digits are as often an account or order number. A grouped number
//! whose check digit fails is a look-alike, and so is one that a word names. A grouped number that
//! starts with one of Maestro's issuer numbers (5018, 5020, 5038, 5893, 6304, 6759, 6761–6763:
//! Maestro issues twelve-digit cards, printed the same way) is read as an Aadhaar number only
//! after such a word.

use super::{for_each_unread, named_before, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Words that name an Aadhaar number.
const WORDS: &[&str] = &["aadhaar", "aadhar", "आधार", "uidai", "uid"];

/// Maestro's issuer identification numbers, whose twelve-digit cards share the grouping.
const MAESTRO: [&[u8; 4]; 9] =
    [b"5018", b"5020", b"5038", b"5893", b"6304", b"6759", b"6761", b"6762", b"6763"];

/// Pushes every Aadhaar number in `text` (its digit `groups` listed): valid ones, and look-alikes
/// in the card's grouping or after a word that names the number.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    for_each_unread(groups, |Group { start, end }| {
        if !matches!(end - start, 4 | 12) || !matches!(bytes[start], b'2'..=b'9') {
            return None;
        }
        let ((number, end), grouped) = match (end - start, bytes.get(end)) {
            (4, Some(&separator @ (b' ' | b'-'))) => {
                (read_groups::<12>(bytes, start, &[4, 4, 4], Some(separator), digit)?, true)
            }
            (12, _) => (read_groups::<12>(bytes, start, &[12], None, digit)?, false),
            _ => return None,
        };
        if !standalone(text, start, end, grouped) {
            return None;
        }
        let maestro = MAESTRO.iter().any(|iin| number.starts_with(*iin));
        if (!grouped || maestro) && !named_before(text, start, WORDS) {
            return None;
        }
        out.push(Finding { start, end, kind: RedactionKind::InAadhaar, valid: verhoeff_valid(&number) });
        Some(end)
    });
}

/// Verhoeff's multiplication table (the dihedral group D5).
const MULTIPLY: [[u8; 10]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];

/// Verhoeff's permutation of a digit at each position from the right (mod 8).
const PERMUTE: [[u8; 10]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/// Whether the ASCII digits, check digit last, pass Verhoeff's check.
fn verhoeff_valid(digits: &[u8]) -> bool {
    let check = digits.iter().rev().enumerate().fold(0u8, |check, (position, &digit)| {
        MULTIPLY[usize::from(check)][usize::from(PERMUTE[position % 8][usize::from(digit - b'0')])]
    });
    check == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verhoeff() {
        // Verhoeff's own example: 236 takes the check digit 3.
        assert!(verhoeff_valid(b"2363") && !verhoeff_valid(b"2364"));
        for number in ["234567890124", "987654321012", "456789012341", "732165409879", "612345678904"] {
            assert!(verhoeff_valid(number.as_bytes()), "{number}");
        }
        // Every single-digit error and every swap of neighbours is caught.
        let number = *b"234567890124";
        for i in 0..12 {
            for digit in b'0'..=b'9' {
                let mut changed = number;
                changed[i] = digit;
                assert_eq!(verhoeff_valid(&changed), digit == number[i]);
            }
            if i < 11 && number[i] != number[i + 1] {
                let mut swapped = number;
                swapped.swap(i, i + 1);
                assert!(!verhoeff_valid(&swapped));
            }
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("2345 6789 0124", valid("2345 6789 0124")),
            ("Aadhaar No.: 9876 5432 1012.", valid("9876 5432 1012")),
            ("(4567-8901-2341)", valid("4567-8901-2341")),
            ("aadhaar=732165409879", valid("732165409879")),
            ("UID: 612345678904", valid("612345678904")),
            ("आधार संख्या 234567890124", valid("234567890124")),
            // Maestro's issuer numbers need the word.
            ("5018 1234 5670", vec![]),
            ("Aadhaar 5018 1234 5670", valid("5018 1234 5670")),
            // Failing checks: look-alikes when grouped or named, else nothing.
            ("2345 6789 0125", look_alike("2345 6789 0125")),
            ("Aadhaar 234567890125", look_alike("234567890125")),
            ("234567890125", vec![]),
            // Bare without the word, first digit 0 or 1, other groupings, inside longer numbers.
            ("234567890124", vec![]),
            ("guid 234567890124", vec![]),
            ("1234 5678 9012", vec![]),
            ("0345 6789 0124", vec![]),
            ("2345-6789 0124", vec![]),
            ("23456 789 0124", vec![]),
            ("4111 2345 6789 0124", vec![]),
            ("2345 6789 0124 5", vec![]),
            ("2345-6789-0124-5", vec![]),
            ("x2345 6789 0124", vec![]),
            ("+91 2345 6789 0124", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
