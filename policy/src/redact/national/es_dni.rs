//! The Spanish DNI (documento nacional de identidad) and NIE (número de identidad de
//! extranjero), each with its control letter.
//!
//! A DNI is eight digits and a letter; a NIE is `X`, `Y` or `Z`, seven digits and a letter. The
//! letter is `TRWAGMYFPDXBNJZSQVHLCKE`[n mod 23], where n is the DNI's eight digits, or the NIE's
//! seven digits led by 0 for `X`, 1 for `Y` and 2 for `Z` (Real Decreto 1553/2005, which regulates
//! the DNI, and the Ministerio del Interior's description of the control letter; Orden
//! INT/2058/2008 for the NIE's `Y` and `Z`).
//!
//! Written together (`12345678Z`), with a dash before the letter (`12345678-Z`), with dots
//! between the thousands (`12.345.678-Z`, `12.345.678Z`); the NIE as `X1234567L`, `X-1234567-L`
//! or `X1234567-L`. The DNI's letter may be upper or lower case; the NIE's two letters are both
//! upper or both lower case (`X1234567l` reads like a code identifier). A number of this shape
//! whose letter is another of the 23 is a look-alike; a letter that is never a control letter
//! (`I`, `O`, `U`, `Ñ`) makes no DNI shape. A DNI below ten million is written here with its
//! leading zero (`01234567L`), as the card prints it; seven digits and a letter are not read.

use super::{for_each_unread, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// The control letters, indexed by the number mod 23.
const LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";

/// Pushes every DNI and NIE in `text` (its digit `groups` listed): valid ones, and look-alikes
/// with another control letter.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    for_each_unread(groups, |Group { start, end }| {
        let Shape { start, end, number, letter } = match end - start {
            8 => dni(bytes, start, end),
            2 if bytes.get(end) == Some(&b'.') => dotted(bytes, start),
            7 => nie(bytes, start, end),
            _ => None,
        }?;
        if !standalone(text, start, end, false) {
            return None;
        }
        let valid = LETTERS[(number % 23) as usize] == letter.to_ascii_uppercase();
        out.push(Finding { start, end, kind: RedactionKind::EsDni, valid });
        Some(end)
    });
}

/// A DNI- or NIE-shaped span: where it is, its number and its letter as written.
struct Shape {
    start: usize,
    end: usize,
    number: u32,
    letter: u8,
}

/// Eight digits at `start..end` and their letter.
fn dni(bytes: &[u8], start: usize, end: usize) -> Option<Shape> {
    let (letter, span_end) = control_letter(bytes, end)?;
    Some(Shape { start, end: span_end, number: super::date::number(&bytes[start..end]), letter })
}

/// `12.345.678` from `start`, and its letter.
fn dotted(bytes: &[u8], start: usize) -> Option<Shape> {
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    let (digits, end) = read_groups::<8>(bytes, start, &[2, 3, 3], Some(b'.'), digit)?;
    let (letter, span_end) = control_letter(bytes, end)?;
    Some(Shape { start, end: span_end, number: super::date::number(&digits), letter })
}

/// Seven digits at `start..end` after `X`, `Y` or `Z` (and a dash), and their letter in the
/// same case.
fn nie(bytes: &[u8], start: usize, end: usize) -> Option<Shape> {
    let prefix_at = match start.checked_sub(1).map(|i| bytes[i]) {
        Some(b'-') => start.checked_sub(2)?,
        _ => start.checked_sub(1)?,
    };
    let lead = match bytes[prefix_at].to_ascii_uppercase() {
        b'X' => 0,
        b'Y' => 10_000_000,
        b'Z' => 20_000_000,
        _ => return None,
    };
    let (letter, span_end) = control_letter(bytes, end)?;
    if letter.is_ascii_uppercase() != bytes[prefix_at].is_ascii_uppercase() {
        return None;
    }
    Some(Shape {
        start: prefix_at,
        end: span_end,
        number: lead + super::date::number(&bytes[start..end]),
        letter,
    })
}

/// The control letter at `at` or after a dash there, and the end of the span.
fn control_letter(bytes: &[u8], at: usize) -> Option<(u8, usize)> {
    let at = if bytes.get(at) == Some(&b'-') { at + 1 } else { at };
    let letter = *bytes.get(at)?;
    (letter.is_ascii_alphabetic() && LETTERS.contains(&letter.to_ascii_uppercase()))
        .then_some((letter, at + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters() {
        // n mod 23 for n = 0..22 gives the table in order; 12345678 mod 23 = 14 → Z.
        assert_eq!(LETTERS[12_345_678 % 23], b'Z');
        assert_eq!(LETTERS[0], b'T');
        // NIE: X1234567 → 1234567 mod 23 = 19 → L; Y → 11234567 → X; Z → 21234567 → R.
        assert_eq!(LETTERS[1_234_567 % 23], b'L');
        assert_eq!(LETTERS[11_234_567 % 23], b'X');
        assert_eq!(LETTERS[21_234_567 % 23], b'R');
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("12345678Z", valid("12345678Z")),
            ("DNI: 12345678-Z.", valid("12345678-Z")),
            ("(12.345.678-Z)", valid("12.345.678-Z")),
            ("12.345.678Z,", valid("12.345.678Z")),
            ("dni 12345678z", valid("12345678z")),
            ("00000000T", valid("00000000T")),
            ("NIE X1234567L", valid("X1234567L")),
            ("X-1234567-L", valid("X-1234567-L")),
            ("X1234567-L", valid("X1234567-L")),
            ("y1234567x", valid("y1234567x")),
            ("Z1234567R;", valid("Z1234567R")),
            // Another control letter: a look-alike; a letter that is never one: nothing.
            ("12345678A", look_alike("12345678A")),
            ("12.345.678-A", look_alike("12.345.678-A")),
            ("X1234567A", look_alike("X1234567A")),
            ("12345678I", vec![]),
            ("12345678U", vec![]),
            // Not the shape: lengths, mixed case in a NIE, other separators, inside words.
            ("1234567Z", vec![]),
            ("123456789Z", vec![]),
            ("X1234567l", vec![]),
            ("x1234567L", vec![]),
            ("W1234567L", vec![]),
            ("12345678 Z", vec![]),
            ("12345678--Z", vec![]),
            ("12.345.678.Z", vec![]),
            ("12.3456.78Z", vec![]),
            ("A12345678Z", vec![]),
            ("12345678ZA", vec![]),
            ("12345678Z9", vec![]),
            ("9.12.345.678-Z", vec![]),
            ("12345678-Z-4", vec![]),
            ("AX1234567L", vec![]),
            ("order 12345678 shipped", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
