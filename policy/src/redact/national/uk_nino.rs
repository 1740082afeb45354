//! The UK National Insurance number (NINO).
//!
//! Two prefix letters, six digits and a suffix letter A–D (HMRC, National Insurance Manual
//! NIM39110). The first prefix letter is never D, F, I, Q, U or V; the second never D, F, I, O, Q,
//! U or V; and the prefixes BG, GB, KN, NK, NT, TN and ZZ are not allocated. Administrative
//! prefixes that pass these rules (CR, MW, NC, PP, PY, PZ) still name one person, so they are
//! redacted too. There is no check digit: a number of the NINO shape whose prefix breaks the
//! rules (`QQ 12 34 56 A`, HMRC's own example) is a look-alike.
//!
//! Written `AB123456C`, `AB 12 34 56 C`, or any mix of those spaces; or with dashes in the same
//! places (`AB-12-34-56-C`, as web forms and CSV exports write it), one separator throughout, so
//! `AB-12 34-56` is not read. Case: all upper case, or all
//! lower case (people type `ab123456c` in chat); mixed case such as `Ab123456c` reads like a code
//! identifier and is not matched. The suffix may be missing (older records leave it blank) only in
//! the upper-case form spaced as on the NINO card, `AB 12 34 56`: two letters and six digits
//! together are too common a shape for order numbers and references, and a lower-case `at 12 34 56`
//! is prose.

use super::{for_each_unread, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Pushes every NINO in `text` (its digit `groups` listed), and the look-alikes with a prefix
/// that is never allocated.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    // The six digits are the anchor: find a run, then look for the prefix just before it.
    for_each_unread(groups, |Group { start: digits_start, end }| {
        // Six digits together, or the first two of the spaced or dashed form.
        if !matches!(end - digits_start, 2 | 6) {
            return None;
        }
        let (start, end, prefix) =
            SEPARATORS.iter().find_map(|&separator| shape_at(text, digits_start, separator))?;
        out.push(Finding { start, end, kind: RedactionKind::UkNino, valid: prefix_allocated(prefix) });
        Some(end)
    });
}

/// What may stand between a NINO's parts; one of them throughout a number.
const SEPARATORS: [u8; 2] = [b' ', b'-'];

/// The span and prefix of a NINO-shaped value whose digits start at `digits_start`, its parts
/// written together or apart by `separator`.
fn shape_at(text: &str, digits_start: usize, separator: u8) -> Option<(usize, usize, [u8; 2])> {
    let bytes = text.as_bytes();
    let letter = |i: Option<usize>| i.and_then(|i| bytes.get(i)).is_some_and(u8::is_ascii_alphabetic);
    let (start, prefix_spaced) = if letter(digits_start.checked_sub(2)) && letter(digits_start.checked_sub(1))
    {
        (digits_start - 2, false)
    } else if digits_start >= 3
        && bytes[digits_start - 1] == separator
        && letter(Some(digits_start - 3))
        && letter(Some(digits_start - 2))
    {
        (digits_start - 3, true)
    } else {
        return None;
    };
    let prefix = [bytes[start], bytes[start + 1]];
    let upper = prefix[0].is_ascii_uppercase();
    if prefix[1].is_ascii_uppercase() != upper {
        return None;
    }
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    let (digits_end, digits_spaced) =
        match read_groups::<6>(bytes, digits_start, &[2, 2, 2], Some(separator), digit) {
            Some((_, end)) => (end, true),
            None => (read_groups::<6>(bytes, digits_start, &[6], None, digit)?.1, false),
        };
    let suffix_at = if bytes.get(digits_end) == Some(&separator) { digits_end + 1 } else { digits_end };
    let suffix_ok = |byte: u8| if upper { matches!(byte, b'A'..=b'D') } else { matches!(byte, b'a'..=b'd') };
    if bytes.get(suffix_at).copied().is_some_and(suffix_ok) && standalone(text, start, suffix_at + 1, false) {
        return Some((start, suffix_at + 1, prefix));
    }
    // The card's own layout is spaced; a dashed number without its suffix is a part number's shape.
    let card_layout = upper && prefix_spaced && digits_spaced && separator == b' ';
    (card_layout && standalone(text, start, digits_end, true)).then_some((start, digits_end, prefix))
}

/// HMRC's prefix rules.
fn prefix_allocated(prefix: [u8; 2]) -> bool {
    let [first, second] = prefix.map(|b| b.to_ascii_uppercase());
    !matches!(first, b'D' | b'F' | b'I' | b'Q' | b'U' | b'V')
        && !matches!(second, b'D' | b'F' | b'I' | b'O' | b'Q' | b'U' | b'V')
        && !matches!(&[first, second], b"BG" | b"GB" | b"KN" | b"NK" | b"NT" | b"TN" | b"ZZ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, bool)> {
        super::super::tests::found_by(find, text)
    }

    #[test]
    fn prefixes() {
        for prefix in ["AB", "CE", "JG", "NA", "OA", "PP", "CR", "ZY", "YZ"] {
            assert!(prefix_allocated(prefix.as_bytes().try_into().expect("2")), "{prefix}");
        }
        let refused = [
            "DA", "FA", "IA", "QA", "UA", "VA", "AD", "AF", "AI", "AO", "AQ", "AU", "AV", "BG", "GB", "KN",
            "NK", "NT", "TN", "ZZ", "QQ", "OO",
        ];
        for prefix in refused {
            assert!(!prefix_allocated(prefix.as_bytes().try_into().expect("2")), "{prefix}");
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("AB123456C", valid("AB123456C")),
            ("AB 12 34 56 C", valid("AB 12 34 56 C")),
            ("AB 123456 C", valid("AB 123456 C")),
            ("NI number: JG 10 29 66 D.", valid("JG 10 29 66 D")),
            ("(ce123456a)", valid("ce123456a")),
            ("nino=AB123456C,next", valid("AB123456C")),
            ("end AB 12 34 56 A", valid("AB 12 34 56 A")),
            // No suffix: only upper case in the card's spacing.
            ("NINO AB 12 34 56 please", valid("AB 12 34 56")),
            ("AB 12 34 56", valid("AB 12 34 56")),
            ("AB123456", vec![]),
            ("AB 123456", vec![]),
            ("meet at 12 34 56", vec![]),
            // Refused prefixes are look-alikes.
            ("QQ 12 34 56 A", look_alike("QQ 12 34 56 A")),
            ("QQ123456C", look_alike("QQ123456C")),
            ("GB123456A", look_alike("GB123456A")),
            ("AO 12 34 56", look_alike("AO 12 34 56")),
            // Not the shape: suffix, case, length, inside words or numbers.
            ("AB123456E", vec![]),
            ("Ab123456C", vec![]),
            ("ab123456C", vec![]),
            ("AB1234567C", vec![]),
            ("AB12345C", vec![]),
            ("XAB123456C", vec![]),
            ("AB123456CD", vec![]),
            ("AB123456C9", vec![]),
            ("AB 12 34 56 78", vec![]),
            // Dashes in the same places, one separator throughout.
            ("NINO AB-12-34-56-C", valid("AB-12-34-56-C")),
            ("ab-12-34-56-c,", valid("ab-12-34-56-c")),
            ("AB-123456-C", valid("AB-123456-C")),
            ("QQ-12-34-56-C", look_alike("QQ-12-34-56-C")),
            ("AB-12-34-56", vec![]),
            ("AB-12 34 56 C", vec![]),
            ("AB 12-34-56 C", vec![]),
            ("AB-12-34-56-E", vec![]),
            ("AB-12-34-56-C-9", vec![]),
            ("XAB-12-34-56-C", vec![]),
            ("no digits", vec![]),
            ("a 1 and 22 and 333", vec![]),
        ];
        assert_finds(find, &cases);
    }

    #[test]
    fn several_in_one_text() {
        let text = "AB123456C and CE 12 34 56 D and QQ123456A.";
        let expected = vec![
            ("AB123456C".to_owned(), true),
            ("CE 12 34 56 D".to_owned(), true),
            ("QQ123456A".to_owned(), false),
        ];
        assert_eq!(found(text), expected);
    }
}
