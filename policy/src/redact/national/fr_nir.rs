//! The French NIR (numéro d'inscription au répertoire, the "numéro de sécurité sociale") with
//! its two-digit key.
//!
//! Thirteen characters and a key: sex (1 or 2; 3, 4, 7 and 8 are used for people being
//! registered and for provisional numbers, whose key is computed the same way), year (2 digits),
//! month (01–12, or 20–42 and 50–99, the fictitious months given when the civil-status record
//! has no month), département (2 digits, `2A`/`2B` for Corsica, never `00`), commune (3), order
//! number (3), key (2). The key is `97 − (N mod 97)` where `N` is the thirteen characters read as
//! a number after `2A` is replaced by `19` and `2B` by `18`.
//!
//! Written together (`185057800608491`), in the groups of the carte Vitale
//! (`1 85 05 78 006 084 91`), or as thirteen characters and the key (`1850578006084 91`). A NIR
//! of the right shape whose key fails is a look-alike when written in groups or with `2A`/`2B`;
//! fifteen bare digits that fail are left to the other recognizers (a card number, say).

use super::{for_each_unread, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// How a NIR may be written: group lengths and whether they are separated by single spaces.
const LAYOUTS: [(&[usize], bool); 3] = [(&[1, 2, 2, 2, 3, 3, 2], true), (&[15], false), (&[13, 2], true)];

/// Pushes every NIR in `text` (its digit `groups` listed): valid ones, and look-alikes written
/// in groups or with `2A`/`2B`.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    // Digits everywhere, except that the second character of the département may be A or B.
    let allowed =
        |index: usize, byte: u8| byte.is_ascii_digit() || (index == 6 && matches!(byte, b'A' | b'B'));
    for_each_unread(groups, |Group { start, end }| {
        if !matches!(bytes[start], b'1'..=b'4' | b'7' | b'8') {
            return None;
        }
        // The first run of digits tells the layouts worth reading: the sex digit alone (groups),
        // all fifteen or thirteen digits, or six digits up to Corsica's letter.
        let layouts = match end - start {
            1 => &LAYOUTS[..1],
            15 => &LAYOUTS[1..2],
            13 => &LAYOUTS[2..],
            6 if matches!(bytes.get(end), Some(b'A' | b'B')) => &LAYOUTS[1..],
            _ => return None,
        };
        for &(lengths, spaced) in layouts {
            let separator = spaced.then_some(b' ');
            let Some((nir, end)) = read_groups::<15>(bytes, start, lengths, separator, allowed) else {
                continue;
            };
            if !has_shape(&nir) || !standalone(text, start, end, spaced) {
                continue;
            }
            let valid = key_matches(&nir);
            if !valid && !spaced && !nir[6].is_ascii_alphabetic() {
                return None;
            }
            out.push(Finding { start, end, kind: RedactionKind::FrNir, valid });
            return Some(end);
        }
        None
    });
}

/// Sex, month and département are in their ranges (the layout already checked the characters).
fn has_shape(nir: &[u8; 15]) -> bool {
    let two = |i: usize| (nir[i] - b'0') * 10 + (nir[i + 1] - b'0');
    let month = two(3);
    let month_ok = matches!(month, 1..=12 | 20..=42 | 50..=99);
    let department_ok = if nir[6].is_ascii_alphabetic() { nir[5] == b'2' } else { two(5) != 0 };
    matches!(nir[0], b'1'..=b'4' | b'7' | b'8') && month_ok && department_ok
}

/// Whether the last two digits are `97 − (N mod 97)`, Corsica's letters replaced first.
fn key_matches(nir: &[u8; 15]) -> bool {
    let mut body = [0u8; 13];
    body.copy_from_slice(&nir[..13]);
    match body[6] {
        b'A' => body[5..7].copy_from_slice(b"19"),
        b'B' => body[5..7].copy_from_slice(b"18"),
        _ => {}
    }
    let remainder = body.iter().fold(0u32, |acc, &digit| (acc * 10 + u32::from(digit - b'0')) % 97);
    let key = u32::from(nir[13] - b'0') * 10 + u32::from(nir[14] - b'0');
    key == 97 - remainder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key() {
        for nir in
            ["185057800608491", "295109912611193", "255081416802538", "186022A21532523", "285052B00608412"]
        {
            let nir: &[u8; 15] = nir.as_bytes().try_into().expect("15 characters");
            assert!(has_shape(nir) && key_matches(nir), "{}", String::from_utf8_lossy(nir));
        }
        for nir in ["185057800608436", "295109912611199", "186022B21532523"] {
            let nir: &[u8; 15] = nir.as_bytes().try_into().expect("15 characters");
            assert!(!key_matches(nir), "{}", String::from_utf8_lossy(nir));
        }
    }

    #[test]
    fn shape() {
        // (NIR, has the shape)
        for (nir, expected) in [
            ("185057800608491", true),
            ("385057800608491", true),
            ("885057800608491", true),
            ("585057800608491", false),
            ("185007800608491", false),
            ("185137800608491", false),
            ("185207800608491", true),
            ("185437800608491", false),
            ("185507800608491", true),
            ("185050000608491", false),
            ("185052A00608491", true),
            ("185051A00608491", false),
        ] {
            let nir: &[u8; 15] = nir.as_bytes().try_into().expect("15 characters");
            assert_eq!(has_shape(nir), expected, "{}", String::from_utf8_lossy(nir));
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("185057800608491", valid("185057800608491")),
            ("1 85 05 78 006 084 91", valid("1 85 05 78 006 084 91")),
            ("1850578006084 91", valid("1850578006084 91")),
            ("N° SS : 2 95 10 99 126 111 93.", valid("2 95 10 99 126 111 93")),
            ("numéro 255081416802538, merci", valid("255081416802538")),
            ("Corse: 186022A21532523", valid("186022A21532523")),
            ("(1 86 02 2A 215 325 23)", valid("1 86 02 2A 215 325 23")),
            ("2 85 05 2B 006 084 12", valid("2 85 05 2B 006 084 12")),
            ("key 2 85 05 2B 006 084 41", look_alike("2 85 05 2B 006 084 41")),
            // Wrong key: look-alike when grouped or with Corsica's letters, nothing when bare.
            ("1 85 05 78 006 084 36", look_alike("1 85 05 78 006 084 36")),
            ("1850578006084 36", look_alike("1850578006084 36")),
            ("186022A21532524", look_alike("186022A21532524")),
            ("185057800608436", vec![]),
            // Out of shape: sex digit, month, département.
            ("5 85 05 78 006 084 91", vec![]),
            ("1 85 13 78 006 084 91", vec![]),
            ("1 85 05 00 006 084 91", vec![]),
            ("1 85 05 2C 006 084 91", vec![]),
            // Inside longer numbers or words.
            ("1850578006084911", vec![]),
            ("9185057800608491", vec![]),
            ("a185057800608491", vec![]),
            ("185057800608491b", vec![]),
            ("7 1 85 05 78 006 084 91", vec![]),
            ("1 85 05 78 006 084 91 3", vec![]),
            ("1 85 05 78 006 084 913", vec![]),
            ("1-85-05-78-006-084-91", vec![]),
            ("1 85 05 2a 006 084 91", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
