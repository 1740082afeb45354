//! US Social Security numbers: `AAA-GG-SSSS` (or spaced), with the SSA's never-issued ranges
//! refused: area 000, 666 and 900–999, group 00, serial 0000.

/// The regex alternative for SSN candidates.
pub(crate) const PATTERN: &str = r"(?-u:\b)[0-9]{3}[\- ][0-9]{2}[\- ][0-9]{4}(?-u:\b)";

/// The byte length of `candidate` when it is a possible SSN.
pub(crate) fn recognize(candidate: &str) -> Option<usize> {
    let bytes = candidate.as_bytes();
    if bytes.len() != 11 || bytes[3] != bytes[6] {
        return None;
    }
    let area = &candidate[0..3];
    let group = &candidate[4..6];
    let serial = &candidate[7..11];
    let refused =
        area == "000" || area == "666" || area.starts_with('9') || group == "00" || serial == "0000";
    (!refused).then_some(candidate.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ssns() {
        assert_eq!(recognize("123-45-6789"), Some(11));
        assert_eq!(recognize("123 45 6789"), Some(11));
    }

    #[test]
    fn never_issued_ranges() {
        for ssn in ["000-45-6789", "666-45-6789", "900-45-6789", "999-45-6789", "123-00-6789", "123-45-0000"]
        {
            assert_eq!(recognize(ssn), None, "{ssn}");
        }
        assert_eq!(recognize("123-45 6789"), None, "mixed separators");
    }
}
