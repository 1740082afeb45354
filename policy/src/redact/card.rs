//! Payment card numbers: 12–19 digits with a known issuer prefix for that length, passing Luhn.
//!
//! A run of digit groups (joined by single spaces or dashes) is tried whole, then as shorter runs
//! of whole groups. A number written the way cards are (`4111 1111 1111 1112`, `3782 822463 10006`,
//! or 13–19 digits in one piece with an issuer prefix) that fails Luhn is a look-alike: left whole,
//! and never re-read in pieces as a phone number.

use super::digits::{Group, digits_of};
use super::finding::Finding;
use super::kind::RedactionKind;

/// Reports every card number in `text`.
#[cfg(test)]
pub(crate) fn find(text: &str, out: &mut Vec<Finding>) {
    use super::digits::{CARD_AND_SSN_SEPARATORS, for_each_joined, groups};
    for_each_joined(text, &groups(text), CARD_AND_SSN_SEPARATORS, |run| in_run(text, run, out));
}

/// The most digits a card number has (ISO/IEC 7812).
const MAX_DIGITS: usize = 19;

/// Reports the card numbers in one run of digit groups (see `digits::for_each_joined`).
pub(crate) fn in_run(text: &str, run: &[Group], out: &mut Vec<Finding>) {
    if run.iter().map(|g| g.len()).sum::<usize>() >= 12 {
        scan_run(text, run, out);
    }
}

/// From each group on, the longest valid number of whole groups; failing that, the longest
/// card-shaped look-alike.
fn scan_run(text: &str, run: &[Group], out: &mut Vec<Finding>) {
    let mut first = 0;
    while first < run.len() {
        // No card has more than 19 digits: the spans from `first` end at most where its groups
        // reach 19, so a long run of numbers costs its length times a few spans, not its cube.
        let mut reach = first;
        let mut digits = run[first].len();
        while reach + 1 < run.len() && digits + run[reach + 1].len() <= MAX_DIGITS {
            reach += 1;
            digits += run[reach].len();
        }
        let spans = || (first..=reach).rev().map(|last| (last, run[first].start, run[last].end));
        // Cutting groups off the end is for a card followed by a stray number
        // (`4111 1111 1111 1111 123`): the card left must be a full one of 15 or more digits,
        // or the first groups of a longer look-alike would be read as a short Maestro number.
        let whole_end = run[run.len() - 1].end;
        let valid = spans().find(|&(_, start, end)| {
            let digits = digits_of(text, start, end);
            let long_enough = end == whole_end || digits.len() >= 15;
            (12..=19).contains(&digits.len()) && long_enough && issuer_accepts(&digits) && luhn(&digits)
        });
        let found = valid
            .map(|(last, start, end)| (last, Finding::valid(start, end, RedactionKind::Card)))
            .or_else(|| {
                spans()
                    .find(|&(last, start, end)| card_shaped(&run[first..=last], &digits_of(text, start, end)))
                    .map(|(last, start, end)| (last, Finding::look_alike(start, end, RedactionKind::Card)))
            });
        match found {
            Some((last, finding)) => {
                out.push(finding);
                first = last + 1;
            }
            None => first += 1,
        }
    }
}

/// Written as cards are: 4-4-4-4 (with a last group of 1–3 for 17–19 digits), Amex 4-6-5, Diners
/// 4-6-4, one piece of 13–19 digits with an issuer prefix for that length, or 13–19 digits in three or more
/// groups led by a 4-digit group with an issuer prefix. Eighteen digits in one piece that are a
/// Chinese resident id (its province, date of birth and check character) are that id, not a
/// card's look-alike: provinces 41–46, 50 and 61–65 share their first digits with card issuers.
fn card_shaped(groups: &[Group], digits: &[u8]) -> bool {
    let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    match lengths.as_slice() {
        [4, 4, 4, 4] | [4, 6, 5] | [4, 6, 4] => true,
        [4, 4, 4, 4, tail] => (1..=3).contains(tail),
        [single] => {
            (13..=19).contains(single)
                && issuer_accepts(digits)
                && !super::national::is_cn_resident_id(digits)
        }
        // Other groupings of a 13–19 digit number that starts with a 4-digit issuer group.
        [4, rest @ ..] if rest.len() >= 2 => {
            (13..=19).contains(&digits.len()) && issuer_accepts_prefix(digits)
        }
        _ => false,
    }
}

/// Luhn over the digits (values 0–9, check digit last).
pub(crate) fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(position, &digit)| {
            let digit = u32::from(digit);
            if position % 2 == 1 { if digit * 2 > 9 { digit * 2 - 9 } else { digit * 2 } } else { digit }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The number of the first `count` digits.
fn prefix(digits: &[u8], count: usize) -> u32 {
    digits.iter().take(count).fold(0, |number, &digit| number * 10 + u32::from(digit))
}

/// Whether a known issuer uses this prefix, whatever the length.
fn issuer_accepts_prefix(digits: &[u8]) -> bool {
    ISSUERS.iter().any(|issuer| issuer.matches(digits))
}

/// Whether a known issuer uses this prefix at this length.
fn issuer_accepts(digits: &[u8]) -> bool {
    ISSUERS.iter().any(|issuer| issuer.matches(digits) && issuer.lengths.contains(&digits.len()))
}

/// An issuer's prefix range (inclusive, over the first `width` digits) and card lengths.
struct Issuer {
    width: usize,
    low: u32,
    high: u32,
    lengths: std::ops::RangeInclusive<usize>,
}

impl Issuer {
    fn matches(&self, digits: &[u8]) -> bool {
        digits.len() >= self.width && (self.low..=self.high).contains(&prefix(digits, self.width))
    }
}

const fn issuer(width: usize, low: u32, high: u32, lengths: std::ops::RangeInclusive<usize>) -> Issuer {
    Issuer { width, low, high, lengths }
}

/// Issuer identification number ranges (ISO/IEC 7812 as the networks publish them).
const ISSUERS: [Issuer; 16] = [
    issuer(1, 4, 4, 13..=19),       // Visa (13, 16, 19; Electron and others in between)
    issuer(2, 51, 55, 16..=16),     // Mastercard
    issuer(4, 2221, 2720, 16..=16), // Mastercard 2-series
    issuer(2, 34, 34, 15..=15),     // American Express
    issuer(2, 37, 37, 15..=15),     // American Express
    issuer(3, 300, 305, 14..=19),   // Diners Club International
    issuer(2, 36, 36, 14..=19),     // Diners Club International
    issuer(2, 38, 39, 14..=19),     // Diners Club
    issuer(4, 3528, 3589, 16..=19), // JCB
    issuer(4, 6011, 6011, 16..=19), // Discover
    issuer(3, 644, 649, 16..=19),   // Discover
    issuer(2, 65, 65, 16..=19),     // Discover, RuPay
    issuer(2, 62, 62, 16..=19),     // UnionPay (and Discover's 622126–622925)
    issuer(2, 50, 50, 12..=19),     // Maestro
    issuer(2, 56, 69, 12..=19),     // Maestro, RuPay (60), Troy and others
    issuer(4, 2200, 2204, 16..=19), // Mir
];

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(text: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        find(text, &mut out);
        out.iter().map(|f| (&text[f.start..f.end], f.valid)).collect()
    }

    #[test]
    fn valid_cards() {
        for card in [
            "4111111111111111",
            "4111 1111 1111 1111",
            "5500-0000-0000-0004",
            "378282246310005",
            "3782 822463 10005",
            "2221000000000009",
            "6011111111111117",
            "3530111333300000",
            "30569309025904",
            "6759649826438453",
            "501800000009",
            "4222222222222",
        ] {
            assert_eq!(cards(card), vec![(card, true)], "{card}");
        }
    }

    #[test]
    fn trailing_and_leading_groups_are_cut() {
        assert_eq!(cards("4111 1111 1111 1111 123"), vec![("4111 1111 1111 1111", true)]);
        assert_eq!(cards("ref 12 4111 1111 1111 1111"), vec![("4111 1111 1111 1111", true)]);
    }

    #[test]
    fn look_alikes_and_non_cards() {
        assert_eq!(cards("4111 1111 1111 1112"), vec![("4111 1111 1111 1112", false)]);
        assert_eq!(cards("4111111111111112"), vec![("4111111111111112", false)]);
        // No issuer starts with 9 or 1 at 16 digits; an order number is not a card shape.
        assert_eq!(cards("9111111111111111 1234567890123"), vec![]);
        assert_eq!(cards("411111111111"), vec![], "12 digits is Maestro only");
    }
}
