//! Load errors: every problem in a policy document, with file, line and key path.
//!
//! Loading collects all semantic problems at once so an admin fixes a document in one round; a
//! structural TOML problem (syntax, unknown key, wrong type) stops parsing at the first one.

use std::fmt;

use thiserror::Error;

/// One problem in a policy document.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}:{line}: {key}: {message}")]
#[non_exhaustive]
pub struct PolicyError {
    /// The document's file name, as passed to [`Policy::parse`](crate::Policy::parse).
    pub file: String,
    /// The 1-based line of the offending value or key.
    pub line: usize,
    /// The key path, e.g. `rule[2].tools.allow[0]` (array indices are 0-based).
    pub key: String,
    /// What is wrong, for a person to act on.
    pub message: String,
}

/// All problems found in a policy document; never empty.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub struct PolicyErrors {
    /// The problems, in document order.
    pub errors: Vec<PolicyError>,
}

impl PolicyErrors {
    /// The problems, in document order.
    pub fn iter(&self) -> impl Iterator<Item = &PolicyError> {
        self.errors.iter()
    }

    /// How many problems there are.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Always false: an error value holds at least one problem.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
}

impl fmt::Display for PolicyErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.errors.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}
