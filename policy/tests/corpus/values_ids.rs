//! National identifiers: US SSNs, German tax ids, French NIRs and UK National Insurance numbers.
//!
//! - SSN: area 001–899 except 666, group 01–99, serial 0001–9999 (SSA's never-issued ranges are
//!   the look-alikes: area 000/666/9xx, group 00, serial 0000).
//! - Steuer-IdNr: 11 digits, no leading zero, in the first ten exactly one digit twice or three
//!   times (not three in a row), ISO 7064 MOD 11,10 check digit. Look-alikes: a wrong check
//!   digit, or a correct check digit on digits that break the repetition rule.
//! - NIR: sex, year, month, département (2A/2B for Corsica, 97x overseas, 99 abroad), commune,
//!   order, key `97 - n mod 97`. Look-alikes: a wrong key.
//! - NINO: two prefix letters (first not D F I Q U V, second not D F I O Q U V, none of BG GB KN
//!   NK NT TN ZZ), six digits, suffix A–D. Look-alikes: the disallowed prefixes (QQ is HMRC's
//!   own example).

use policy::RedactionKind;

use super::Planted;
use super::checks::{de_tax_digits_ok, mod11_10_digit, nir_key};
use super::rng::{DIGITS, Rng};

/// An SSN, valid or in a never-issued range; `grouped` asks for the spaced spelling.
pub fn ssn(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let mut area = rng.range(1, 899);
    while area == 666 {
        area = rng.range(1, 899);
    }
    let mut group = rng.range(1, 99);
    let mut serial = rng.range(1, 9999);
    let mut form = String::new();
    if !valid {
        match rng.below(5) {
            0 => (area, form) = (0, "area 000".into()),
            1 => (area, form) = (666, "area 666".into()),
            2 => (area, form) = (rng.range(900, 999), "area 9xx".into()),
            3 => (group, form) = (0, "group 00".into()),
            _ => (serial, form) = (0, "serial 0000".into()),
        }
    }
    let dashed = !grouped && rng.chance(0.7);
    let separator = if dashed { "-" } else { " " };
    let text = format!("{area:03}{separator}{group:02}{separator}{serial:04}");
    let form = format!(
        "{}{}",
        if dashed { "dashed" } else { "spaced" },
        if valid { String::new() } else { format!(" {form}") }
    );
    Planted::new(RedactionKind::Ssn, valid, text, form)
}

/// Ten digits that satisfy the IdNr repetition rule.
fn de_tax_first10(rng: &mut Rng) -> String {
    loop {
        let mut pool: Vec<u8> = DIGITS.to_vec();
        rng.shuffle(&mut pool);
        let repeated = pool[0];
        let times = if rng.chance(0.3) { 3 } else { 2 };
        let mut digits: Vec<u8> = vec![repeated; times];
        digits.extend_from_slice(&pool[1..=10 - times]);
        rng.shuffle(&mut digits);
        let text = String::from_utf8(digits).expect("digits");
        if de_tax_digits_ok(&text) {
            return text;
        }
    }
}

/// A German tax id, valid or a look-alike.
pub fn de_tax_id(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let (id, mut form) = if valid {
        let first = de_tax_first10(rng);
        let check = mod11_10_digit(&first);
        (format!("{first}{check}"), String::new())
    } else if rng.chance(0.6) {
        let first = de_tax_first10(rng);
        let check = mod11_10_digit(&first);
        let wrong = char::from(b'0' + (check as u8 - b'0' + rng.range(1, 9) as u8) % 10);
        (format!("{first}{wrong}"), String::from("wrong check digit"))
    } else {
        // Ten different digits (or two doubled ones): the right check digit, the wrong shape.
        let mut digits: Vec<u8> = DIGITS.to_vec();
        rng.shuffle(&mut digits);
        if rng.chance(0.5) {
            digits[8] = digits[1];
            digits[9] = digits[2];
        }
        if digits[0] == b'0' {
            digits.swap(0, 5);
        }
        let first = String::from_utf8(digits).expect("digits");
        debug_assert!(!de_tax_digits_ok(&first));
        let check = mod11_10_digit(&first);
        (format!("{first}{check}"), String::from("repetition rule broken"))
    };
    let spaced = grouped || rng.chance(0.5);
    let text = if spaced { format!("{} {} {} {}", &id[..2], &id[2..5], &id[5..8], &id[8..]) } else { id };
    form.insert_str(0, if spaced { "spaced " } else { "compact " });
    let form = form.trim_end().to_owned();
    Planted::new(RedactionKind::DeTaxId, valid, text, form).key("steuer_id")
}

/// A NIR, valid or with a wrong key.
pub fn fr_nir(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let sex = if rng.chance(0.5) { 1 } else { 2 };
    let year = rng.below(100);
    let month = if rng.chance(0.03) { 20 } else { rng.range(1, 12) };
    let (place, origin) = match rng.below(20) {
        0 => (format!("{}{:03}", if rng.chance(0.5) { "2A" } else { "2B" }, rng.range(1, 366)), "corsica"),
        1 => (format!("97{}{:02}", rng.range(1, 6), rng.range(1, 34)), "overseas"),
        2 => (format!("99{:03}", rng.range(100, 499)), "abroad"),
        _ => {
            let mut department = rng.range(1, 95);
            while department == 20 {
                department = rng.range(1, 95);
            }
            (format!("{department:02}{:03}", rng.range(1, 909)), "metropole")
        }
    };
    let order = rng.range(1, 999);
    let first = format!("{sex}{year:02}{month:02}{place}{order:03}");
    let key = nir_key(&first);
    let key = if valid { key } else { (key + rng.range(1, 96) as u32 - 1) % 97 + 1 };
    let key = if !valid && key == nir_key(&first) { key % 97 + 1 } else { key };
    let nir = format!("{first}{key:02}");
    let spaced = grouped || rng.chance(0.5);
    let text = if spaced {
        format!(
            "{} {} {} {} {} {} {}",
            &nir[..1],
            &nir[1..3],
            &nir[3..5],
            &nir[5..7],
            &nir[7..10],
            &nir[10..13],
            &nir[13..]
        )
    } else {
        nir
    };
    let form = format!(
        "{origin} {}{}",
        if spaced { "spaced" } else { "compact" },
        if valid { "" } else { " wrong key" }
    );
    Planted::new(RedactionKind::FrNir, valid, text, form).key("numero_securite_sociale")
}

/// True when `prefix` is an allocated NINO prefix.
pub fn nino_prefix_ok(prefix: &str) -> bool {
    let bytes = prefix.as_bytes();
    bytes.len() == 2
        && bytes.iter().all(u8::is_ascii_uppercase)
        && !b"DFIQUV".contains(&bytes[0])
        && !b"DFIOQUV".contains(&bytes[1])
        && !["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"].contains(&prefix)
}

/// A NINO, valid or with a prefix HMRC never allocates.
pub fn uk_nino(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let prefix = loop {
        let prefix = if valid || rng.chance(0.4) {
            rng.string(super::rng::UPPER, 2)
        } else {
            (*rng.pick(&["QQ", "BG", "GB", "KN", "NK", "NT", "TN", "ZZ", "DA", "FE", "AO", "VK", "UC", "IO"]))
                .to_owned()
        };
        if nino_prefix_ok(&prefix) == valid {
            break prefix;
        }
    };
    let digits = rng.digits(6);
    let suffix = *rng.pick(&['A', 'B', 'C', 'D']);
    let spaced = grouped || rng.chance(0.5);
    let text = if spaced {
        format!("{prefix} {} {} {} {suffix}", &digits[..2], &digits[2..4], &digits[4..])
    } else {
        format!("{prefix}{digits}{suffix}")
    };
    let form =
        format!("{}{}", if spaced { "spaced" } else { "compact" }, if valid { "" } else { " bad prefix" });
    Planted::new(RedactionKind::UkNino, valid, text, form).key("ni_number")
}
