//! The Dutch BSN (burgerservicenummer, formerly the sofinummer), read only after a word that
//! names it.
//!
//! Nine digits, a leading zero included, that pass the "elfproef" of the Wet algemene
//! bepalingen burgerservicenummer's technical rules: `9·d₁ + 8·d₂ + … + 2·d₈ − d₉` is a multiple
//! of 11 (and not all zeros, the default of empty fields).
//!
//! Nine digits are as often an order number or a phone number, and one in eleven passes the
//! proof by chance, so a BSN is read only after the words `BSN`, `burgerservicenummer`,
//! `sofinummer` or `citizen service number`: written together (`123456782`) or as the passport
//! prints its personal number (`1234.56.782`). One there that fails the proof is a look-alike.

use super::{for_each_unread, named_before, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Words that name a BSN.
const WORDS: &[&str] = &[
    "bsn",
    "burgerservicenummer",
    "burger service nummer",
    "sofinummer",
    "sofi-nummer",
    "sofi nummer",
    "citizen service number",
];

/// Pushes every BSN in `text` that a word names (its digit `groups` listed): valid ones, and
/// look-alikes.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    for_each_unread(groups, |Group { start, end }| {
        let (bsn, end) = match (end - start, bytes.get(end)) {
            (9, _) => read_groups::<9>(bytes, start, &[9], None, digit),
            (4, Some(b'.')) => read_groups::<9>(bytes, start, &[4, 2, 3], Some(b'.'), digit),
            _ => None,
        }?;
        if !standalone(text, start, end, false) || !named_before(text, start, WORDS) {
            return None;
        }
        out.push(Finding { start, end, kind: RedactionKind::NlBsn, valid: passes_elfproef(&bsn) });
        Some(end)
    });
}

/// The eleven-proof over nine ASCII digits, all zeros refused.
fn passes_elfproef(bsn: &[u8; 9]) -> bool {
    let values = bsn.map(|digit| i32::from(digit - b'0'));
    let sum: i32 = values[..8].iter().zip((2..=9).rev()).map(|(v, w)| v * w).sum::<i32>() - values[8];
    values.iter().any(|&value| value != 0) && sum % 11 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elfproef() {
        for bsn in ["123456782", "111222333", "234567892", "987654329", "100000009", "314159265"] {
            assert!(passes_elfproef(bsn.as_bytes().try_into().expect("9")), "{bsn}");
        }
        for bsn in ["123456789", "111222334", "000000000"] {
            assert!(!passes_elfproef(bsn.as_bytes().try_into().expect("9")), "{bsn}");
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("BSN: 123456782", valid("123456782")),
            ("burgerservicenummer 1234.56.782.", valid("1234.56.782")),
            ("Sofinummer 314159265", valid("314159265")),
            ("patient_bsn=987654329", valid("987654329")),
            ("BSN 123456789", look_alike("123456789")),
            // Without the word, in other groupings, or inside longer numbers: nothing.
            ("123456782", vec![]),
            ("order 1234.56.782", vec![]),
            ("BSN 123 456 782", vec![]),
            ("BSN 12345678", vec![]),
            ("BSN 1234567821", vec![]),
            ("BSN 1234.56.7821", vec![]),
            ("BSN 9.1234.56.782", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
