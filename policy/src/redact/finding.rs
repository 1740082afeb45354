//! What a built-in recognizer reports, and how overlapping reports are settled.
//!
//! Recognizers run over the scan text (see `normalize`) and report spans. A *valid* finding
//! passed its kind's validator and will be replaced when its kind is redacted. A *look-alike*
//! has a kind's exact shape but fails its validator (an IBAN whose mod-97 fails, a card number
//! whose Luhn fails, an SSN in a never-issued range): it is kept whole, and no other kind may
//! claim bytes inside it, so its digits are never re-read in pieces as a phone or a card.
//!
//! Settling: the longest finding wins; among equal lengths a credential's look-alike wins, then a
//! credential (a password that has a card's shape and fails Luhn is still a password), then a
//! look-alike beats a valid finding of another kind (a never-issued SSN `666-12-3456` is not
//! re-read as a phone number), then the earlier one wins. A finding that overlaps one already
//! kept is dropped.

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
    findings.sort_by(|a, b| b.len().cmp(&a.len()).then(rank(a).cmp(&rank(b))).then(a.start.cmp(&b.start)));
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

/// Which of two findings over the same span wins (the lower): a credential's look-alike (a
/// vendor's documented example, a token whose checksum fails), then a credential, then another
/// kind's look-alike, then another kind. A secret under a password's name that happens to have a
/// card's shape and fail Luhn (`password=4945807302157368`) is still the password.
fn rank(finding: &Finding) -> u8 {
    match (finding.kind == RedactionKind::Credentials, finding.valid) {
        (true, false) => 0,
        (true, true) => 1,
        (false, false) => 2,
        (false, true) => 3,
    }
}

/// The spans claimed by findings so far, to ask whether a later recognizer's candidate can
/// still win: one that lies inside a longer finding loses to it when settled, so the later
/// recognizer need not validate it (the phone recognizer, which runs last among the numbers,
/// skips the windows of card numbers and addresses this way).
pub(crate) struct Claims {
    /// (start, end) sorted by start, and the largest end among each prefix.
    spans: Vec<(usize, usize)>,
    reach: Vec<usize>,
}

impl Claims {
    pub(crate) fn new(findings: &[Finding]) -> Self {
        let mut spans: Vec<(usize, usize)> = findings.iter().map(|f| (f.start, f.end)).collect();
        spans.sort_unstable();
        let reach = spans
            .iter()
            .scan(0, |reach, &(_, end)| {
                *reach = end.max(*reach);
                Some(*reach)
            })
            .collect();
        Self { spans, reach }
    }

    /// Whether a longer claimed span holds all of `start..end`.
    pub(crate) fn covers(&self, start: usize, end: usize) -> bool {
        // Spans starting before `start` need only reach `end`; those starting at it must pass it.
        let before = self.spans.partition_point(|&(from, _)| from < start);
        let at_or_before = self.spans.partition_point(|&(from, _)| from <= start);
        (before > 0 && self.reach[before - 1] >= end)
            || (at_or_before > 0 && self.reach[at_or_before - 1] > end)
    }
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
    fn claims_cover_only_from_a_longer_span() {
        let claims = Claims::new(&[
            Finding::valid(10, 20, RedactionKind::Card),
            Finding::look_alike(30, 35, RedactionKind::Ipv4),
        ]);
        assert!(claims.covers(12, 18));
        assert!(claims.covers(10, 18));
        assert!(claims.covers(12, 20));
        assert!(!claims.covers(10, 20), "the same span is not longer");
        assert!(!claims.covers(8, 18));
        assert!(!claims.covers(18, 22));
        assert!(claims.covers(31, 34));
        assert!(!claims.covers(21, 29));
        assert!(!Claims::new(&[]).covers(0, 1));
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
