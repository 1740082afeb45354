//! European national identification numbers beyond the first three: the Spanish DNI and NIE,
//! the Italian codice fiscale, the Swedish personnummer, the Polish PESEL and the Dutch BSN.
//!
//! - DNI/NIE: eight digits (or X/Y/Z and seven) and the letter n mod 23. Look-alikes: another
//!   control letter.
//! - Codice fiscale: surname and name letters, year, month letter, day (+40 for women), cadastral
//!   code (A–M or Z), check letter; one in ten with omocodia (digits replaced from the right).
//!   Look-alikes: a wrong check letter.
//! - Personnummer: `YYMMDD-NNNN` (a coordination number adds 60 to the day), Luhn. Look-alikes:
//!   a wrong check digit, with a separator or after the word.
//! - PESEL and BSN: always after their word (`PESEL `, `BSN `), as the recognizer needs.
//!   Look-alikes: a wrong check digit, an eleven-proof that fails.

use policy::RedactionKind;

use super::Planted;
use super::checks::luhn_digit;
use super::checks_national::{bsn_ok, cf_check, dni_letter, pesel_check};
use super::rng::Rng;

/// A day of birth from 1935 to 2012 (every month's first 28 days): year, month, day.
fn birthday(rng: &mut Rng) -> (usize, usize, usize) {
    (rng.range(1935, 2012), rng.range(1, 12), rng.range(1, 28))
}

/// A digit other than `digit`.
fn other_digit(rng: &mut Rng, digit: char) -> char {
    let value = digit.to_digit(10).unwrap_or(0) as usize;
    char::from(b'0' + ((value + rng.range(1, 9)) % 10) as u8)
}

/// A DNI or NIE, valid or with another control letter; `grouped` asks for a spelling with a dash.
pub fn es_dni(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let nie = rng.chance(0.25);
    let (lead, digits) = if nie { (rng.below(3), rng.digits(7)) } else { (0, rng.digits(8)) };
    let number: u32 = format!("{lead}{digits}").parse().unwrap_or(0);
    let right = dni_letter(number);
    // n + k mod 23 differs from n mod 23 for k in 1..=22.
    let letter = if valid { right } else { dni_letter(number + rng.range(1, 22) as u32) };
    let style = if grouped { 1 + rng.below(2) } else { rng.below(3) };
    let (text, form) = if nie {
        let prefix = ['X', 'Y', 'Z'][lead];
        match style {
            0 => (format!("{prefix}{digits}{letter}"), "nie compact"),
            _ => (format!("{prefix}-{digits}-{letter}"), "nie dashed"),
        }
    } else {
        match style {
            0 => (format!("{digits}{letter}"), "dni compact"),
            1 => (format!("{digits}-{letter}"), "dni dashed"),
            _ => (format!("{}.{}.{}-{letter}", &digits[..2], &digits[2..5], &digits[5..]), "dni dotted"),
        }
    };
    let lower = !nie && style == 0 && rng.chance(0.15);
    let text = if lower { text.to_lowercase() } else { text };
    let form =
        format!("{form}{}{}", if lower { " lower" } else { "" }, if valid { "" } else { " wrong letter" });
    Planted::new(RedactionKind::EsDni, valid, text, form).key(if nie { "nie" } else { "dni" })
}

/// A codice fiscale, valid or with a wrong check letter.
pub fn it_codice_fiscale(rng: &mut Rng, valid: bool, _grouped: bool) -> Planted {
    let consonants = b"BCDFGLMNPRSTVZ";
    let (year, month, day) = birthday(rng);
    let day = if rng.chance(0.5) { day + 40 } else { day };
    let place = if rng.chance(0.15) {
        format!("Z{}", rng.range(100, 399))
    } else {
        format!("{}{:03}", char::from(b'A' + rng.below(13) as u8), rng.range(1, 999))
    };
    let mut code: Vec<u8> = format!(
        "{}{:02}{}{day:02}{place}",
        rng.string(consonants, 6),
        year % 100,
        char::from(b"ABCDEHLMPRST"[month - 1])
    )
    .into_bytes();
    // Omocodia: the last digits replaced by letters, from the rightmost leftwards.
    let omocodia = if rng.chance(0.1) { rng.range(1, 6) } else { 0 };
    for &at in [14, 13, 12, 10, 9, 7].iter().take(omocodia) {
        code[at] = b"LMNPQRSTUV"[usize::from(code[at] - b'0')];
    }
    let first = String::from_utf8(code).expect("ASCII");
    let right = cf_check(&first);
    let check =
        if valid { right } else { char::from(b'A' + ((right as u8 - b'A' + rng.range(1, 25) as u8) % 26)) };
    let lower = rng.chance(0.1);
    let text = format!("{first}{check}");
    let text = if lower { text.to_lowercase() } else { text };
    let form = format!(
        "{}{}{}",
        if omocodia > 0 { "omocodia" } else { "plain" },
        if lower { " lower" } else { "" },
        if valid { "" } else { " wrong check" }
    );
    Planted::new(RedactionKind::ItCodiceFiscale, valid, text, form).key("codice_fiscale")
}

/// A personnummer, valid or with a wrong check digit; `grouped` asks for a spelling with a dash.
pub fn se_personnummer(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let (year, month, day) = birthday(rng);
    let coordination = rng.chance(0.1);
    let day = if coordination { day + 60 } else { day };
    let nine = format!("{:02}{month:02}{day:02}{:03}", year % 100, rng.below(1000));
    let right = luhn_digit(&nine);
    let check = if valid { right } else { other_digit(rng, right) };
    let (yymmdd, rest) = nine.split_at(6);
    let century = year / 100;
    let style = if grouped { rng.below(2) } else { rng.below(4) };
    let (text, form, named) = match style {
        0 => (format!("{yymmdd}-{rest}{check}"), "short dashed", false),
        1 => (format!("{century}{yymmdd}-{rest}{check}"), "long dashed", false),
        2 => (format!("{century}{yymmdd}{rest}{check}"), "long compact", false),
        _ => (format!("{yymmdd}{rest}{check}"), "short compact named", true),
    };
    let form = format!(
        "{form}{}{}",
        if coordination { " samordningsnummer" } else { "" },
        if valid { "" } else { " wrong check" }
    );
    let planted = Planted::new(RedactionKind::SePersonnummer, valid, text, form).key("personnummer");
    if named { planted.around("personnummer ", "") } else { planted }
}

/// A PESEL after its word, valid or with a wrong check digit.
pub fn pl_pesel(rng: &mut Rng, valid: bool, _grouped: bool) -> Planted {
    let (year, month, day) = birthday(rng);
    let coded_month = if year >= 2000 { month + 20 } else { month };
    let ten = format!("{:02}{coded_month:02}{day:02}{}", year % 100, rng.digits(4));
    let right = pesel_check(&ten);
    let check = if valid { right } else { other_digit(rng, right) };
    let form = if valid { "named" } else { "named wrong check" };
    Planted::new(RedactionKind::PlPesel, valid, format!("{ten}{check}"), form)
        .key("pesel")
        .around("PESEL ", "")
}

/// A BSN after its word, valid or failing the eleven-proof; `grouped` asks for the dotted form.
pub fn nl_bsn(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let bsn = loop {
        let candidate = format!("{}{}", rng.range(1, 9), rng.digits(8));
        if bsn_ok(&candidate) == valid {
            break candidate;
        }
    };
    let dotted = grouped || rng.chance(0.2);
    let text = if dotted { format!("{}.{}.{}", &bsn[..4], &bsn[4..6], &bsn[6..]) } else { bsn };
    let form =
        format!("{}{}", if dotted { "dotted" } else { "compact" }, if valid { "" } else { " fails proof" });
    Planted::new(RedactionKind::NlBsn, valid, text, form).key("bsn").around("BSN ", "")
}
