//! National identification numbers outside Europe: the Brazilian CPF, the Chinese resident id and
//! the Indian Aadhaar number.
//!
//! - CPF: nine digits and two mod-11 check digits, `123.456.789-09`; one in four bare after the
//!   word `CPF`. Look-alikes: wrong check digits, or one digit eleven times.
//! - Resident id: a province's place code, a date of birth, a sequence number and the ISO 7064
//!   MOD 11-2 character (`X` for 10). Look-alikes: a wrong check character.
//! - Aadhaar: twelve digits, the first 2–9, Verhoeff, in groups of four; one in five bare after
//!   the word `Aadhaar` (and always after it when it starts with a Maestro issuer number, as the
//!   recognizer needs). Look-alikes: a wrong check digit.

use policy::RedactionKind;

use super::Planted;
use super::checks_national::{cpf_checks, mod11_2, verhoeff_digit};
use super::rng::Rng;

/// A CPF, valid or failing its checks; `grouped` asks for the canonical form.
pub fn br_cpf(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let (cpf, why) = loop {
        let nine = rng.digits(9);
        let right = cpf_checks(&nine);
        if valid {
            if nine.chars().any(|c| !nine.starts_with(c)) {
                break (format!("{nine}{right}"), "");
            }
        } else if rng.chance(0.1) {
            let digit = rng.digits(1);
            break (digit.repeat(11), " one digit");
        } else {
            let wrong = format!("{:02}", (right.parse::<usize>().unwrap_or(0) + rng.range(1, 99)) % 100);
            break (format!("{nine}{wrong}"), " wrong checks");
        }
    };
    let style = if grouped { 0 } else { *rng.weighted(&[(3, 0), (1, 1), (1, 2)]) };
    let (text, form) = match style {
        0 => (format!("{}.{}.{}-{}", &cpf[..3], &cpf[3..6], &cpf[6..9], &cpf[9..]), "canonical"),
        1 => (cpf.clone(), "bare named"),
        _ => (format!("{}-{}", &cpf[..9], &cpf[9..]), "dashed named"),
    };
    let planted = Planted::new(RedactionKind::BrCpf, valid, text, format!("{form}{why}")).key("cpf");
    if style == 0 { planted } else { planted.around("CPF ", "") }
}

/// A resident id, valid or with a wrong check character; `grouped` asks for the spaced groups.
pub fn cn_resident_id(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let province = *rng.pick(&[11, 12, 13, 31, 32, 33, 35, 37, 41, 42, 44, 45, 50, 51, 53, 61, 62, 65, 81]);
    let (year, month, day) = (rng.range(1940, 2012), rng.range(1, 12), rng.range(1, 28));
    let first = format!(
        "{province}{:02}{:02}{year}{month:02}{day:02}{:03}",
        rng.range(1, 20),
        rng.range(1, 30),
        rng.range(1, 999)
    );
    let right = mod11_2(&first);
    let check = if valid {
        right
    } else {
        let wrong = *rng.pick(&['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'X']);
        if wrong == right { if right == 'X' { '0' } else { 'X' } } else { wrong }
    };
    let id = format!("{first}{check}");
    let spaced = grouped || rng.chance(0.1);
    let text = if spaced { format!("{} {} {}", &id[..6], &id[6..14], &id[14..]) } else { id };
    let form = format!(
        "{}{}{}",
        if spaced { "spaced" } else { "compact" },
        if check == 'X' { " x" } else { "" },
        if valid { "" } else { " wrong check" }
    );
    Planted::new(RedactionKind::CnResidentId, valid, text, form).key("resident_id")
}

/// An Aadhaar number, valid or with a wrong check digit; `grouped` asks for the spaced groups.
pub fn in_aadhaar(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let payload = format!("{}{}", rng.range(2, 9), rng.digits(10));
    let right = verhoeff_digit(&payload);
    let check =
        if valid { right } else { char::from(b'0' + ((right as u8 - b'0' + rng.range(1, 9) as u8) % 10)) };
    let number = format!("{payload}{check}");
    let maestro = ["5018", "5020", "5038", "5893", "6304", "6759", "6761", "6762", "6763"]
        .iter()
        .any(|iin| number.starts_with(iin));
    let style = if grouped { 0 } else { *rng.weighted(&[(3, 0), (1, 1), (1, 2)]) };
    let (text, form) = match style {
        0 => (format!("{} {} {}", &number[..4], &number[4..8], &number[8..]), "spaced"),
        1 => (format!("{}-{}-{}", &number[..4], &number[4..8], &number[8..]), "dashed"),
        _ => (number.clone(), "bare named"),
    };
    let named = style == 2 || maestro;
    let form = format!(
        "{form}{}{}",
        if maestro { " maestro iin" } else { "" },
        if valid { "" } else { " wrong check" }
    );
    let planted = Planted::new(RedactionKind::InAadhaar, valid, text, form).key("aadhaar");
    if named { planted.around("Aadhaar ", "") } else { planted }
}
