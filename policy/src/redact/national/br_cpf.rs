//! The Brazilian CPF (Cadastro de Pessoas Físicas) with its two check digits.
//!
//! Eleven digits: nine, then two check digits by mod 11 (Receita Federal's rule): the first is
//! `10 × Σ dᵢ × (10 − i)` over the nine digits, mod 11, and the second the same over the ten
//! digits with weights 11 down to 2, a remainder of 10 counting as 0. The eleven equal digits
//! (`111.111.111-11`) pass that sum and are never issued.
//!
//! Written `123.456.789-09` (its canonical form, read anywhere), or as eleven digits together or
//! `123456789-09` only after a word that names it (`CPF`, `cadastro de pessoas físicas`): bare,
//! eleven digits are as often a German tax id or a phone number. A canonical-form number that
//! fails its checks is a look-alike (`000.000.000-00` in a form's placeholder stays); so is one
//! that a word names; bare digits without the word are left alone.

use super::{for_each_unread, named_before, read_groups, standalone};
use crate::redact::RedactionKind;
use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// Words that name a CPF.
pub(super) const WORDS: &[&str] = &["cpf", "cadastro de pessoa"];

/// Pushes every CPF in `text` (its digit `groups` listed): valid ones, and look-alikes in the
/// canonical form or after a word that names a CPF.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    for_each_unread(groups, |Group { start, end }| {
        if !matches!(end - start, 3 | 9 | 11) {
            return None;
        }
        let (cpf, end, canonical) = read(text.as_bytes(), start, end)?;
        if !standalone(text, start, end, false) || !(canonical || named_before(text, start, WORDS)) {
            return None;
        }
        out.push(Finding { start, end, kind: RedactionKind::BrCpf, valid: is_valid(&cpf) });
        Some(end)
    });
}

/// The eleven digits of a CPF-shaped number whose first digit group is `start..end`, the end of
/// the number, and whether it is in the canonical form.
fn read(bytes: &[u8], start: usize, end: usize) -> Option<([u8; 11], usize, bool)> {
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    let ((first, nine_end), canonical) = match (end - start, bytes.get(end)) {
        (3, Some(b'.')) => (read_groups::<9>(bytes, start, &[3, 3, 3], Some(b'.'), digit)?, true),
        (9, Some(b'-')) => (read_groups::<9>(bytes, start, &[9], None, digit)?, false),
        (11, _) => {
            let (cpf, end) = read_groups::<11>(bytes, start, &[11], None, digit)?;
            return Some((cpf, end, false));
        }
        _ => return None,
    };
    if bytes.get(nine_end) != Some(&b'-') {
        return None;
    }
    let (check, end) = read_groups::<2>(bytes, nine_end + 1, &[2], None, digit)?;
    let mut cpf = [0u8; 11];
    cpf[..9].copy_from_slice(&first);
    cpf[9..].copy_from_slice(&check);
    Some((cpf, end, canonical))
}

/// Whether the eleven ASCII digits pass both checks and are not all one digit.
fn is_valid(cpf: &[u8; 11]) -> bool {
    let values = cpf.map(|digit| u32::from(digit - b'0'));
    let check = |count: usize| {
        let sum: u32 = values[..count].iter().zip((2..=count as u32 + 1).rev()).map(|(v, w)| v * w).sum();
        (sum * 10 % 11) % 10
    };
    values.iter().any(|&v| v != values[0]) && check(9) == values[9] && check(10) == values[10]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        for cpf in ["12345678909", "11144477735", "39053344705", "04876219303", "98765432100"] {
            assert!(is_valid(cpf.as_bytes().try_into().expect("11")), "{cpf}");
        }
        for cpf in ["12345678900", "12345678919", "11111111111", "00000000000", "99999999999"] {
            assert!(!is_valid(cpf.as_bytes().try_into().expect("11")), "{cpf}");
        }
    }

    #[test]
    fn finds_in_text() {
        use super::super::tests::{assert_finds, look_alike, valid};
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("123.456.789-09", valid("123.456.789-09")),
            ("Cliente 390.533.447-05, ok", valid("390.533.447-05")),
            ("(048.762.193-03)", valid("048.762.193-03")),
            // Bare forms only after a word that names a CPF.
            ("CPF: 11144477735", valid("11144477735")),
            ("cpf 111444777-35.", valid("111444777-35")),
            ("customerCpf=98765432100", valid("98765432100")),
            ("número do CPF do titular 39053344705", valid("39053344705")),
            ("order 11144477735", vec![]),
            ("ref 111444777-35", vec![]),
            ("tcpf 11144477735", vec![]),
            // Failing checks: look-alikes in the canonical form or when named, else nothing.
            ("123.456.789-00", look_alike("123.456.789-00")),
            ("000.000.000-00", look_alike("000.000.000-00")),
            ("111.111.111-11", look_alike("111.111.111-11")),
            ("CPF 12345678900", look_alike("12345678900")),
            ("12345678900", vec![]),
            // Other groupings and neighbours.
            ("123.456.789.09", vec![]),
            ("123.456.78909", vec![]),
            ("1234.456.789-09", vec![]),
            ("123.456.789-091", vec![]),
            ("9.123.456.789-09", vec![]),
            ("123.456.789-09x", vec![]),
            ("x123.456.789-09", vec![]),
            ("123.456.789-09-1", vec![]),
            ("CPF 123456789-091", vec![]),
        ];
        assert_finds(find, &cases);
    }
}
