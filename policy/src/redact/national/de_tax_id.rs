//! The German tax identification number (steuerliche Identifikationsnummer, IdNr, § 139b AO).
//!
//! Eleven digits, the first not 0 (numbers starting with 0 are test numbers). In the first ten
//! digits exactly one digit occurs more than once, two or three times (three is allowed since
//! 2016), and a digit that occurs three times never does so in three adjacent places; the other
//! digits occur at most once. The eleventh digit is the check digit of ISO/IEC 7064 MOD 11,10.
//! (Rules as published by the Bayerisches Landesamt für Steuern, "Prüfung der Steuer- und
//! Steueridentifikationsnummer", 2019.)
//!
//! Written together (`86095742719`) or in the grouping of the BZSt's letters and payslips,
//! `86 095 742 719`. A grouped number that fails its checks is a look-alike, so its groups are not
//! read as a phone number; eleven digits together that fail are left to the other recognizers (a
//! bare run of digits says nothing about what it is). `123/456/78903` is the older Steuernummer of
//! a tax office, not this number, and is not matched.

use super::{br_cpf, for_each_unread, named_before, pl_pesel, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Pushes every tax id in `text` (its digit `groups` listed): valid ones, and grouped
/// look-alikes.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    for_each_unread(groups, |Group { start, end: run_end }| {
        let kind = RedactionKind::DeTaxId;
        match run_end - start {
            11 => {
                let (digits, end) = read_groups::<11>(bytes, start, &[11], None, digit)?;
                if !standalone(text, start, end, false) {
                    return None;
                }
                if is_valid(&digits) {
                    out.push(Finding::valid(start, end, kind));
                } else if (tax_shaped(&digits) && !named_as_other_id(text, start))
                    || named_before(text, start, WORDS)
                {
                    // Eleven digits whose repetitions are a tax id's (about 2% of random numbers
                    // are), or that a text calls a tax id: a wrong one is not a phone number. A
                    // CPF or PESEL that a text names is left to its own recognizer.
                    out.push(Finding::look_alike(start, end, kind));
                }
                Some(end)
            }
            2 => {
                let (digits, end) = read_groups::<11>(bytes, start, &[2, 3, 3, 3], Some(b' '), digit)?;
                if digits[0] == b'0' || !standalone(text, start, end, true) {
                    return None;
                }
                out.push(Finding { start, end, kind, valid: is_valid(&digits) });
                Some(end)
            }
            _ => None,
        }
    });
}

/// The first digit and the repetitions of a tax id, whatever the check digit.
fn tax_shaped(digits: &[u8; 11]) -> bool {
    let values = digits.map(|d| d - b'0');
    values[0] != 0 && repetitions_allowed(&values)
}

/// Words that name a tax id (`Steuer-ID`, `tax ID`, `IdNr`, `TIN`).
const WORDS: &[&str] =
    &["steuer", "tax id", "tax-id", "taxid", "tax_id", "idnr", "identifikationsnummer", "tin:", "tin "];

/// Whether the words before `start` name another country's eleven-digit id.
fn named_as_other_id(text: &str, start: usize) -> bool {
    named_before(text, start, br_cpf::WORDS) || named_before(text, start, pl_pesel::WORDS)
}

/// Whether the eleven ASCII digits are a tax id: first digit, repetitions, check digit.
fn is_valid(digits: &[u8; 11]) -> bool {
    let values = digits.map(|d| d - b'0');
    values[0] != 0 && repetitions_allowed(&values) && check_digit(&values) == values[10]
}

/// Exactly one digit of the first ten occurs twice or three times, and three never in a row.
fn repetitions_allowed(values: &[u8; 11]) -> bool {
    let body = &values[..10];
    let mut counts = [0u8; 10];
    for &value in body {
        counts[usize::from(value)] += 1;
    }
    let mut repeated = counts.iter().filter(|&&count| count > 1);
    match (repeated.next(), repeated.next()) {
        (Some(2), None) => true,
        (Some(3), None) => !body.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]),
        _ => false,
    }
}

/// ISO/IEC 7064 MOD 11,10 over the first ten digits.
fn check_digit(values: &[u8; 11]) -> u8 {
    let mut product = 10u8;
    for &value in &values[..10] {
        let mut sum = (value + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (2 * sum) % 11;
    }
    match 11 - product {
        10 => 0,
        check => check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, bool)> {
        super::super::tests::found_by(find, text)
    }

    #[test]
    fn validator() {
        // Valid: one digit twice, three times apart, twice side by side, three times not in a row.
        for id in ["86095742719", "47036892816", "65929970489", "57549285017", "25768131411", "81872495633"] {
            assert!(is_valid(id.as_bytes().try_into().expect("11 digits")), "{id}");
        }
        for id in ["11234567890", "11012345675"] {
            assert!(is_valid(id.as_bytes().try_into().expect("11 digits")), "{id}");
        }
        // Each of these has a right check digit but breaks another rule.
        for (id, why) in [
            ("02476291358", "leading zero: a test number"),
            ("12345678903", "no repeated digit"),
            ("98765432106", "no repeated digit"),
            ("11012134569", "a digit four times"),
            ("11223456785", "two repeated digits"),
            ("11212234562", "two digits three times"),
            ("11123456786", "three in a row"),
        ] {
            assert!(!is_valid(id.as_bytes().try_into().expect("11 digits")), "{id}: {why}");
        }
        assert!(!is_valid(b"86095742718"), "check digit");
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("86095742719", valid("86095742719")),
            ("86 095 742 719", valid("86 095 742 719")),
            ("Steuer-IdNr.: 47036892816, bitte", valid("47036892816")),
            ("IdNr 65 929 970 489.", valid("65 929 970 489")),
            ("(25768131411)", valid("25768131411")),
            ("ID:57549285017\n", valid("57549285017")),
            ("end 81 872 495 633", valid("81 872 495 633")),
            // Wrong check digit: a look-alike in the tax-id grouping, or together when the
            // repetitions are a tax id's or the text calls it one; nothing otherwise.
            ("86095742718", look_alike("86095742718")),
            ("12345678901", vec![]),
            ("Steuer-ID 12345678901", look_alike("12345678901")),
            ("86 095 742 718", look_alike("86 095 742 718")),
            ("12 345 678 903", look_alike("12 345 678 903")),
            // Inside longer numbers or words.
            ("860957427190", vec![]),
            ("186095742719", vec![]),
            ("x86095742719", vec![]),
            ("86095742719th", vec![]),
            ("+86095742719", vec![]),
            ("3.86095742719", vec![]),
            ("86095742719-4", vec![]),
            ("49 86 095 742 719", vec![]),
            ("86 095 742 719 1", vec![]),
            ("86 095 742 7190", vec![]),
            // Other groupings, and the old Steuernummer.
            ("860 957 427 19", vec![]),
            ("86-095-742-719", vec![]),
            ("123/456/78903", vec![]),
            ("06 095 742 719", vec![]),
            ("no digits at all", vec![]),
        ];
        assert_finds(find, &cases);
    }

    #[test]
    fn several_in_one_text() {
        let text = "a 86095742719 b 47 036 892 816 c 12 345 678 903 d";
        assert_eq!(
            found(text),
            vec![
                ("86095742719".to_owned(), true),
                ("47 036 892 816".to_owned(), true),
                ("12 345 678 903".to_owned(), false)
            ]
        );
    }
}
