//! The Swedish personnummer and samordningsnummer (coordination number).
//!
//! The date of birth as `YYMMDD` (a coordination number adds 60 to the day), a three-digit birth
//! number and a check digit: Luhn over those ten digits (Skatteverket, "Personnummer och
//! samordningsnummer", SKV 704). The separator before the last four digits is `-`, or `+` from
//! the year the holder turns 100; with the century written, the date comes as `YYYYMMDD`.
//!
//! Read as `YYMMDD-NNNN`, `YYMMDD+NNNN` and `YYYYMMDD-NNNN` anywhere, as twelve digits together
//! (`YYYYMMDDNNNN`) when the century is 18, 19 or 20, and as ten digits together only after a
//! word that names the number (`personnummer`, `samordningsnummer`, `pnr`…): ten bare digits are
//! as often a phone number. The date must be a real day (a year up to this one when the century
//! is written). A number with its separator or its name whose check digit fails is a look-alike;
//! twelve bare digits that fail are left alone. A number glued by `-` or `.` into a longer name
//! (`backup-20240115-1030.tar`, a file name's date and time) is not read.

use super::date::{current_year, is_date, number};
use super::{for_each_unread, named_before, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::card::luhn;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Words that name a personnummer.
const WORDS: &[&str] =
    &["personnummer", "personnr", "person nr", "samordningsnummer", "pnr", "personal identity number"];

/// How a personnummer-shaped number was written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// With `-` or `+` before the last four digits.
    Separated,
    /// Twelve digits together.
    Twelve,
    /// Ten digits together (read only after a word that names it).
    Ten,
}

/// Pushes every personnummer in `text` (its digit `groups` listed): valid ones, and look-alikes
/// written with a separator or after a word that names the number.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    for_each_unread(groups, |Group { start, end }| {
        if !matches!(end - start, 6 | 8 | 10 | 12) {
            return None;
        }
        let (ten, century, end, form) = read(bytes, start, end)?;
        if !has_date(&ten, century)
            || !standalone(text, start, end, false)
            || in_name(bytes, start, end)
            || (form == Form::Ten && !named_before(text, start, WORDS))
        {
            return None;
        }
        let valid = luhn(&ten.map(|digit| digit - b'0'));
        if !valid && form == Form::Twelve {
            return None;
        }
        out.push(Finding { start, end, kind: RedactionKind::SePersonnummer, valid });
        Some(end)
    });
}

/// The ten digits `YYMMDDNNNN` of a number whose first digit group is `start..end`, its century
/// when written, the end of the number and its form.
fn read(bytes: &[u8], start: usize, end: usize) -> Option<([u8; 10], Option<u32>, usize, Form)> {
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    let last_four = |at: usize| read_groups::<4>(bytes, at, &[4], None, digit);
    let mut ten = [0u8; 10];
    let (century, end, form) = match (end - start, bytes.get(end)) {
        (6, Some(b'-' | b'+')) => {
            let (four, number_end) = last_four(end + 1)?;
            ten[..6].copy_from_slice(&bytes[start..end]);
            ten[6..].copy_from_slice(&four);
            (None, number_end, Form::Separated)
        }
        (8, Some(b'-')) => {
            let (four, number_end) = last_four(end + 1)?;
            ten[..6].copy_from_slice(&bytes[start + 2..end]);
            ten[6..].copy_from_slice(&four);
            (Some(number(&bytes[start..start + 2])), number_end, Form::Separated)
        }
        (12, _) => {
            ten.copy_from_slice(&bytes[start + 2..end]);
            (Some(number(&bytes[start..start + 2])), end, Form::Twelve)
        }
        (10, _) => {
            ten.copy_from_slice(&bytes[start..end]);
            (None, end, Form::Ten)
        }
        _ => return None,
    };
    Some((ten, century, end, form))
}

/// Whether `YYMMDD` is a real day (the coordination number's day less 60), with the century's
/// year up to this one when it is written.
fn has_date(ten: &[u8; 10], century: Option<u32>) -> bool {
    let year = match century {
        Some(century @ 18..=20) => Some(century * 100 + number(&ten[..2])),
        Some(_) => return false,
        None => None,
    };
    let day = number(&ten[4..6]);
    let day = if day > 60 { day - 60 } else { day };
    is_date(year, number(&ten[2..4]), day) && year.is_none_or(|year| year <= current_year())
}

/// Whether `start..end` is glued into a longer name by a `-` or `.` with a letter or digit
/// beyond it (`log-850709-9805`, `20240115-1030.tar`).
fn in_name(bytes: &[u8], start: usize, end: usize) -> bool {
    let glue = |joiner: Option<&u8>, beyond: Option<&u8>| {
        matches!(joiner, Some(b'-' | b'.')) && beyond.is_some_and(u8::is_ascii_alphanumeric)
    };
    let before = start.checked_sub(1).and_then(|i| bytes.get(i));
    let before2 = start.checked_sub(2).and_then(|i| bytes.get(i));
    glue(before, before2) || glue(bytes.get(end), bytes.get(end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("850709-9805", valid("850709-9805")),
            ("Personnummer: 19850709-9805.", valid("19850709-9805")),
            ("198507099805", valid("198507099805")),
            ("(850709+9805)", valid("850709+9805")),
            // A coordination number (day 3 + 60), and 29 February of a leap year.
            ("701063-2342", valid("701063-2342")),
            ("20040229-1231", valid("20040229-1231")),
            ("040229-1231", valid("040229-1231")),
            // Ten digits together only after a word that names the number.
            ("personnummer 8507099805", valid("8507099805")),
            ("pnr=8507099805", valid("8507099805")),
            ("8507099805", vec![]),
            ("call 8507099805", vec![]),
            // Failing Luhn: look-alikes with a separator or a name, nothing when bare.
            ("850709-9806", look_alike("850709-9806")),
            ("19850709-9806", look_alike("19850709-9806")),
            ("personnummer 8507099806", look_alike("8507099806")),
            ("198507099806", vec![]),
            // No date: month 13, day 32, day 92, 29 February 2003, a future year, century 21.
            ("851309-9805", vec![]),
            ("850732-9805", vec![]),
            ("850792-9805", vec![]),
            ("20030229-1231", vec![]),
            ("20990709-9805", vec![]),
            ("218507099805", vec![]),
            // Other groupings, inside longer numbers or names.
            ("850709 9805", vec![]),
            ("850709--9805", vec![]),
            ("8507-09-9805", vec![]),
            ("1850709-9805", vec![]),
            ("850709-98051", vec![]),
            ("850709-9805-1", vec![]),
            ("backup-20240115-1036.tar", vec![]),
            ("log-850709-9805", vec![]),
            ("850709-9805.log", vec![]),
            ("x850709-9805", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
