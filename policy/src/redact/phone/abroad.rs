//! Numbers written to be dialled from abroad: after `+`, after `00`, or after the exit prefix a
//! caller in one of the policy's regions dials (`011` in the NANP, `0011` in Australia, Brazil's
//! `00` with a carrier code). The country code comes next and fixes how the rest is read.
//!
//! Such a number is read whole. A run that fails whole may lose groups at its end (a stray
//! number after it: `+44 20 7946 0958 12`) only when its country code is written as a group of
//! its own: otherwise the shorter run is read with whatever code its first digits make, and a
//! small country's short numbers turn up everywhere (`+29 0 84 34` would be Saint Helena's
//! `+290 8434`).

use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use super::metadata::{self, RegionRules};

/// The exit prefixes of a policy's regions, each pattern once.
#[derive(Clone)]
pub(super) struct Exits {
    patterns: Arc<[Regex]>,
    /// All of them in one pattern, which turns most candidates down at their first digit: the
    /// question is asked of every national candidate.
    any: Option<Regex>,
}

impl Exits {
    pub(super) fn of(regions: &[Arc<RegionRules>]) -> Self {
        let mut patterns: Vec<Regex> = Vec::new();
        for exit in regions.iter().filter_map(|region| region.exit_prefix.as_ref()) {
            if !patterns.iter().any(|known| known.as_str() == exit.as_str()) {
                patterns.push(exit.clone());
            }
        }
        // Each pattern compiled alone, so their alternation compiles too; were it ever not to,
        // each is asked in turn. Built as `metadata` builds each: whitespace in the metadata's
        // patterns is layout.
        let sources: Vec<String> = patterns.iter().map(|exit| format!("(?:{})", exit.as_str())).collect();
        let any = RegexBuilder::new(&sources.join("|")).ignore_whitespace(true).unicode(false).build().ok();
        Self { patterns: patterns.into(), any }
    }

    /// Whether the digits of `text` from `start` on (the first few decide) begin with an exit
    /// prefix of one of the regions.
    pub(super) fn leads(&self, text: &str, start: usize) -> bool {
        let mut lead = [0u8; 8];
        let mut count = 0;
        // A number's first eight digits sit within a few dozen bytes of its start; looking no
        // further keeps a candidate before a long run without digits from reading all of it.
        let digits = text.as_bytes()[start..].iter().take(64).filter(|b| b.is_ascii_digit());
        for (slot, &digit) in lead.iter_mut().zip(digits) {
            *slot = digit;
            count += 1;
        }
        let lead = std::str::from_utf8(&lead[..count]).unwrap_or_default();
        match &self.any {
            Some(any) => any.find(lead).is_some_and(|found| found.end() > 0),
            None => self.prefix_lengths(lead).next().is_some(),
        }
    }

    /// Whether `span`, whose digits are `digits`, is a valid number after its `+`, `00` or exit
    /// prefix. `trimmed`: the span is a candidate without its last groups, so its country code
    /// must be a group of its own.
    pub(super) fn valid(&self, span: &str, digits: &str, trimmed: bool) -> bool {
        let plus = span.starts_with('+').then_some(0);
        // `00` is the exit prefix of most of the world whatever the regions.
        let zeros = (plus.is_none() && digits.starts_with("00")).then_some(2);
        let others = self.prefix_lengths(digits).filter(|_| plus.is_none());
        plus.into_iter().chain(zeros).chain(others).any(|skip| {
            let number = &digits[skip..];
            match trimmed {
                false => metadata::is_valid_international(number),
                true => {
                    code_group(span, skip).is_some_and(|length| metadata::is_valid_with_code(number, length))
                }
            }
        })
    }

    /// The lengths of the regions' exit prefixes that `digits` start with.
    fn prefix_lengths<'a>(&'a self, digits: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.patterns
            .iter()
            .filter_map(|exit| exit.find(digits))
            .map(|found| found.end())
            .filter(|&end| end > 0)
    }
}

/// How many digits the group holding the digit after the first `skip` digits of `span` has
/// from there on, when that is a country code's 1 to 3: `+44 20…` and `0044 20…` give 2,
/// `+4420…` none.
fn code_group(span: &str, skip: usize) -> Option<usize> {
    let bytes = span.as_bytes();
    let mut digits = 0;
    for (index, byte) in bytes.iter().enumerate() {
        if !byte.is_ascii_digit() {
            continue;
        }
        digits += 1;
        let group_ends = bytes.get(index + 1).is_none_or(|next| !next.is_ascii_digit());
        if group_ends && digits > skip {
            return Some(digits - skip).filter(|length| (1..=3).contains(length));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn country_code_groups() {
        assert_eq!(code_group("+44 20 7946 0958", 0), Some(2));
        assert_eq!(code_group("0044 20 7946 0958", 2), Some(2));
        assert_eq!(code_group("011 44 20 7946 0958", 3), Some(2));
        assert_eq!(code_group("+4420 7946 0958", 0), None);
        assert_eq!(code_group("01144 20 7946", 3), Some(2));
        assert_eq!(code_group("+1", 0), Some(1));
        assert_eq!(code_group("00", 2), None);
    }

    #[test]
    fn exit_prefixes_lead() {
        let regions = super::super::PhoneRegions::default();
        let exits = &regions.exits;
        assert!(exits.any.is_some());
        for (text, leads) in
            [("011 44", true), ("0011 44", true), ("00 44", true), ("030 1234", false), ("4155", false)]
        {
            assert_eq!(exits.leads(text, 0), leads, "{text}");
        }
    }
}
