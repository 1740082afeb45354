//! IBAN recognition: country length table and the ISO 7064 mod-97 check.
//!
//! A candidate is redacted only when its country is known, it has at least that country's
//! length, and the first that-many characters pass mod-97; a candidate that greedily swallowed a
//! following word is cut back to the country's length.

/// The regex alternative for IBAN candidates: country, check digits, groups of four (spaces
/// optional), and a short tail.
pub(crate) const PATTERN: &str =
    r"(?-u:\b)[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?-u:\b)";

/// The byte length of the valid IBAN at the start of `candidate`, if there is one.
pub(crate) fn recognize(candidate: &str) -> Option<usize> {
    let country = candidate.get(..2)?;
    let length = country_length(country)?;
    let mut compact = [0u8; 34];
    let mut taken = 0;
    let mut end = 0;
    for (index, byte) in candidate.bytes().enumerate() {
        if byte == b' ' {
            continue;
        }
        compact[taken] = byte;
        taken += 1;
        if taken == length {
            end = index + 1;
            break;
        }
    }
    if taken < length {
        return None;
    }
    mod97(&compact[..length]).then_some(end)
}

/// ISO 13616 check: move the first four characters to the end, letters become 10..35, the
/// number mod 97 must be 1.
fn mod97(iban: &[u8]) -> bool {
    let rotated = iban[4..].iter().chain(&iban[..4]);
    let mut remainder: u32 = 0;
    for &byte in rotated {
        let value = match byte {
            b'0'..=b'9' => u32::from(byte - b'0'),
            b'A'..=b'Z' => u32::from(byte - b'A') + 10,
            _ => return false,
        };
        remainder = if value >= 10 { (remainder * 100 + value) % 97 } else { (remainder * 10 + value) % 97 };
    }
    remainder == 1
}

/// IBAN lengths per country (SWIFT IBAN registry).
fn country_length(country: &str) -> Option<usize> {
    Some(match country {
        "NO" => 15,
        "BE" => 16,
        "DK" | "FI" | "FO" | "GL" | "NL" => 18,
        "MK" | "SI" => 19,
        "AT" | "BA" | "EE" | "KZ" | "LT" | "LU" | "XK" => 20,
        "CH" | "CR" | "HR" | "LI" | "LV" => 21,
        "BG" | "BH" | "DE" | "GB" | "GE" | "IE" | "ME" | "RS" | "VA" => 22,
        "AE" | "GI" | "IL" | "IQ" | "TL" => 23,
        "AD" | "CZ" | "ES" | "MD" | "PK" | "RO" | "SA" | "SE" | "SK" | "TN" | "VG" => 24,
        "LY" | "PT" | "ST" => 25,
        "IS" | "TR" => 26,
        "FR" | "GR" | "IT" | "MC" | "MR" | "SM" => 27,
        "AL" | "AZ" | "BY" | "CY" | "DO" | "GT" | "HU" | "LB" | "PL" | "SV" => 28,
        "BR" | "EG" | "PS" | "QA" | "UA" => 29,
        "JO" | "KW" | "MU" => 30,
        "MT" | "SC" => 31,
        "LC" => 32,
        "RU" => 33,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ibans() {
        assert_eq!(recognize("DE89370400440532013000"), Some(22));
        assert_eq!(recognize("DE89 3704 0044 0532 0130 00"), Some(27));
        assert_eq!(recognize("GB82 WEST 1234 5698 7654 32"), Some(27));
        assert_eq!(recognize("NO9386011117947"), Some(15));
        // A greedy candidate is cut back to the country's length.
        assert_eq!(recognize("DE89 3704 0044 0532 0130 00AB"), Some(27));
    }

    #[test]
    fn invalid_ibans() {
        assert_eq!(recognize("DE88370400440532013000"), None, "check digits");
        assert_eq!(recognize("DE8937040044053201300"), None, "too short");
        assert_eq!(recognize("ZZ89370400440532013000"), None, "unknown country");
    }
}
