//! The set of kinds one (subject, site) has redacted: a small sorted list.

use std::fmt;

use serde::Serialize;

use super::kind::RedactionKind;

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
