//! Dates of birth inside identification numbers: whether a day exists, and the current year
//! (a birth year after it is not a birth year). Imports nothing.

/// Whether `day` exists in `month` of `year` (the Gregorian calendar); without a year (a
/// two-digit year whose century the number does not say) February has 29 days. Also what the
/// gateway checks an HTML date argument with.
pub fn is_date(year: Option<u32>, month: u32, day: u32) -> bool {
    let leap = year
        .is_none_or(|year| year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// The current year by the system clock (to within a day at New Year: years are counted as
/// 365.2425 days since 1970).
pub(super) fn current_year() -> u32 {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    1970 + u32::try_from(seconds / 31_556_952).unwrap_or(0)
}

/// The number of the ASCII digits `digits`.
pub(super) fn number(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |value, &digit| value * 10 + u32::from(digit - b'0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert!(is_date(Some(2000), 2, 29) && is_date(Some(2024), 2, 29) && is_date(None, 2, 29));
        assert!(!is_date(Some(1900), 2, 29) && !is_date(Some(2023), 2, 29));
        assert!(is_date(Some(1985), 12, 31) && !is_date(Some(1985), 4, 31));
        assert!(!is_date(Some(1985), 0, 1) && !is_date(Some(1985), 13, 1) && !is_date(Some(1985), 1, 0));
        assert!((2025..2200).contains(&current_year()));
        assert_eq!(number(b"0420"), 420);
    }
}
