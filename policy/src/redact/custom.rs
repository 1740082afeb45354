//! Admin-defined recognizers: a `[[redactor]]` name and a regex, replaced by `[<name> N]`.
//!
//! They run after the built-in recognizers, each as one pass over the already-redacted text; the
//! regex is compiled once at load time with a size limit so a pathological pattern is a load error.

use regex::{Regex, RegexBuilder};

use super::kind::RedactionKind;
use super::placeholders::Placeholders;
use crate::ids::RedactorName;

/// A compiled admin regex with its name.
#[derive(Clone, Debug)]
pub struct CustomRecognizer {
    name: RedactorName,
    regex: Regex,
}

impl CustomRecognizer {
    /// Compiles `pattern` (Rust `regex` syntax) as the recognizer `name`.
    pub fn new(name: RedactorName, pattern: &str) -> Result<Self, regex::Error> {
        let regex = RegexBuilder::new(pattern).size_limit(1 << 20).dfa_size_limit(4 << 20).build()?;
        Ok(Self { name, regex })
    }

    /// The recognizer's name.
    pub fn name(&self) -> &RedactorName {
        &self.name
    }

    /// Replaces every non-empty match in `text` with its placeholder in `scope`; returns how many
    /// there were.
    pub(crate) fn apply(&self, text: &mut String, scope: &mut Placeholders) -> usize {
        let kind = RedactionKind::Custom(self.name.clone());
        let mut count = 0;
        let mut out = String::new();
        let mut copied = 0;
        for found in self.regex.find_iter(text).filter(|found| !found.is_empty()) {
            out.push_str(&text[copied..found.start()]);
            out.push_str(scope.issue(&kind, found.as_str()));
            copied = found.end();
            count += 1;
        }
        if count > 0 {
            out.push_str(&text[copied..]);
            *text = out;
        }
        count
    }
}
