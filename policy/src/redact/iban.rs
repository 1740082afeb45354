//! IBANs: a known country, exactly that country's length (SWIFT's IBAN registry) and the
//! ISO 7064 mod-97 check, written in one piece or in groups, in either case. Groups are joined by
//! a space, two spaces (text justified or pasted from a PDF), a dash or a dot
//! (`DE89.3704.0044…`, as some banks' forms print it): the separator only groups, and mod-97
//! over the characters is what decides, so a looser separator lets no more numbers through.
//!
//! A candidate that has an IBAN's shape and its country's length but fails mod-97 is a
//! look-alike: left whole, so its digits are never re-read as a card or a phone number.

use std::sync::LazyLock;

use regex::Regex;

use super::digits::Group;
use super::finding::Finding;
use super::kind::RedactionKind;

/// Country, check digits, then at least 11 more characters, each maybe after a separator (see
/// [`is_separator`]); matched only at the start of the text it is given.
static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?i-u)[a-z]{2}[0-9]{2}(?:(?:  |[ .\-])?[a-z0-9]){11,32}")
        .expect("the IBAN pattern is valid")
});

/// The bytes that join an IBAN's groups (a double space is two of them).
fn is_separator(byte: u8) -> bool {
    matches!(byte, b' ' | b'-' | b'.')
}

/// Reports every IBAN (and IBAN look-alike) in `text`, whose digit `groups` are listed.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut position = 0;
    // Most text has no two letters followed by two digits at a word's start: look for that at
    // the digit groups and run the pattern only from there.
    for group in groups {
        let Some(start) = group.start.checked_sub(2) else { continue };
        if start < position || !starts_word(bytes, start) {
            continue;
        }
        let Some(found) = CANDIDATE.find(&text[start..]) else {
            position = start + 1;
            continue;
        };
        let found = start..start + found.end();
        let found_str = &text[found.clone()];
        match recognize(found_str) {
            Some((length, valid)) => {
                let kind = RedactionKind::Iban;
                let end = start + length;
                out.push(if valid {
                    Finding::valid(start, end, kind)
                } else {
                    Finding::look_alike(start, end, kind)
                });
                position = end;
            }
            None => match grouped_look_alike(found_str) {
                Some(length) => {
                    out.push(Finding::look_alike(start, start + length, RedactionKind::Iban));
                    position = start + length;
                }
                None => position = start + 2,
            },
        }
    }
}

/// Whether two ASCII letters and two digits start a word at `at`.
fn starts_word(bytes: &[u8], at: usize) -> bool {
    bytes.get(at..at + 4).is_some_and(|four| {
        four[0].is_ascii_alphabetic()
            && four[1].is_ascii_alphabetic()
            && four[2].is_ascii_digit()
            && four[3].is_ascii_digit()
    }) && (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
}

/// For a candidate starting with a known country: the byte length of its country's IBAN, and
/// whether it passes mod-97. `None` when the country is unknown, the candidate is too short, or
/// the IBAN would end inside a word.
fn recognize(candidate: &str) -> Option<(usize, bool)> {
    let country = candidate.get(..2)?.to_ascii_uppercase();
    let length = country_length(&country)?;
    let mut compact = [0u8; 34];
    let mut taken = 0;
    let mut end = 0;
    for (index, byte) in candidate.bytes().enumerate() {
        if is_separator(byte) {
            continue;
        }
        compact[taken] = byte.to_ascii_uppercase();
        taken += 1;
        if taken == length {
            end = index + 1;
            break;
        }
    }
    if taken < length || candidate.as_bytes().get(end).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    Some((end, mod97(&compact[..length])))
}

/// An IBAN written in groups of four whose country is unknown or whose length is wrong: the byte
/// length of its groups (at least four of them), so that its digits are not read as other kinds.
fn grouped_look_alike(candidate: &str) -> Option<usize> {
    let mut end = 0;
    let mut groups = 0;
    for (index, group) in candidate.split(' ').enumerate() {
        let full = group.len() == 4 || (index > 0 && (1..4).contains(&group.len()));
        if !full || !group.bytes().all(|b| b.is_ascii_alphanumeric()) {
            break;
        }
        end += group.len() + usize::from(index > 0);
        groups += 1;
        if group.len() < 4 {
            break;
        }
    }
    (groups >= 4).then_some(end)
}

/// ISO 13616 check: move the first four characters to the end, letters become 10..35, the
/// number mod 97 must be 1.
fn mod97(iban: &[u8]) -> bool {
    let rotated = iban[4..].iter().chain(&iban[..4]);
    let mut remainder: u32 = 0;
    for &byte in rotated {
        let value = match byte {
            b'0'..=b'9' => u32::from(byte - b'0'),
            b'A'..=b'Z' => u32::from(byte - b'A') + 10,
            _ => return false,
        };
        remainder = if value >= 10 { (remainder * 100 + value) % 97 } else { (remainder * 10 + value) % 97 };
    }
    remainder == 1
}

/// IBAN lengths per country (SWIFT IBAN registry).
fn country_length(country: &str) -> Option<usize> {
    Some(match country {
        "NO" => 15,
        "BE" => 16,
        "DK" | "FI" | "FO" | "GL" | "NL" => 18,
        "MK" | "SI" => 19,
        "AT" | "BA" | "EE" | "KZ" | "LT" | "LU" | "XK" => 20,
        "CH" | "CR" | "HR" | "LI" | "LV" => 21,
        "BG" | "BH" | "DE" | "GB" | "GE" | "IE" | "ME" | "RS" | "VA" => 22,
        "AE" | "GI" | "IL" | "IQ" | "TL" => 23,
        "AD" | "CZ" | "ES" | "MD" | "PK" | "RO" | "SA" | "SE" | "SK" | "TN" | "VG" => 24,
        "LY" | "PT" | "ST" => 25,
        "IS" | "TR" => 26,
        "FR" | "GR" | "IT" | "MC" | "MR" | "SM" => 27,
        "AL" | "AZ" | "BY" | "CY" | "DO" | "GT" | "HU" | "LB" | "PL" | "SV" => 28,
        "BR" | "EG" | "PS" | "QA" | "UA" => 29,
        "JO" | "KW" | "MU" => 30,
        "MT" | "SC" => 31,
        "LC" => 32,
        "RU" => 33,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ibans(text: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        find(text, &super::super::digits::groups(text), &mut out);
        out.iter().map(|f| (&text[f.start..f.end], f.valid)).collect()
    }

    #[test]
    fn valid_ibans() {
        for iban in [
            "DE89370400440532013000",
            "DE89 3704 0044 0532 0130 00",
            "de89 3704 0044 0532 0130 00",
            "DE89-3704-0044-0532-0130-00",
            "GB82 WEST 1234 5698 7654 32",
            "NO9386011117947",
            "FR1420041010050500013M02606",
            "DE89  3704 0044  0532 0130 00",
            "DE89  3704  0044  0532  0130  00",
            "DE89.3704.0044.0532.0130.00",
            "GB82.WEST.1234.5698.7654.32",
        ] {
            assert_eq!(ibans(iban), vec![(iban, true)], "{iban}");
        }
        // A sentence's full stop after it is not a separator.
        assert_eq!(
            ibans("IBAN DE89.3704.0044.0532.0130.00. Thanks"),
            vec![("DE89.3704.0044.0532.0130.00", true)]
        );
        // A greedy candidate is cut back to the country's length.
        assert_eq!(
            ibans("IBAN DE89 3704 0044 0532 0130 00 please"),
            vec![("DE89 3704 0044 0532 0130 00", true)]
        );
    }

    #[test]
    fn look_alikes_and_non_ibans() {
        assert_eq!(ibans("DE88370400440532013000"), vec![("DE88370400440532013000", false)], "check digits");
        assert_eq!(ibans("DE52 3704 0044 0532 0130 00"), vec![("DE52 3704 0044 0532 0130 00", false)]);
        assert_eq!(ibans("DE8937040044053201300"), vec![], "too short");
        assert_eq!(ibans("ZZ89370400440532013000"), vec![], "unknown country");
        assert_eq!(ibans("DE89370400440532013000123"), vec![], "ends inside a number");
        // Dotted and double-spaced groups still need mod-97, and no more than two spaces join.
        assert_eq!(ibans("DE88.3704.0044.0532.0130.00"), vec![("DE88.3704.0044.0532.0130.00", false)]);
        assert_eq!(ibans("DE89   3704 0044 0532 0130 00"), vec![], "three spaces");
        assert_eq!(ibans("DE89..3704.0044.0532.0130.00"), vec![], "two dots");
    }
}
