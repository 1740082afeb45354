//! The Italian codice fiscale of a person, with its check letter.
//!
//! Sixteen characters (Decreto Ministeriale 23 dicembre 1976, "Sistemi di codificazione dei
//! soggetti da iscrivere all'anagrafe tributaria"): three letters of the surname, three of the
//! name, the year (two digits), the month as a letter of `ABCDEHLMPRST`, the day (two digits, plus
//! 40 for women: 01–31 or 41–71, a day the month has), the place of birth (its cadastral code: a
//! letter, `A`–`M` for an Italian comune or `Z` for a foreign state, and three digits), and a
//! check letter: each of the first fifteen characters is worth a number from the odd-position or
//! the even-position table, and their sum mod 26 is the letter (`A` for 0).
//!
//! Omocodia: when two people's data give the same code, the Agenzia delle Entrate replaces its
//! digits by letters (`0`–`9` by `LMNPQRSTUV`) one at a time from the rightmost digit leftwards,
//! so only the last of the seven digit positions may hold a letter, then the last two, and so on.
//! The recognizer is anchored on digit groups, so a code whose seven digits were all replaced
//! (none left) is not found.
//!
//! Written together, in upper or in lower case (`rssmra85t10a562s` as typed in chat); a mix of
//! cases reads like a random token and is not matched. A code of the full shape whose check
//! letter fails is a look-alike.

use super::date::is_date;
use super::{for_each_unread, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// The code's length.
const LENGTH: usize = 16;

/// Where the code has digits, left to right (the year, the day, the place's number).
const NUMERIC: [usize; 7] = [6, 7, 9, 10, 12, 13, 14];

/// The letters that replace the digits 0–9 in omocodia.
const OMOCODE: &[u8; 10] = b"LMNPQRSTUV";

/// The month letters, January to December.
const MONTHS: &[u8; 12] = b"ABCDEHLMPRST";

/// The value of a character (digit or letter, 0–25) at an odd position (first, third…).
const ODD: [u8; 26] =
    [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];

/// Pushes every codice fiscale in `text` (its digit `groups` listed): valid ones, and
/// look-alikes whose check letter fails.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    for_each_unread(groups, |Group { start, end }| {
        // A code's digit runs hold at most three digits, start at its seventh character or
        // later, and have a letter on each side.
        let letter_after = bytes.get(end).is_some_and(u8::is_ascii_alphabetic);
        if end - start > 3 || start < 6 || !letter_after || !bytes[start - 1].is_ascii_alphabetic() {
            return None;
        }
        let before = bytes[start.saturating_sub(LENGTH)..start].iter().rev();
        let letters_before = before.take_while(|byte| byte.is_ascii_alphanumeric()).count();
        if letters_before > 14 {
            return None;
        }
        let code_start = start - letters_before;
        let code_end = code_start + LENGTH;
        let code: [u8; LENGTH] = bytes.get(code_start..code_end)?.try_into().ok()?;
        let upper = shape(&code)?;
        if !standalone(text, code_start, code_end, false) {
            return None;
        }
        let valid = check_letter(&upper) == upper[15];
        out.push(Finding { start: code_start, end: code_end, kind: RedactionKind::ItCodiceFiscale, valid });
        Some(code_end)
    });
}

/// The code in upper case when it has a codice fiscale's shape: letters and digits in their
/// places (omocodia's letters from the right), one case throughout, a month letter, a day the
/// month has, and a cadastral letter.
fn shape(code: &[u8; LENGTH]) -> Option<[u8; LENGTH]> {
    let upper = code[0].is_ascii_uppercase();
    if !code.iter().all(|byte| {
        byte.is_ascii_digit() || (byte.is_ascii_alphabetic() && byte.is_ascii_uppercase() == upper)
    }) {
        return None;
    }
    let code = code.map(|byte| byte.to_ascii_uppercase());
    let letters = [0, 1, 2, 3, 4, 5, 8, 11, 15];
    if !letters.iter().all(|&i| code[i].is_ascii_alphabetic()) {
        return None;
    }
    // Digits, or omocodia's letters: once a digit is seen from the right, no letter before it.
    let mut values = [0u32; LENGTH];
    let mut digit_seen = false;
    for &i in NUMERIC.iter().rev() {
        values[i] = match code[i] {
            digit @ b'0'..=b'9' => {
                digit_seen = true;
                u32::from(digit - b'0')
            }
            letter if !digit_seen => OMOCODE.iter().position(|&o| o == letter)? as u32,
            _ => return None,
        };
    }
    let month = MONTHS.iter().position(|&m| m == code[8])? as u32 + 1;
    let day = values[9] * 10 + values[10];
    let day = if day > 40 { day - 40 } else { day };
    let place_ok = matches!(code[11], b'A'..=b'M' | b'Z');
    (place_ok && is_date(None, month, day)).then_some(code)
}

/// The check letter of the first fifteen characters (upper case): odd positions by [`ODD`],
/// even positions by their own value, the sum mod 26.
fn check_letter(code: &[u8; LENGTH]) -> u8 {
    let sum: u32 = code[..15]
        .iter()
        .enumerate()
        .map(|(i, &byte)| {
            let value = if byte.is_ascii_digit() { byte - b'0' } else { byte - b'A' };
            u32::from(if i % 2 == 0 { ODD[usize::from(value)] } else { value })
        })
        .sum();
    b'A' + (sum % 26) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, bool)> {
        super::super::tests::found_by(find, text)
    }

    #[test]
    fn check_letters() {
        for code in ["RSSMRA85T10A562S", "VRDGPP13A10B157J", "BNCLRA90E51F205R", "MRTMTT25D09Z133L"] {
            let code: [u8; LENGTH] = code.as_bytes().try_into().expect("16");
            assert_eq!(check_letter(&code), code[15], "{}", String::from_utf8_lossy(&code));
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("BNCLRA90E51F205R", valid("BNCLRA90E51F205R")),
            ("Codice fiscale: VRDGPP13A10B157J.", valid("VRDGPP13A10B157J")),
            ("cf=bnclra90e51f205r;", valid("bnclra90e51f205r")),
            ("(MRTMTT25D09Z133L)", valid("MRTMTT25D09Z133L")),
            // 29 February (two-digit year) for a woman: day 69.
            ("CRSLNE80B69H501F", valid("CRSLNE80B69H501F")),
            // Omocodia, from the rightmost digit leftwards.
            ("RSSMRA85T10A56NH", valid("RSSMRA85T10A56NH")),
            ("RSSMRA85T10A5SNT", valid("RSSMRA85T10A5SNT")),
            ("RSSMRA85T10ARSNO", valid("RSSMRA85T10ARSNO")),
            ("RSSMRA85TMLARSNC", valid("RSSMRA85TMLARSNC")),
            ("RSSMRA8RTMLARSNO", valid("RSSMRA8RTMLARSNO")),
            ("RSSMRAR5TMLARSNR", vec![]),
            // All seven replaced: no digit to anchor on (the documented limit).
            ("RSSMRAURTMLARSNL", vec![]),
            // Wrong check letter: a look-alike.
            ("BNCLRA90E51F205X", look_alike("BNCLRA90E51F205X")),
            ("rssmra85t10a56nx", look_alike("rssmra85t10a56nx")),
            // Out of shape: a letter left of a digit in omocodia, month, day, place, case.
            ("RSSMRA85T1LA562S", vec![]),
            ("BNCLRA90F51F205R", vec![]),
            ("BNCLRA90E32F205R", vec![]),
            ("BNCLRA90D31F205R", vec![]),
            ("BNCLRA90E51N205R", vec![]),
            ("BnclRA90E51F205R", vec![]),
            ("BNCLR490E51F205R", vec![]),
            // Inside longer tokens, or too short.
            ("XBNCLRA90E51F205R", vec![]),
            ("BNCLRA90E51F205R1", vec![]),
            ("BNCLRA90E51F205RX", vec![]),
            ("_BNCLRA90E51F205R", vec![]),
            ("NCLRA90E51F205R", vec![]),
            ("version 1.2.3 of abc12", vec![]),
        ];
        assert_finds(find, &cases);
    }

    #[test]
    fn several_in_one_text() {
        let text = "BNCLRA90E51F205R, VRDGPP13A10B157X e MRTMTT25D09Z133L";
        let expected = vec![
            ("BNCLRA90E51F205R".to_owned(), true),
            ("VRDGPP13A10B157X".to_owned(), false),
            ("MRTMTT25D09Z133L".to_owned(), true),
        ];
        assert_eq!(found(text), expected);
    }
}
