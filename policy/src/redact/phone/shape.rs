//! What tells a phone number from other numbers around it, before any metadata is consulted:
//! dates, year ranges, dotted quads and object identifiers are not phone numbers; a number in one
//! piece right after an identifier's name is an identifier unless a phone word is nearer; and an
//! extension after a number belongs to it.

use std::sync::LazyLock;

use regex::Regex;

use super::{CONTEXT, MAX_GROUPS};

/// Dates, year ranges and dotted quads are not phone numbers, and neither is a run that holds a
/// date with a four-digit year (`08/27/2026 (92`), nor one whose parenthesis opens after digits
/// and never closes (`2024 (386 accounts)`: an area code in parentheses is closed, `(030) 1234`).
pub(super) fn not_a_phone_shape(span: &str) -> bool {
    if span.rfind('(').is_some_and(|open| open > 0 && !span[open..].contains(')')) {
        return true;
    }
    let groups = Groups::of(span);
    if groups.holds_date() {
        return true;
    }
    let bytes = span.as_bytes();
    let plain = bytes.iter().all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'/' | b' '));
    // In a plain span every group but the last has its joiner (` - ` counts as `-`).
    let joiners = &groups.joiners[..groups.count.saturating_sub(1)];
    let first = joiners.first().copied();
    if !plain || joiners.iter().any(|&b| Some(b) != first) {
        return false;
    }
    let lengths = &groups.lengths[..groups.count];
    let year = |index: usize| groups.lengths[index] == 4 && groups.year_like[index];
    // Object identifiers and version chains: four or more dotted parts, one of them a single digit.
    if first == Some(b'.') && lengths.len() >= 4 && lengths.contains(&1) {
        return true;
    }
    match lengths {
        [4, 1..=2, 1..=2] | [1..=2, 1..=2, 4] | [1..=2, 1..=2, 2] => first != Some(b' '),
        [4, 4] => year(0) && year(1),
        [1..=3, 1..=3, 1..=3, 1..=3] => first == Some(b'.'),
        _ => false,
    }
}

/// The digit groups of a span, without allocating: lengths, the byte after each (its joiner),
/// whether a 4-digit group looks like a year and whether a short one could be a day or month.
struct Groups {
    count: usize,
    lengths: [usize; MAX_GROUPS + 1],
    joiners: [u8; MAX_GROUPS + 1],
    year_like: [bool; MAX_GROUPS + 1],
    day_like: [bool; MAX_GROUPS + 1],
}

impl Groups {
    fn of(span: &str) -> Self {
        let mut groups = Self {
            count: 0,
            lengths: [0; MAX_GROUPS + 1],
            joiners: [0; MAX_GROUPS + 1],
            year_like: [false; MAX_GROUPS + 1],
            day_like: [false; MAX_GROUPS + 1],
        };
        let bytes = span.as_bytes();
        let mut index = 0;
        while index < bytes.len() && groups.count <= MAX_GROUPS {
            if !bytes[index].is_ascii_digit() {
                index += 1;
                continue;
            }
            let start = index;
            while index < bytes.len() && bytes[index].is_ascii_digit() {
                index += 1;
            }
            let digits = &span[start..index];
            let slot = groups.count;
            groups.lengths[slot] = digits.len();
            groups.joiners[slot] = match spaced_joiner(&bytes[index..]) {
                Some(joiner) => joiner,
                None if bytes.get(index + 1).is_some_and(u8::is_ascii_digit) => bytes[index],
                None => 0,
            };
            groups.year_like[slot] =
                digits.len() == 4 && (digits.starts_with("19") || digits.starts_with("20"));
            groups.day_like[slot] =
                digits.len() <= 2 && digits.parse::<u32>().is_ok_and(|n| (1..=31).contains(&n));
            groups.count += 1;
        }
        groups
    }

    /// Whether three consecutive groups joined by one repeated `/`, `.` or `-` form a date with a
    /// four-digit year (`2024-01-15`, `15.01.2024`, `01/15/2024`).
    fn holds_date(&self) -> bool {
        (0..self.count.saturating_sub(2)).any(|i| {
            let joiner = self.joiners[i];
            matches!(joiner, b'/' | b'.' | b'-')
                && self.joiners[i + 1] == joiner
                && ((self.year_like[i] && self.day_like[i + 1] && self.day_like[i + 2])
                    || (self.day_like[i] && self.day_like[i + 1] && self.year_like[i + 2]))
        })
    }
}

/// How many bytes a spaced joiner takes.
pub(super) const SPACED_JOINER: usize = 3;

/// The `/` or `-` of a spaced joiner at the start of `after`, followed by a digit: ` / ` after
/// the area code is how German numbers were long written (`0171 / 123 45 67`), and ` - ` is
/// common in signatures. Dates and year ranges written that way (`2019 - 2024`, `15 / 01 / 2024`)
/// are read with that joiner and refused like their unspaced forms.
pub(super) fn spaced_joiner(after: &[u8]) -> Option<u8> {
    match after {
        [b' ', joiner @ (b'/' | b'-'), b' ', digit, ..] if digit.is_ascii_digit() => Some(*joiner),
        _ => None,
    }
}

/// Words that name an identifier when they come right before a number in one piece.
const IDENTIFIER_NAMES: [&str; 33] = [
    "build",
    "version",
    "commit",
    "rev",
    "release",
    "order",
    "invoice",
    "ref",
    "reference",
    "id",
    "no",
    "nr",
    "num",
    "ticket",
    "case",
    "account",
    "acct",
    "customer",
    "client",
    "tracking",
    "sku",
    "po",
    "serial",
    "item",
    "product",
    "batch",
    "lot",
    "transaction",
    "txn",
    "booking",
    "confirmation",
    "contract",
    "claim",
];

/// Words that make a nearby number a phone number.
const PHONE_WORDS: [&str; 16] = [
    "phone",
    "tel",
    "telephone",
    "mobile",
    "mob",
    "cell",
    "fax",
    "call",
    "contact",
    "whatsapp",
    "téléphone",
    "telefon",
    "teléfono",
    "móvil",
    "celular",
    "portable",
];

/// Whether the word right before `start` (skipping `:`, `#`, `.` and spaces) names an identifier
/// and no phone word comes before it in the same short stretch.
pub(super) fn after_identifier_name(text: &str, start: usize) -> bool {
    let mut from = start.saturating_sub(CONTEXT);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let before = text[from..start].to_lowercase();
    let words = || before.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty());
    if words().any(|word| PHONE_WORDS.iter().any(|phone| word.starts_with(phone))) {
        return false;
    }
    let trailing = before.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '#' | '.' | '='));
    let glued_hash = before.trim_end().ends_with('#');
    glued_hash
        || words()
            .next_back()
            .is_some_and(|word| trailing.ends_with(word) && IDENTIFIER_NAMES.contains(&word))
}

/// The length of an extension right after a number: ` x123`, ` ext. 45`, `#12`, ` extension 7`.
pub(super) fn extension_length(after: &str) -> usize {
    static EXTENSION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?i-u),?[ -]?(?:ext\.?|extension|x|#)[ -]?[0-9]{1,6}\b")
            .expect("the extension pattern is valid")
    });
    // Most numbers are followed by something else: look for the marker before running the regex.
    let marked = after.bytes().take(3).any(|b| matches!(b | 0x20, b'e' | b'x') || b == b'#');
    if !marked {
        return 0;
    }
    EXTENSION.find(after).map_or(0, |found| found.end())
}
