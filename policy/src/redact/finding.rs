//! What a built-in recognizer reports, and how overlapping reports are settled.
//!
//! Recognizers run over the scan text (see `normalize`) and report spans. A *valid* finding
//! passed its kind's validator and will be replaced when its kind is redacted. A *look-alike*
//! has a kind's exact shape but fails its validator (an IBAN whose mod-97 fails, a card number
//! whose Luhn fails, an SSN in a never-issued range): it is kept whole, and no other kind may
//! claim bytes inside it, so its digits are never re-read in pieces as a phone or a card.
//!
//! Settling: the longest finding wins; among equal lengths a look-alike beats a valid finding of
//! another kind (a never-issued SSN `666-12-3456` is not re-read as a phone number), then the
//! earlier one wins. A finding that overlaps one already kept is dropped.

use std::collections::BTreeMap;

use super::kind::RedactionKind;

/// A recognizer's report over the scan text (byte offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    /// First byte of the span.
    pub(crate) start: usize,
    /// One past its last byte.
    pub(crate) end: usize,
    /// The kind it is (or looks like).
    pub(crate) kind: RedactionKind,
    /// True when the validator accepted it; false for a look-alike that only blocks others.
    pub(crate) valid: bool,
}

impl Finding {
    /// A validated finding.
    pub(crate) fn valid(start: usize, end: usize, kind: RedactionKind) -> Self {
        Self { start, end, kind, valid: true }
    }

    /// A look-alike: the shape of `kind`, failing its validator.
    pub(crate) fn look_alike(start: usize, end: usize, kind: RedactionKind) -> Self {
        Self { start, end, kind, valid: false }
    }

    fn len(&self) -> usize {
        self.end - self.start
    }
}

/// Keeps the non-overlapping findings by the rule above and returns the valid ones in text order.
/// The kept spans sit in an ordered map by start, so each check is one lookup: O(n log n).
pub(crate) fn settle(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.retain(|finding| finding.start < finding.end);
    if findings.len() <= 1 {
        findings.retain(|finding| finding.valid);
        return findings;
    }
    findings.sort_by(|a, b| b.len().cmp(&a.len()).then(a.valid.cmp(&b.valid)).then(a.start.cmp(&b.start)));
    // start → end of every kept span; kept spans never overlap, so the one starting last before
    // a finding's end is the only one that can overlap it.
    let mut kept: BTreeMap<usize, usize> = BTreeMap::new();
    let mut valid = Vec::new();
    for finding in findings {
        let overlaps = kept.range(..finding.end).next_back().is_some_and(|(_, &end)| end > finding.start);
        if !overlaps {
            kept.insert(finding.start, finding.end);
            if finding.valid {
                valid.push(finding);
            }
        }
    }
    valid.sort_by_key(|finding| finding.start);
    valid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_wins_and_look_alikes_block() {
        let found = settle(vec![
            Finding::valid(0, 8, RedactionKind::Phone),
            Finding::valid(0, 19, RedactionKind::Card),
            Finding::look_alike(30, 41, RedactionKind::Ssn),
            Finding::valid(30, 40, RedactionKind::Phone),
            Finding::valid(50, 60, RedactionKind::Phone),
        ]);
        assert_eq!(
            found,
            vec![Finding::valid(0, 19, RedactionKind::Card), Finding::valid(50, 60, RedactionKind::Phone)]
        );
    }

    #[test]
    fn equal_length_look_alike_beats_valid() {
        let found = settle(vec![
            Finding::valid(0, 11, RedactionKind::Phone),
            Finding::look_alike(0, 11, RedactionKind::Ssn),
        ]);
        assert_eq!(found, vec![]);
    }
}
