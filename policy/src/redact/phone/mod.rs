//! Phone numbers, validated with libphonenumber's metadata (the `phonenumber` crate).
//!
//! Candidates are runs of digits joined by the separators people write in phone numbers (space,
//! `-`, `.`, `/`, parentheses, and a `/` or `-` with a space on each side: `0171 / 123 45 67`),
//! optionally led by `+` or `00`, with 7 to 15 digits. A candidate is
//! a phone number when libphonenumber calls it valid: with `+`/`00` for whatever country its code
//! names, otherwise as a national number of one of the configured regions. A number led by the
//! exit prefix a caller in one of the regions dials abroad (`011 44 20 7946 0958` from the US,
//! `0011` from Australia) is read as the international number after it first. An extension after it
//! (`x123`, `ext. 45`, `#12`) is part of the finding.
//!
//! A national number must also be written the way the region writes it: where the region's
//! format for that number requires the trunk prefix (`0` in Britain, Germany, France…), a number
//! without it is not read as that region's (`1234567890` is not `01234 567890`), as
//! libphonenumber's own matcher does. Each region's patterns are compiled once from the metadata
//! (`metadata`), so a check is a handful of regex matches.
//!
//! What keeps dates, amounts and identifiers out:
//! - shapes that are not phone numbers are skipped before any lookup: dates (`15.01.2024`,
//!   `2024-01-15`), year ranges (`2019-2024`), dotted quads (`10.1.2.3`);
//! - a number in one piece right after an identifier's name (`Order 0123456789`, `invoice no.`,
//!   `ticket #`) is an identifier unless a phone word (`phone`, `tel`, `mobile`…) is nearer;
//! - a run that fails as a whole is tried as shorter runs of whole groups, so a valid number next
//!   to a stray one is still found, but the look-alikes of other kinds (an SSN's 3-2-4 shape, a
//!   card's 4-4-4-4) block it: see `finding`.
//!
//! What keeps it cheap on pages full of numbers: candidates start only at the text's digit groups
//! (`digits::groups`); groups whose neighbours within two separators hold fewer than 7 digits are
//! passed over whole; a window inside a longer finding of the recognizers that ran before (a card,
//! an address: `finding::Claims`) is not validated, since it would lose to that finding.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};

use phonenumber::country::Id;

use metadata::RegionRules;

use super::digits::Group;
use super::finding::{Claims, Finding};
use super::kind::RedactionKind;

mod abroad;
mod metadata;
mod shape;

use abroad::Exits;
use shape::{SPACED_JOINER, after_identifier_name, extension_length, not_a_phone_shape, spaced_joiner};

/// The regions whose national formats are read when a policy names none: the United States (and
/// with it every NANP country), the United Kingdom, Germany, France, Spain, Italy, the
/// Netherlands, Brazil, Australia and India.
pub const DEFAULT_PHONE_REGIONS: [&str; 10] = ["US", "GB", "DE", "FR", "ES", "IT", "NL", "BR", "AU", "IN"];

/// Fewest and most digits of a national significant number with its country code (E.164).
const MIN_DIGITS: usize = 7;
const MAX_DIGITS: usize = 15;
/// Most digit groups in one candidate.
const MAX_GROUPS: usize = 12;
/// How far back the words before a number are read.
const CONTEXT: usize = 32;

/// The regions national numbers are read in.
#[derive(Clone)]
pub struct PhoneRegions {
    regions: Arc<[Arc<RegionRules>]>,
    /// The regions' exit prefixes (`011`, `00`, `0011`…).
    exits: Exits,
}

impl PartialEq for PhoneRegions {
    fn eq(&self, other: &Self) -> bool {
        self.regions.iter().map(|region| &region.id).eq(other.regions.iter().map(|region| &region.id))
    }
}

impl Eq for PhoneRegions {}

impl fmt::Debug for PhoneRegions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.regions.iter().map(|region| &region.id)).finish()
    }
}

/// A region code libphonenumber does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRegion(pub String);

impl fmt::Display for UnknownRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown phone region {:?}: use ISO 3166 codes such as \"US\" or \"DE\"", self.0)
    }
}

impl std::error::Error for UnknownRegion {}

impl Default for PhoneRegions {
    /// The default regions, compiled once per process.
    fn default() -> Self {
        static DEFAULT: LazyLock<PhoneRegions> = LazyLock::new(|| {
            PhoneRegions::parse(DEFAULT_PHONE_REGIONS).expect("the default regions are known")
        });
        DEFAULT.clone()
    }
}

impl PhoneRegions {
    /// The regions named by ISO 3166 alpha-2 codes (`"US"`, `"de"`), in order.
    pub fn parse<'a>(codes: impl IntoIterator<Item = &'a str>) -> Result<Self, UnknownRegion> {
        let mut regions: Vec<Arc<RegionRules>> = Vec::new();
        for code in codes {
            let unknown = || UnknownRegion(code.to_owned());
            let id = Id::from_str(&code.to_ascii_uppercase()).map_err(|_| unknown())?;
            if !regions.iter().any(|region| region.id == id.as_ref()) {
                regions.push(metadata::region(id.as_ref()).ok_or_else(unknown)?);
            }
        }
        let exits = Exits::of(&regions);
        Ok(Self { regions: regions.into(), exits })
    }

    /// Reports every phone number in `text`, whose digit groups are `digit_groups`.
    /// A window inside a longer span of `claims` (a card, an address) is not validated: it would
    /// lose to that span when the findings are settled.
    pub(crate) fn find(&self, text: &str, digit_groups: &[Group], claims: &Claims, out: &mut Vec<Finding>) {
        let bytes = text.as_bytes();
        let mut groups = Vec::new();
        let mut index = 0;
        for (at, run) in digit_groups.iter().enumerate() {
            if run.start < index {
                continue;
            }
            // The groups a candidate here could join (one or two separators apart) hold too few
            // digits for a number: most numbers on a page end here, and so do their groups.
            let (chain_end, chain_digits) = chain(bytes, digit_groups, at);
            if chain_digits < MIN_DIGITS {
                index = chain_end;
                continue;
            }
            // A candidate starts at a `+` or `(` right before digits, or at the digits.
            let lead = run.start.checked_sub(1).filter(|&at| at >= index && matches!(bytes[at], b'+' | b'('));
            let candidate = lead
                .and_then(|at| candidate_at(text, at, &mut groups))
                .or_else(|| candidate_at(text, run.start, &mut groups));
            if let Some(candidate) = candidate {
                index = candidate.end;
                let digits: usize = groups.iter().map(|(start, end)| end - start).sum();
                if digits >= MIN_DIGITS {
                    self.check(text, &candidate, &groups, claims, out);
                }
            }
        }
    }

    /// Tries the candidate whole, then shorter runs of whole groups: dropping groups at the end,
    /// and, for a national candidate, starting after a space (never inside parentheses or after
    /// a `+` country code, where the rest would be read as another country's number).
    fn check(
        &self,
        text: &str,
        candidate: &Candidate,
        groups: &[(usize, usize)],
        claims: &Claims,
        out: &mut Vec<Finding>,
    ) {
        let bytes = text.as_bytes();
        let mut first = 0;
        while first < groups.len() {
            let start = if first == 0 { candidate.start } else { groups[first].0 };
            let may_start = first == 0
                || (!candidate.international
                    && bytes[start - 1] == b' '
                    && bytes[start - 2] != b')'
                    && !inside_parentheses(&bytes[candidate.start..start]));
            // Only runs of a phone number's length are worth a look: a long run of numbers (a
            // table row) is tried in windows, not in every span of it. The longest valid one
            // wins; the groups after it are tried again.
            let digits_to = |last: usize| -> usize { groups[first..=last].iter().map(|(a, b)| b - a).sum() };
            let longest = |reading: Reading| {
                (first..groups.len())
                    .rev()
                    .filter(|&last| (MIN_DIGITS..=MAX_DIGITS + 2).contains(&digits_to(last)))
                    .filter(|&last| !claims.covers(start, groups[last].1))
                    .find_map(|last| {
                        let trimmed = last + 1 < groups.len();
                        self.valid(text, start, groups[last].1, reading, trimmed).map(|end| (last, end))
                    })
            };
            let found = may_start
                .then(|| {
                    if first == 0 && candidate.international {
                        return longest(Reading::International);
                    }
                    // A number dialled from one of the regions to another country
                    // (`011 44 20 7946 0958` from the US) is also read after its exit prefix,
                    // and the longer reading wins: the national reading of its first groups
                    // (`011 4420 7946` is a Delhi number) would leave the rest to the model.
                    let abroad =
                        (first == 0 && self.exits.leads(text, start)).then(|| longest(Reading::Abroad));
                    let national = longest(Reading::National);
                    match (abroad.flatten(), national) {
                        (Some(abroad), Some(national)) if national.0 > abroad.0 => Some(national),
                        (abroad, national) => abroad.or(national),
                    }
                })
                .flatten();
            match found {
                Some((last, end)) => {
                    out.push(Finding::valid(start, end, RedactionKind::Phone));
                    first = last + 1;
                }
                None => first += 1,
            }
        }
    }

    /// The end of the valid number (with any extension) at `start..end`, read as `reading`
    /// says, if it is one; `trimmed` when the candidate goes on after `end`.
    fn valid(&self, text: &str, start: usize, end: usize, reading: Reading, trimmed: bool) -> Option<usize> {
        let span = &text[start..end];
        let count = span.bytes().filter(u8::is_ascii_digit).count();
        if !(MIN_DIGITS..=MAX_DIGITS + 2).contains(&count) || not_a_phone_shape(span) {
            return None;
        }
        let mut buffer = [0u8; MAX_DIGITS + 2];
        for (slot, digit) in buffer.iter_mut().zip(span.bytes().filter(u8::is_ascii_digit)) {
            *slot = digit;
        }
        let digits = std::str::from_utf8(&buffer[..count]).unwrap_or_default();
        let grouped = span.bytes().any(|b| !b.is_ascii_digit() && b != b'+');
        // A number in one piece right after an identifier's name is the identifier, however
        // it could be dialled.
        if reading != Reading::International && !grouped && after_identifier_name(text, start) {
            return None;
        }
        let valid = match reading {
            Reading::International | Reading::Abroad => self.exits.valid(span, digits, trimmed),
            Reading::National => {
                digits.len() <= MAX_DIGITS
                    && self.regions.iter().any(|region| region.accepts_national(digits))
            }
        };
        valid.then(|| end + extension_length(&text[end..]))
    }
}

/// How a candidate's digits are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// As a national number of one of the regions.
    National,
    /// After `+` or `00`: the country code comes first.
    International,
    /// After the exit prefix a caller in one of the regions dials (`011` from the US): the
    /// country code follows it.
    Abroad,
}

/// The end of the digit groups from `groups[first]` on that are one or two separator bytes
/// apart (or a spaced ` / ` or ` - `), and how many digits they hold: at least what any
/// candidate among them can hold. The walk stops once they hold a phone number's fewest digits
/// (the end is then not needed), so a page-long chain (`1.1.1.…`) is not walked again from each
/// of its groups.
fn chain(bytes: &[u8], groups: &[Group], first: usize) -> (usize, usize) {
    let mut last = first;
    let mut digits = groups[first].len();
    while digits < MIN_DIGITS
        && let Some(next) = groups.get(last + 1)
        && ((next.start - groups[last].end <= 2
            && bytes[groups[last].end..next.start]
                .iter()
                .all(|b| matches!(b, b' ' | b'-' | b'.' | b'/' | b'(' | b')')))
            || spaced_joiner(&bytes[groups[last].end..]).is_some())
    {
        last += 1;
        digits += next.len();
    }
    (groups[last].end, digits)
}

/// A run of digit groups that may be a phone number.
struct Candidate {
    start: usize,
    end: usize,
    international: bool,
}

/// The candidate starting at `index`: `+`, `00`, `(` or a digit not glued to a word; `groups`
/// receives the byte ranges of its digit groups.
fn candidate_at(text: &str, index: usize, groups: &mut Vec<(usize, usize)>) -> Option<Candidate> {
    groups.clear();
    let bytes = text.as_bytes();
    let first = bytes[index];
    if !(first.is_ascii_digit() || first == b'+' || first == b'(') {
        return None;
    }
    if index > 0
        && (bytes[index - 1].is_ascii_alphanumeric() || matches!(bytes[index - 1], b'_' | b'+' | b'.'))
    {
        return None;
    }
    if index > 0
        && bytes[index - 1] >= 0x80
        && text[..index].chars().next_back().is_some_and(char::is_alphanumeric)
    {
        return None;
    }
    let international =
        first == b'+' || (bytes[index..].starts_with(b"00") && !bytes[index..].starts_with(b"000"));
    let mut position = if first == b'+' { index + 1 } else { index };
    let mut open = first == b'(';
    if open {
        position += 1;
    }
    loop {
        let start = position;
        while position < bytes.len() && bytes[position].is_ascii_digit() {
            position += 1;
        }
        if position == start {
            break;
        }
        groups.push((start, position));
        // A phone number has a handful of groups; a longer run (a row of numbers) is read in
        // pieces of at most this many.
        if groups.len() == MAX_GROUPS {
            break;
        }
        // One separator, or `) `, ` (`, `)-`: never two of the same; or a spaced ` / ` or ` - `.
        let mut next = position;
        let mut taken = 0;
        if spaced_joiner(&bytes[position..]).is_some() {
            next += SPACED_JOINER;
            taken = 2;
        }
        while next < bytes.len()
            && taken < 2
            && matches!(bytes[next], b' ' | b'-' | b'.' | b'/' | b'(' | b')')
        {
            match bytes[next] {
                b'(' if open => break,
                b'(' => open = true,
                b')' if !open => break,
                b')' => open = false,
                _ if taken == 1 && matches!(bytes[next - 1], b' ' | b'-' | b'.' | b'/') => break,
                _ => {}
            }
            next += 1;
            taken += 1;
        }
        if next < bytes.len() && bytes[next].is_ascii_digit() && next > position {
            position = next;
        } else {
            // A closing parenthesis right after the last group belongs to it: `(030) 1234`.
            break;
        }
    }
    let end = groups.last()?.1;
    // Glued to a word, or the first part of a longer token (`06213272-edc7-…`, `0430427.tar`).
    let glued = |at: usize| bytes.get(at).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
    let continues = matches!(bytes.get(end), Some(b'-' | b'.' | b'_')) && glued(end + 1);
    if (glued(end) || continues) && extension_length(&text[end..]) == 0 {
        return None;
    }
    Some(Candidate { start: index, end, international })
}

/// Whether a `(` before the end of `prefix` is still open.
fn inside_parentheses(prefix: &[u8]) -> bool {
    prefix.iter().rposition(|&b| b == b'(') > prefix.iter().rposition(|&b| b == b')')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phones(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let groups = crate::redact::digits::groups(text);
        PhoneRegions::default().find(text, &groups, &Claims::new(&[]), &mut out);
        out.iter().map(|f| &text[f.start..f.end]).collect()
    }

    #[test]
    fn national_and_international_formats() {
        for (text, phone) in [
            ("call +49 30 1234567.", "+49 30 1234567"),
            ("call +1 (212) 555-0123 now", "+1 (212) 555-0123"),
            ("US (212) 555-0123", "(212) 555-0123"),
            ("US 212-555-0123 x123 today", "212-555-0123 x123"),
            ("US 212.555.0123 ext. 45", "212.555.0123 ext. 45"),
            ("PHONE=\"(312) 268-8642, ext. 62\"", "(312) 268-8642, ext. 62"),
            ("Paris 01 23 45 67 89", "01 23 45 67 89"),
            ("Madrid 912 345 678", "912 345 678"),
            ("São Paulo (11) 91234-5678", "(11) 91234-5678"),
            ("Sydney (02) 9876 5432", "(02) 9876 5432"),
            ("mobile 0412 345 678", "0412 345 678"),
            ("India 98765 43210", "98765 43210"),
            ("India 9876543210", "9876543210"),
            ("Berlin 030 12345678", "030 12345678"),
            ("mobile 0171-1234567", "0171-1234567"),
            ("London 020 7946 0958", "020 7946 0958"),
            ("from abroad 0044 20 7946 0958", "0044 20 7946 0958"),
            ("+33123456789", "+33123456789"),
            ("phone: +81-3-1486-1474)", "+81-3-1486-1474"),
            ("+1-303-432-8410-x5127 ok", "+1-303-432-8410-x5127"),
            ("Jane (030 1234567)", "(030 1234567"),
            // A spaced `/` or `-` after the area code.
            ("Ruf mich an: 0171 / 123 45 67", "0171 / 123 45 67"),
            ("Tel. 030 - 1234567", "030 - 1234567"),
            // Dialled from the US (`011`) or Australia (`0011`) to London.
            ("call 011 44 20 7946 0958", "011 44 20 7946 0958"),
            ("call 0011 44 20 7946 0958", "0011 44 20 7946 0958"),
            // A Delhi number starts with 011 too; it is still read as one.
            ("Delhi 011 2345 6789", "011 2345 6789"),
        ] {
            assert_eq!(phones(text), vec![phone], "{text}");
        }
    }

    #[test]
    fn not_phones() {
        for text in [
            "on 2024-01-15 and 15.01.2024 and 01/15/2024",
            "order 12345, room 0123, +12",
            "version 1.2.3 costs 1,234.56 EUR",
            "Order 0123456789",
            "invoice no. 0123456789",
            "ticket #9876543210",
            "from 2019-2024",
            "06213272-edc7-4278-aa7a-5f6e49991c10",
            "(build 0430427)",
            "(107) 092-4652",
            "+29 0 84 34 27",
            "prevista per il 08/27/2026 (92 account)",
            "el 2025-07-20 (98 cuentas)",
            "host 10.120.30.40",
            "Stand 2024 (3865 Konten)",
            "from 2019 - 2024",
            "am 15 / 01 / 2024 um",
            "Seite 12 / 345 67",
            "created 1700000000 updated 1700003600",
            "1700000000 / 1700003600",
            "order 01144207946095",
        ] {
            assert_eq!(phones(text), Vec::<&str>::new(), "{text}");
        }
    }

    #[test]
    fn a_stray_number_after_one_dialled_abroad() {
        // The country code written as its own group: the number is read without the stray group.
        for (text, phone) in [
            ("call +44 20 7946 0958 12", "+44 20 7946 0958"),
            ("call 0044 20 7946 0958 12", "0044 20 7946 0958"),
            ("call 011 44 20 7946 0958 12", "011 44 20 7946 0958"),
        ] {
            assert_eq!(phones(text), vec![phone], "{text}");
        }
        // Otherwise only the whole run is read: `+290 8434` is not what was written.
        assert_eq!(phones("+29 0 84 34 27"), Vec::<&str>::new());
    }

    #[test]
    fn exit_prefixes_are_the_regions_own() {
        let find = |regions: &[&str], text: &str| -> Vec<String> {
            let mut out = Vec::new();
            let groups = crate::redact::digits::groups(text);
            let regions = PhoneRegions::parse(regions.iter().copied()).unwrap_or_else(|e| panic!("{e}"));
            regions.find(text, &groups, &Claims::new(&[]), &mut out);
            out.iter().map(|f| text[f.start..f.end].to_owned()).collect()
        };
        assert_eq!(find(&["US"], "call 011 44 20 7946 0958"), ["011 44 20 7946 0958"]);
        // Germany dials 00: `011…` is not an exit prefix there.
        assert_eq!(find(&["DE"], "call 011 44 20 7946 0958"), Vec::<String>::new());
    }

    #[test]
    fn phone_word_beats_identifier_name() {
        assert_eq!(phones("phone number 0123456789"), vec!["0123456789"]);
    }

    #[test]
    fn regions_are_checked() {
        assert!(PhoneRegions::parse(["us", "DE"]).is_ok());
        assert_eq!(PhoneRegions::parse(["XX"]), Err(UnknownRegion("XX".into())));
    }
}
