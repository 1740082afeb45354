//! Tool and context name patterns (`search_*`, `submit_?`), compiled once at load time.
//!
//! Names are `[A-Za-z0-9_.-]` (docs/design.md §6), so the pattern language is deliberately tiny: those
//! characters match themselves, `*` matches any run (also empty), `?` matches one byte. Anything
//! else is a load error rather than a silently different meaning. Common shapes (exact, prefix,
//! suffix, everything) get a fast path; the general case is the linear two-pointer matcher.

use std::fmt;
use std::sync::Arc;

use thiserror::Error;

/// A compiled name pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    pattern: Arc<str>,
    shape: Shape,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Shape {
    Exact,
    Everything,
    Prefix(String),
    Suffix(String),
    General,
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GlobError {
    /// The pattern is the empty string.
    #[error("empty pattern")]
    Empty,
    /// The pattern has a character names never contain.
    #[error(
        "invalid character {character:?} in pattern {pattern:?}: use letters, digits, '_', '.', '-', and the wildcards '*' and '?'"
    )]
    InvalidCharacter {
        /// The pattern.
        pattern: String,
        /// The offending character.
        character: char,
    },
    /// The pattern is longer than any name may be.
    #[error("pattern longer than 128 characters")]
    TooLong,
}

impl Glob {
    /// Compiles a pattern, refusing characters that names never contain.
    pub fn new(pattern: &str) -> Result<Self, GlobError> {
        if pattern.is_empty() {
            return Err(GlobError::Empty);
        }
        if pattern.len() > 128 {
            return Err(GlobError::TooLong);
        }
        if let Some(character) =
            pattern.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '*' | '?')))
        {
            return Err(GlobError::InvalidCharacter { pattern: pattern.to_owned(), character });
        }
        let stars = pattern.matches('*').count();
        let shape = if pattern.contains('?') {
            Shape::General
        } else if stars == 0 {
            Shape::Exact
        } else if pattern.chars().all(|c| c == '*') {
            Shape::Everything
        } else if stars == 1 && pattern.ends_with('*') {
            Shape::Prefix(pattern[..pattern.len() - 1].to_owned())
        } else if stars == 1 && pattern.starts_with('*') {
            Shape::Suffix(pattern[1..].to_owned())
        } else {
            Shape::General
        };
        Ok(Self { pattern: Arc::from(pattern), shape })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The pattern, shared (for explanations).
    pub fn shared(&self) -> Arc<str> {
        Arc::clone(&self.pattern)
    }

    /// True when the pattern has no wildcard.
    pub fn is_exact(&self) -> bool {
        self.shape == Shape::Exact
    }

    /// The literal text before the first wildcard (the whole pattern when exact).
    pub fn literal_prefix(&self) -> &str {
        let end = self.pattern.find(['*', '?']).unwrap_or(self.pattern.len());
        &self.pattern[..end]
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        match &self.shape {
            Shape::Exact => &*self.pattern == name,
            Shape::Everything => true,
            Shape::Prefix(prefix) => name.starts_with(prefix.as_str()),
            Shape::Suffix(suffix) => name.ends_with(suffix.as_str()),
            Shape::General => wildcard_match(self.pattern.as_bytes(), name.as_bytes()),
        }
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}

/// Linear-time wildcard matching: on a mismatch, retry from the last `*` one byte further.
fn wildcard_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut retry: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                retry = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match retry {
                Some((star, from)) => {
                    p = star + 1;
                    n = from + 1;
                    retry = Some((star, from + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(pattern: &str) -> Glob {
        Glob::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"))
    }

    #[test]
    fn shapes_match_like_the_general_matcher() {
        let names = ["", "a", "search", "search_docs", "docs_search", "s.x-y", "submit_1"];
        for pattern in ["search", "search_*", "*_search", "*", "s*s", "submit_?", "*a*", "?"] {
            let compiled = glob(pattern);
            for name in names {
                assert_eq!(
                    compiled.matches(name),
                    wildcard_match(pattern.as_bytes(), name.as_bytes()),
                    "{pattern} vs {name}"
                );
            }
        }
    }

    #[test]
    fn wildcards() {
        assert!(glob("search_*").matches("search_"));
        assert!(glob("search_*").matches("search_docs"));
        assert!(!glob("search_*").matches("search"));
        assert!(glob("*_docs").matches("search_docs"));
        assert!(glob("a*b*c").matches("aXXbYYc"));
        assert!(!glob("a*b*c").matches("aXXbYY"));
        assert!(glob("submit_?").matches("submit_1"));
        assert!(!glob("submit_?").matches("submit_12"));
        assert!(glob("**").matches("anything"));
        assert_eq!(glob("search_*").literal_prefix(), "search_");
        assert_eq!(glob("exact").literal_prefix(), "exact");
    }

    #[test]
    fn refuses_characters_names_never_have() {
        assert_eq!(Glob::new(""), Err(GlobError::Empty));
        assert!(matches!(Glob::new("search[ab]"), Err(GlobError::InvalidCharacter { character: '[', .. })));
        assert!(matches!(Glob::new("a b"), Err(GlobError::InvalidCharacter { .. })));
        assert_eq!(Glob::new(&"a".repeat(129)), Err(GlobError::TooLong));
    }
}
