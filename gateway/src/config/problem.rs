//! A problem found in a configuration file, with the line and key a person needs to fix it.
//!
//! `check-config` prints these; `run` refuses to start with them. They never contain secret
//! values, only key names and what was expected.

use std::fmt;

/// One thing wrong with a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line in the file, when the problem has a place.
    pub line: Option<usize>,
    /// Dotted key path, for example `sites.tasks.upstream`.
    pub key: String,
    /// What is wrong and what is expected instead.
    pub message: String,
}

/// Every problem found in one file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file the problems were found in, as given on the command line.
    pub file: String,
    /// The problems, in file order.
    pub problems: Vec<Problem>,
}

impl ConfigError {
    /// An error about the file as a whole (unreadable, not TOML).
    pub fn whole_file(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            problems: vec![Problem { line: None, key: String::new(), message: message.into() }],
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.key.is_empty()) {
            (Some(line), false) => write!(f, "line {line}: {}: {}", self.key, self.message),
            (Some(line), true) => write!(f, "line {line}: {}", self.message),
            (None, false) => write!(f, "{}: {}", self.key, self.message),
            (None, true) => write!(f, "{}", self.message),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {problem}", self.file)?;
        }
        Ok(())
    }
}

/// Maps byte offsets in a file to 1-based line numbers.
pub(crate) struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(offset, _)| offset + 1));
        Self { line_starts }
    }

    pub(crate) fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(index) => index + 1,
            Err(index) => index,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines() {
        let index = LineIndex::new("a = 1\nb = 2\n\nc = 3");
        assert_eq!(index.line_of(0), 1);
        assert_eq!(index.line_of(5), 1);
        assert_eq!(index.line_of(6), 2);
        assert_eq!(index.line_of(12), 3);
        assert_eq!(index.line_of(13), 4);
    }
}
