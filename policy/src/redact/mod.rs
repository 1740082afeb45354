//! Redaction: finds personal data in text and replaces it with typed placeholders.
//!
//! Text is HTML-entity-decoded first, then scanned once by a single combined regex of every
//! built-in recognizer's candidates (email, IBAN, card, SSN, phone); each candidate is classified
//! and checked by its validator (mod-97, Luhn, SSN ranges, digit counts) and only valid findings
//! are replaced. Admin regexes run afterwards. Which kinds apply comes from the policy as a
//! [`RedactionSet`]; one [`Redactor`] per policy serves every set.

mod card;
mod custom;
mod email;
pub mod entities;
pub(crate) mod finding;
mod iban;
mod kind;
pub(crate) mod normalize;
mod phone;
mod placeholders;
mod ssn;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Serialize;

pub use custom::CustomRecognizer;
pub use kind::RedactionKind;
pub use placeholders::Placeholders;

/// The kinds to redact for one (subject, site): a small sorted set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct RedactionSet {
    kinds: Vec<RedactionKind>,
}

impl RedactionSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every built-in kind.
    pub fn builtin() -> Self {
        RedactionKind::BUILTIN.into_iter().collect()
    }

    /// Adds a kind (no-op when present).
    pub fn insert(&mut self, kind: RedactionKind) {
        if let Err(position) = self.kinds.binary_search(&kind) {
            self.kinds.insert(position, kind);
        }
    }

    /// Adds every kind of `other`.
    pub fn extend_from(&mut self, other: &RedactionSet) {
        for kind in &other.kinds {
            self.insert(kind.clone());
        }
    }

    /// Whether `kind` is in the set.
    pub fn contains(&self, kind: &RedactionKind) -> bool {
        self.kinds.binary_search(kind).is_ok()
    }

    /// True when nothing is to be redacted.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The kinds, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &RedactionKind> {
        self.kinds.iter()
    }
}

impl FromIterator<RedactionKind> for RedactionSet {
    fn from_iter<I: IntoIterator<Item = RedactionKind>>(iter: I) -> Self {
        let mut set = Self::new();
        for kind in iter {
            set.insert(kind);
        }
        set
    }
}

impl fmt::Display for RedactionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, kind) in self.kinds.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{kind}")?;
        }
        Ok(())
    }
}

/// Redacted text and how many findings of each kind were replaced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Redacted {
    /// The entity-decoded text with placeholders.
    pub text: String,
    /// Replacements per kind (kinds with none are absent).
    pub counts: BTreeMap<RedactionKind, usize>,
}

impl Redacted {
    /// The total number of replacements.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

/// The recognizers of one policy: the built-ins plus its admin regexes.
#[derive(Clone, Debug)]
pub struct Redactor {
    candidates: Regex,
    classify: RegexSet,
    custom: Vec<CustomRecognizer>,
}

/// A recognizer's check: the byte length of the valid finding at the start of a candidate.
type Validator = fn(&str) -> Option<usize>;

/// The built-in kinds in the order candidates are classified: the alternatives of the combined
/// regex come in this order too, so at one start position the stricter shapes win.
const CLASSIFY_ORDER: [(RedactionKind, Validator); 5] = [
    (RedactionKind::Email, email::recognize),
    (RedactionKind::Iban, iban::recognize),
    (RedactionKind::Card, card::recognize),
    (RedactionKind::Ssn, ssn::recognize),
    (RedactionKind::Phone, phone::recognize),
];

const PATTERNS: [&str; 5] = [email::PATTERN, iban::PATTERN, card::PATTERN, ssn::PATTERN, phone::PATTERN];

impl Redactor {
    /// The built-in recognizers plus `custom` admin regexes.
    pub fn new(custom: Vec<CustomRecognizer>) -> Self {
        let (candidates, classify) = builtin_regexes();
        Self { candidates, classify, custom }
    }

    /// The admin recognizers, in document order.
    pub fn custom(&self) -> &[CustomRecognizer] {
        &self.custom
    }

    /// Decodes entities in `text`, then replaces every valid finding of a kind in `set`.
    pub fn redact(&self, text: &str, set: &RedactionSet) -> Redacted {
        let decoded = entities::decode(text);
        let mut counts = BTreeMap::new();
        let mut text = if RedactionKind::BUILTIN.iter().any(|kind| set.contains(kind)) {
            self.redact_builtin(&decoded, set, &mut counts)
        } else {
            decoded.into_owned()
        };
        for recognizer in &self.custom {
            let kind = RedactionKind::Custom(recognizer.name().clone());
            if set.contains(&kind) {
                let count = recognizer.apply(&mut text);
                if count > 0 {
                    *counts.entry(kind).or_insert(0) += count;
                }
            }
        }
        Redacted { text, counts }
    }

    fn redact_builtin(
        &self,
        text: &str,
        set: &RedactionSet,
        counts: &mut BTreeMap<RedactionKind, usize>,
    ) -> String {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut position = 0;
        while let Some(found) = self.candidates.find_at(text, position) {
            let candidate = found.as_str();
            match self.recognize(candidate) {
                Some((kind, length)) => {
                    let end = found.start() + length;
                    if set.contains(kind) {
                        out.push_str(&text[copied..found.start()]);
                        out.push('[');
                        out.push_str(kind.as_str());
                        out.push(']');
                        *counts.entry(kind.clone()).or_insert(0) += 1;
                        copied = end;
                    }
                    // A finding of a kind not in the set is skipped whole, so its digits are not
                    // re-read as another kind.
                    position = end;
                }
                None => {
                    // Not valid as a whole: move past its first token and look again, so a valid
                    // number right after a stray one is still found.
                    let token = candidate
                        .bytes()
                        .position(|b| !b.is_ascii_alphanumeric())
                        .unwrap_or(candidate.len())
                        .max(1);
                    position = next_char_boundary(text, found.start() + token);
                }
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    /// The first kind whose shape matches all of `candidate` and whose validator accepts it.
    fn recognize(&self, candidate: &str) -> Option<(&'static RedactionKind, usize)> {
        let shapes = self.classify.matches(candidate);
        CLASSIFY_ORDER
            .iter()
            .enumerate()
            .filter(|(index, _)| shapes.matched(*index))
            .find_map(|(_, (kind, validate))| validate(candidate).map(|length| (kind, length)))
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

/// The combined candidate regex and the anchored classifier set, compiled once per process
/// (regexes are cheap to clone: they share their compiled program).
fn builtin_regexes() -> (Regex, RegexSet) {
    static BUILTIN: LazyLock<(Regex, RegexSet)> = LazyLock::new(|| {
        let combined = PATTERNS.map(|p| format!("(?:{p})")).join("|");
        // The patterns are compile-time constants covered by tests, so building them cannot fail
        // on any input; the larger DFA cache keeps the lazy DFA from thrashing on mixed text.
        let candidates = RegexBuilder::new(&combined)
            .dfa_size_limit(8 << 20)
            .build()
            .expect("built-in redaction patterns are valid");
        let classify = RegexSetBuilder::new(PATTERNS.map(|p| format!("^(?:{p})$")))
            .build()
            .expect("built-in redaction patterns are valid");
        (candidates, classify)
    });
    BUILTIN.clone()
}

fn next_char_boundary(text: &str, mut index: usize) -> usize {
    while index < text.len() && !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(text: &str) -> Redacted {
        Redactor::default().redact(text, &RedactionSet::builtin())
    }

    #[test]
    fn replaces_each_kind_with_its_placeholder() {
        let out = redact(
            "Mail a.b@example.com, call +49 30 1234567, IBAN DE89 3704 0044 0532 0130 00, \
             card 4111-1111-1111-1111, SSN 123-45-6789.",
        );
        assert_eq!(out.text, "Mail [email], call [phone], IBAN [iban], card [card], SSN [ssn].");
        assert_eq!(out.total(), 5);
    }

    #[test]
    fn only_kinds_in_the_set() {
        let set: RedactionSet = [RedactionKind::Email].into_iter().collect();
        let out = Redactor::default().redact("a@b.com 4111111111111111", &set);
        assert_eq!(out.text, "[email] 4111111111111111");
    }

    #[test]
    fn stray_number_before_a_valid_one() {
        let out = redact("ref 12 4111 1111 1111 1111");
        assert_eq!(out.text, "ref 12 [card]");
    }

    #[test]
    fn custom_after_builtin() {
        let custom = CustomRecognizer::new(RedactorName::new("employee_id"), r"\bEMP-[0-9]{6}\b")
            .unwrap_or_else(|e| panic!("{e}"));
        let redactor = Redactor::new(vec![custom]);
        let mut set = RedactionSet::builtin();
        set.insert(RedactionKind::Custom(RedactorName::new("employee_id")));
        let out = redactor.redact("EMP-123456 wrote a@b.com", &set);
        assert_eq!(out.text, "[employee_id] wrote [email]");
    }
}
