//! The Polish PESEL (Powszechny Elektroniczny System Ewidencji Ludności) number, read only after
//! a word that names it.
//!
//! Eleven digits (the Act of 24 September 2010 on population records, and the Ministry of
//! Digital Affairs' description of the number): the date of birth as `YYMMDD`, whose month
//! carries the century (plus 80 for the 1800s, 0 for the 1900s, 20 for the 2000s, 40 for the
//! 2100s, 60 for the 2200s), a serial number of four digits whose last gives the sex, and a
//! check digit: `(10 − Σ dᵢ × wᵢ mod 10) mod 10` with the weights 1, 3, 7, 9, 1, 3, 7, 9, 1, 3.
//!
//! Eleven digits together with a date in them are everywhere (order numbers, timestamps, phone
//! numbers, German tax ids), so a PESEL is read only after the word `PESEL`. One there whose date
//! or check digit fails is a look-alike.

use super::date::{current_year, is_date, number};
use super::{for_each_unread, named_before, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Words that name a PESEL.
pub(super) const WORDS: &[&str] = &["pesel"];

/// Pushes every PESEL in `text` that a word names (its digit `groups` listed): valid ones, and
/// look-alikes.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    for_each_unread(groups, |Group { start, end }| {
        if end - start != 11 {
            return None;
        }
        let (pesel, end) = read_groups::<11>(text.as_bytes(), start, &[11], None, digit)?;
        if !standalone(text, start, end, false) || !named_before(text, start, WORDS) {
            return None;
        }
        out.push(Finding { start, end, kind: RedactionKind::PlPesel, valid: is_valid(&pesel) });
        Some(end)
    });
}

/// Whether the eleven ASCII digits hold a date of birth up to this year and their check digit.
fn is_valid(pesel: &[u8; 11]) -> bool {
    let coded_month = number(&pesel[2..4]);
    let (century, month) = match coded_month {
        81..=92 => (1800, coded_month - 80),
        1..=12 => (1900, coded_month),
        21..=32 => (2000, coded_month - 20),
        41..=52 => (2100, coded_month - 40),
        61..=72 => (2200, coded_month - 60),
        _ => return false,
    };
    let year = century + number(&pesel[..2]);
    let weighted: u32 =
        pesel[..10].iter().zip([1, 3, 7, 9, 1, 3, 7, 9, 1, 3]).map(|(&d, w)| u32::from(d - b'0') * w).sum();
    let check = (10 - weighted % 10) % 10;
    is_date(Some(year), month, number(&pesel[4..6]))
        && year <= current_year()
        && check == u32::from(pesel[10] - b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validator() {
        // 1985-12-31, 2002-02-10, 2002-12-15, 1990-02-29 is no date.
        for pesel in ["85123104567", "02221001231", "02321507891"] {
            assert!(is_valid(pesel.as_bytes().try_into().expect("11")), "{pesel}");
        }
        for (pesel, why) in [
            ("85123104568", "check digit"),
            ("90022912344", "29 February 1990"),
            ("85133104567", "month 13"),
            ("85413104567", "the 2100s are to come"),
        ] {
            assert!(!is_valid(pesel.as_bytes().try_into().expect("11")), "{pesel}: {why}");
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("PESEL: 85123104567", valid("85123104567")),
            ("nr PESEL 02221001231.", valid("02221001231")),
            ("pesel=02321507891,", valid("02321507891")),
            ("PESEL 85123104568", look_alike("85123104568")),
            // Without the word, or inside longer numbers: nothing.
            ("85123104567", vec![]),
            ("order 02221001231", vec![]),
            ("PESEL 851231045671", vec![]),
            ("PESEL 8512310456", vec![]),
            ("PESEL 85123104567x", vec![]),
            ("PESEL +85123104567", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
