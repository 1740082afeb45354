//! The check characters of the national numbers added after the first three, written from their
//! specifications so the corpus does not share code with the recognizers it measures.
//!
//! - the Spanish DNI/NIE letter (n mod 23 into `TRWAGMYFPDXBNJZSQVHLCKE`);
//! - the Italian codice fiscale's check letter (odd and even tables, mod 26);
//! - the Brazilian CPF's two mod-11 digits;
//! - ISO 7064 MOD 11-2 for the Chinese resident id;
//! - Luhn (in `checks`) for the Swedish personnummer;
//! - Verhoeff (dihedral group D5) for the Aadhaar number;
//! - the PESEL's weights 1-3-7-9 and the BSN's eleven-proof.

use policy::RedactionKind;

use super::checks::luhn_ok;

/// Whether `text`, a planted value of one of the kinds above as generated, passes its rule
/// (`None` for the other kinds).
pub fn follows_rule(kind: &RedactionKind, text: &str) -> Option<bool> {
    let upper: String =
        text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let last = |s: &str| s.chars().last().unwrap_or(' ');
    Some(match kind {
        RedactionKind::EsDni => {
            let body = &upper[..upper.len() - 1];
            let number = body.replace('X', "0").replace('Y', "1").replace('Z', "2").parse().unwrap_or(0);
            dni_letter(number) == last(&upper)
        }
        RedactionKind::ItCodiceFiscale => cf_check(&upper[..15]) == last(&upper),
        RedactionKind::BrCpf => cpf_ok(&digits),
        RedactionKind::CnResidentId => mod11_2(&upper[..17]) == last(&upper),
        RedactionKind::SePersonnummer => luhn_ok(&digits[digits.len() - 10..]),
        RedactionKind::InAadhaar => verhoeff_digit(&digits[..11]) == last(&digits),
        RedactionKind::PlPesel => pesel_check(&digits[..10]) == last(&digits),
        RedactionKind::NlBsn => bsn_ok(&digits),
        _ => return None,
    })
}

/// The DNI letter of `number` (a NIE's number with X, Y, Z as 0, 1, 2 in front).
pub fn dni_letter(number: u32) -> char {
    char::from(b"TRWAGMYFPDXBNJZSQVHLCKE"[(number % 23) as usize])
}

/// The codice fiscale's check letter for its first fifteen characters (upper case).
pub fn cf_check(first15: &str) -> char {
    const ODD: [u32; 36] = [
        1, 0, 5, 7, 9, 13, 15, 17, 19, 21, // 0-9
        1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24,
        23, // A-Z
    ];
    let sum: u32 = first15
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let (index, even) = match c {
                '0'..='9' => (c as usize - '0' as usize, c as u32 - '0' as u32),
                _ => (10 + c as usize - 'A' as usize, c as u32 - 'A' as u32),
            };
            if i % 2 == 0 { ODD[index] } else { even }
        })
        .sum();
    char::from(b'A' + (sum % 26) as u8)
}

/// The two CPF check digits for nine digits.
pub fn cpf_checks(nine: &str) -> String {
    let mut digits: Vec<u32> = nine.chars().filter_map(|c| c.to_digit(10)).collect();
    for _ in 0..2 {
        let n = digits.len() as u32;
        let sum: u32 = digits.iter().enumerate().map(|(i, d)| d * (n + 1 - i as u32)).sum();
        digits.push(sum * 10 % 11 % 10);
    }
    format!("{}{}", digits[9], digits[10])
}

/// True when `cpf` (11 digits) is a valid CPF: its checks, not one digit eleven times.
pub fn cpf_ok(cpf: &str) -> bool {
    cpf.len() == 11 && cpf_checks(&cpf[..9]) == cpf[9..] && cpf.chars().any(|c| !cpf.starts_with(c))
}

/// The ISO 7064 MOD 11-2 check character for seventeen digits.
pub fn mod11_2(first17: &str) -> char {
    let sum: u32 = first17
        .chars()
        .rev()
        .enumerate()
        .map(|(i, c)| c.to_digit(10).unwrap_or(0) * ((1u32 << (i + 1)) % 11))
        .sum();
    let check = (12 - sum % 11) % 11;
    if check == 10 { 'X' } else { char::from(b'0' + check as u8) }
}

/// The Verhoeff check digit to append to `payload`.
pub fn verhoeff_digit(payload: &str) -> char {
    let d = |j: u32, k: u32| -> u32 {
        // The dihedral group D5: rotations 0–4 and reflections 5–9.
        match (j < 5, k < 5) {
            (true, true) => (j + k) % 5,
            (true, false) => 5 + (k - 5 + j) % 5,
            (false, true) => 5 + (j - 5 + 5 - k) % 5,
            (false, false) => (j + 10 - k) % 5,
        }
    };
    let p = |position: usize, digit: u32| -> u32 {
        const P1: [u32; 10] = [1, 5, 7, 6, 2, 8, 3, 0, 9, 4];
        (0..position % 8).fold(digit, |value, _| P1[value as usize])
    };
    let c =
        payload.chars().rev().enumerate().fold(0, |c, (i, ch)| d(c, p(i + 1, ch.to_digit(10).unwrap_or(0))));
    let inverse = (0..10).find(|&x| d(c, x) == 0).unwrap_or(0);
    char::from(b'0' + inverse as u8)
}

/// The PESEL check digit for its first ten digits.
pub fn pesel_check(first10: &str) -> char {
    let sum: u32 =
        first10.chars().zip([1, 3, 7, 9].iter().cycle()).map(|(c, w)| c.to_digit(10).unwrap_or(0) * w).sum();
    char::from(b'0' + ((10 - sum % 10) % 10) as u8)
}

/// True when nine digits pass the BSN's eleven-proof and are not all zeros.
pub fn bsn_ok(bsn: &str) -> bool {
    let digits: Vec<i64> = bsn.chars().filter_map(|c| c.to_digit(10)).map(i64::from).collect();
    let sum: i64 = digits.iter().enumerate().map(|(i, d)| if i == 8 { -d } else { d * (9 - i as i64) }).sum();
    digits.len() == 9 && digits.iter().any(|&d| d != 0) && sum % 11 == 0
}
