//! Admin-defined recognizers: a `[[redactor]]` name and a regex, replaced by `[<name>]`.
//!
//! They run after the built-in recognizers, each as one pass over the already-redacted text; the
//! regex is compiled once at load time with a size limit so a pathological pattern is a load error.

use regex::{Regex, RegexBuilder};

use crate::ids::RedactorName;

/// A compiled admin regex with its name.
#[derive(Clone, Debug)]
pub struct CustomRecognizer {
    name: RedactorName,
    regex: Regex,
    placeholder: String,
}

impl CustomRecognizer {
    /// Compiles `pattern` (Rust `regex` syntax) as the recognizer `name`.
    pub fn new(name: RedactorName, pattern: &str) -> Result<Self, regex::Error> {
        let regex = RegexBuilder::new(pattern).size_limit(1 << 20).dfa_size_limit(4 << 20).build()?;
        let placeholder = format!("[{name}]");
        Ok(Self { name, regex, placeholder })
    }

    /// The recognizer's name.
    pub fn name(&self) -> &RedactorName {
        &self.name
    }

    /// Replaces every match in `text`; returns how many there were.
    pub(crate) fn apply(&self, text: &mut String) -> usize {
        let mut count = 0;
        let replaced = self.regex.replace_all(text, |_: &regex::Captures<'_>| {
            count += 1;
            self.placeholder.clone()
        });
        if count > 0 {
            *text = replaced.into_owned();
        }
        count
    }
}
