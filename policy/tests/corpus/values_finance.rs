//! IBANs and payment card numbers, valid and look-alike.
//!
//! IBANs follow the SWIFT IBAN registry's BBAN structure (`8!n10!n` for Germany…) for 38
//! countries, with real-looking bank codes where the BBAN starts with letters, national check
//! digits where they are simple (BE, ES, FR, IT, NO, PT) and the ISO 13616 mod-97 check digits.
//! Look-alikes are typos (one character changed, two swapped) whose mod-97 fails, or an unknown
//! country. Cards cover every major issuer's prefixes and lengths with a Luhn check digit;
//! look-alikes are the same numbers with a wrong check digit.

use policy::RedactionKind;

use super::Planted;
use super::checks::{iban_ok, iban_with_check, luhn_digit, luhn_ok, mod97};
use super::rng::{DIGITS, Rng, UPPER};

/// `(country, weight, BBAN structure)`: `n` digits, `a` upper-case letters, `c` either.
const IBAN_COUNTRIES: &[(&str, u32, &str)] = &[
    ("DE", 12, "8!n10!n"),
    ("FR", 8, "5!n5!n11!c2!n"),
    ("GB", 8, "4!a6!n8!n"),
    ("ES", 6, "4!n4!n1!n1!n10!n"),
    ("IT", 6, "1!a5!n5!n12!c"),
    ("NL", 6, "4!a10!n"),
    ("BE", 4, "3!n7!n2!n"),
    ("AT", 4, "5!n11!n"),
    ("CH", 4, "5!n12!c"),
    ("PL", 3, "8!n16!n"),
    ("PT", 3, "4!n4!n11!n2!n"),
    ("IE", 3, "4!a6!n8!n"),
    ("SE", 2, "3!n16!n1!n"),
    ("DK", 2, "4!n9!n1!n"),
    ("NO", 2, "4!n6!n1!n"),
    ("FI", 2, "6!n7!n1!n"),
    ("LU", 2, "3!n13!c"),
    ("CZ", 2, "4!n6!n10!n"),
    ("SK", 1, "4!n6!n10!n"),
    ("HU", 1, "3!n4!n1!n15!n1!n"),
    ("RO", 1, "4!a16!c"),
    ("BG", 1, "4!a4!n2!n8!c"),
    ("HR", 1, "7!n10!n"),
    ("SI", 1, "5!n8!n2!n"),
    ("GR", 1, "3!n4!n16!c"),
    ("CY", 1, "3!n5!n16!c"),
    ("MT", 1, "4!a5!n18!c"),
    ("LT", 1, "5!n11!n"),
    ("LV", 1, "4!a13!c"),
    ("EE", 1, "2!n2!n11!n1!n"),
    ("IS", 1, "4!n2!n6!n10!n"),
    ("LI", 1, "5!n12!c"),
    ("MC", 1, "5!n5!n11!c2!n"),
    ("BR", 2, "8!n5!n10!n1!a1!c"),
    ("TR", 1, "5!n1!n16!c"),
    ("SA", 1, "2!n18!c"),
    ("AE", 1, "3!n16!n"),
    ("QA", 1, "4!a21!c"),
];

/// Real bank identifiers for BBANs that start with four letters.
fn bank_letters(country: &str, rng: &mut Rng) -> String {
    let banks: &[&str] = match country {
        "GB" => &["NWBK", "BARC", "MIDL", "LOYD", "HBUK", "WEST", "BUKB", "SRLG", "MONZ"],
        "IE" => &["AIBK", "BOFI", "IPBS", "ULSB"],
        "NL" => &["ABNA", "INGB", "RABO", "SNSB", "TRIO", "KNAB", "BUNQ", "ASNB"],
        "RO" => &["RNCB", "BTRL", "INGB", "BRDE", "RZBR"],
        "BG" => &["BNBG", "UNCR", "STSA", "FINV"],
        "MT" => &["MALT", "VALL", "APSB"],
        "LV" => &["HABA", "UNLA", "PARX", "RIKO"],
        "QA" => &["DOHB", "QNBA", "CBQA"],
        _ => &["BANK"],
    };
    (*rng.pick(banks)).to_owned()
}

/// A BBAN for `structure`, national checks left to `national_checks`.
fn bban(rng: &mut Rng, country: &str, structure: &str) -> String {
    let mut out = String::new();
    let mut rest = structure;
    while !rest.is_empty() {
        let bang = rest.find('!').expect("structure has `!`");
        let length: usize = rest[..bang].parse().expect("structure lengths are numbers");
        let class = rest.as_bytes()[bang + 1];
        rest = &rest[bang + 2..];
        match class {
            b'a' if length == 4 && out.is_empty() => out.push_str(&bank_letters(country, rng)),
            b'a' => out.push_str(&rng.string(UPPER, length)),
            b'c' if rng.chance(0.25) => {
                let letters = rng.range(1, 3.min(length));
                out.push_str(&rng.string(UPPER, letters));
                out.push_str(&rng.string(DIGITS, length - letters));
            }
            b'c' | b'n' => out.push_str(&rng.digits(length)),
            _ => unreachable!("unknown BBAN class"),
        }
    }
    national_checks(country, &mut out);
    out
}

/// Fills the national check digits of countries whose schemes are simple and well known.
pub fn national_checks(country: &str, bban: &mut String) {
    let digits_only = bban.bytes().all(|b| b.is_ascii_digit());
    match country {
        // Belgium: the last two digits are the first ten mod 97 (97 for 0).
        "BE" => {
            let value: u64 = bban[..10].parse().expect("digits");
            let check = match value % 97 {
                0 => 97,
                r => r,
            };
            bban.replace_range(10.., &format!("{check:02}"));
        }
        // Spain: two "dígitos de control" over bank+branch and over the account.
        "ES" => {
            let weights = [1u32, 2, 4, 8, 5, 10, 9, 7, 3, 6];
            let dc = |digits: &str| {
                let sum: u32 = digits.bytes().zip(&weights).map(|(b, w)| u32::from(b - b'0') * w).sum();
                match 11 - sum % 11 {
                    11 => 0,
                    10 => 1,
                    d => d,
                }
            };
            let first = dc(&format!("00{}", &bban[..8]));
            let second = dc(&bban[10..20]);
            bban.replace_range(8..10, &format!("{first}{second}"));
        }
        // France and Monaco: the RIB key over bank, branch and a numeric account.
        "FR" | "MC" if digits_only => {
            let bank: u64 = bban[..5].parse().expect("digits");
            let branch: u64 = bban[5..10].parse().expect("digits");
            let account: u64 = bban[10..21].parse().expect("digits");
            let key = 97 - (89 * bank + 15 * branch + 3 * account) % 97;
            bban.replace_range(21.., &format!("{key:02}"));
        }
        // Italy: the CIN letter over ABI, CAB and account.
        "IT" => {
            const ODD: [u32; 26] = [
                1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
            ];
            let sum: u32 = bban[1..]
                .bytes()
                .enumerate()
                .map(|(i, b)| {
                    let index = if b.is_ascii_digit() { u32::from(b - b'0') } else { u32::from(b - b'A') };
                    if i % 2 == 0 { ODD[index as usize] } else { index }
                })
                .sum();
            bban.replace_range(..1, &char::from(b'A' + (sum % 26) as u8).to_string());
        }
        // Norway: MOD 11 over the first ten digits (a remainder of 1 has no check digit).
        "NO" => {
            let weights = [5u32, 4, 3, 2, 7, 6, 5, 4, 3, 2];
            let sum: u32 = bban.bytes().zip(&weights).map(|(b, w)| u32::from(b - b'0') * w).sum();
            let check = match 11 - sum % 11 {
                11 => 0,
                10 => 0,
                d => d,
            };
            bban.replace_range(10.., &check.to_string());
        }
        // Portugal: the NIB check, 98 - (number * 100 mod 97).
        "PT" => {
            let check = 98 - mod97(&format!("{}00", &bban[..19]));
            bban.replace_range(19.., &format!("{check:02}"));
        }
        _ => {}
    }
}

/// Groups of four from the start, as printed on statements.
pub fn group4(compact: &str) -> String {
    let chars: Vec<char> = compact.chars().collect();
    chars.chunks(4).map(|chunk| chunk.iter().collect::<String>()).collect::<Vec<_>>().join(" ")
}

/// An IBAN, valid or a look-alike; `grouped` asks for the printed form.
pub fn iban(rng: &mut Rng, valid: bool, grouped: bool) -> Planted {
    let weighted: Vec<(u32, (&str, &str))> = IBAN_COUNTRIES.iter().map(|(c, w, s)| (*w, (*c, *s))).collect();
    let (country, structure) = *rng.weighted(&weighted);
    let mut compact = iban_with_check(country, &bban(rng, country, structure));
    let mut form = country.to_owned();
    if !valid {
        let how = rng.below(4);
        form.push_str(match how {
            0 => " typo",
            1 => " swapped",
            2 => " wrong check digits",
            _ => " unknown country",
        });
        if how == 3 {
            // A made-up country keeps a passing mod-97: only the country table can reject it.
            let fake = *rng.pick(&["ZZ", "QQ", "UK", "EU", "XA", "OO"]);
            compact = iban_with_check(fake, &compact[4..]);
        }
        if how < 3 {
            loop {
                let mut chars: Vec<u8> = compact.clone().into_bytes();
                if how == 0 {
                    let at = rng.range(4, chars.len() - 1);
                    let alphabet = if chars[at].is_ascii_digit() { DIGITS } else { UPPER };
                    chars[at] = *rng.pick(alphabet);
                } else if how == 1 {
                    let at = rng.range(4, chars.len() - 2);
                    chars.swap(at, at + 1);
                } else {
                    let check = rng.range(2, 98);
                    chars[2..4].copy_from_slice(format!("{check:02}").as_bytes());
                }
                let candidate = String::from_utf8(chars).expect("ASCII");
                if !iban_ok(&candidate) {
                    compact = candidate;
                    break;
                }
            }
        }
    }
    let grouped = grouped || rng.chance(0.5);
    form.push_str(if grouped { " grouped" } else { " compact" });
    let text = if grouped { group4(&compact) } else { compact };
    Planted::new(RedactionKind::Iban, valid, text, form)
}

/// `(issuer, prefix ranges (inclusive, same width), lengths)`.
/// An issuer: name, weight, prefix ranges, lengths.
type Issuer = (&'static str, u32, &'static [(u32, u32)], &'static [usize]);

const ISSUERS: &[Issuer] = &[
    ("visa", 10, &[(4, 4)], &[16, 16, 16, 16, 13, 19]),
    ("mastercard", 8, &[(51, 55)], &[16]),
    ("mastercard 2-series", 4, &[(2221, 2720)], &[16]),
    ("amex", 5, &[(34, 34), (37, 37)], &[15]),
    ("discover", 3, &[(6011, 6011), (644, 649), (65, 65)], &[16, 16, 16, 19]),
    ("jcb", 3, &[(3528, 3589)], &[16, 16, 16, 19]),
    ("diners", 2, &[(300, 305), (36, 36), (38, 39)], &[14]),
    ("unionpay", 3, &[(62, 62)], &[16, 17, 18, 19]),
    (
        "maestro",
        3,
        &[(5018, 5018), (5020, 5020), (5038, 5038), (5893, 5893), (6304, 6304), (6759, 6759), (6761, 6763)],
        &[12, 13, 15, 16, 18, 19],
    ),
];

/// The printed grouping for a card of `length` digits.
fn card_groups(issuer: &str, length: usize) -> &'static [usize] {
    match (issuer, length) {
        ("amex", _) => &[4, 6, 5],
        ("diners", _) => &[4, 6, 4],
        (_, 12) => &[4, 4, 4],
        (_, 13) => &[4, 4, 5],
        (_, 15) => &[4, 4, 4, 3],
        (_, 17) => &[4, 4, 4, 5],
        (_, 18) => &[4, 4, 4, 6],
        (_, 19) => &[4, 4, 4, 4, 3],
        _ => &[4, 4, 4, 4],
    }
}

/// Splits `digits` into `groups` joined by `separator`.
pub fn grouped(digits: &str, groups: &[usize], separator: &str) -> String {
    let mut parts = Vec::new();
    let mut at = 0;
    for &size in groups {
        parts.push(&digits[at..(at + size).min(digits.len())]);
        at += size;
    }
    parts.join(separator)
}

/// A card number, valid (Luhn) or a look-alike (check digit off by 1–9).
pub fn card(rng: &mut Rng, valid: bool, group: bool) -> Planted {
    let weighted: Vec<(u32, usize)> = ISSUERS.iter().enumerate().map(|(i, issuer)| (issuer.1, i)).collect();
    let (issuer, _, ranges, lengths) = ISSUERS[*rng.weighted(&weighted)];
    let (low, high) = *rng.pick(ranges);
    let prefix = (low + rng.below((high - low + 1) as usize) as u32).to_string();
    let length = *rng.pick(lengths);
    let payload = format!("{prefix}{}", rng.digits(length - 1 - prefix.len()));
    let check = luhn_digit(&payload);
    let check = if valid {
        check
    } else {
        let off = rng.range(1, 9) as u8;
        char::from(b'0' + (check as u8 - b'0' + off) % 10)
    };
    let number = format!("{payload}{check}");
    debug_assert_eq!(luhn_ok(&number), valid);
    let style = if group { 0 } else { rng.below(4) };
    let (text, how) = match style {
        0 => (grouped(&number, card_groups(issuer, length), " "), "spaced"),
        1 => (grouped(&number, card_groups(issuer, length), "-"), "dashed"),
        2 if !group => (number.clone(), "compact"),
        _ => (grouped(&number, card_groups(issuer, length), " "), "spaced"),
    };
    let form = format!("{issuer} {length} {how}{}", if valid { "" } else { " bad luhn" });
    Planted::new(RedactionKind::Card, valid, text, form)
}

/// The ASCII letters and digits of `text`, upper-cased (an IBAN or card without separators).
pub fn compact(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect()
}
