//! The scan text: what the recognizers read, with Unicode look-alikes folded to ASCII.
//!
//! Text reaches the gateway the way browsers and JSON carry it: `&nbsp;` arrives as U+00A0,
//! numbers are grouped with narrow or thin spaces, typed with fullwidth digits, or hyphenated with
//! U+2011 or U+2212, and pasted text brings soft hyphens and zero-width characters along. A
//! recognizer must see `4111 1111 1111 1111` in all of them, so before scanning:
//! - every Unicode space separator (U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F, U+3000) is a space;
//! - every dash (U+2010–U+2015, U+2212, U+FE58, U+FE63, U+FF0D) is `-`;
//! - the fullwidth forms U+FF01–U+FF5E are their ASCII characters (digits, letters, `+`, `@`…);
//! - soft hyphens and zero-width characters (U+00AD, U+200B–U+200D, U+2060, U+FEFF) are dropped.
//!
//! Findings are reported in scan offsets and mapped back to the text, so what is replaced is the
//! text as written, and everything outside a finding is passed on unchanged.

use std::borrow::Cow;

/// The scan text and, when it differs from the text, where each of its bytes came from.
pub(crate) struct Scan<'a> {
    text: Cow<'a, str>,
    /// `origin[i]` is the text offset of scan byte `i`; one extra entry for the end.
    origin: Option<Vec<usize>>,
}

impl<'a> Scan<'a> {
    /// Folds `text`; borrows it when there is nothing to fold (all ASCII, the common case).
    pub(crate) fn new(text: &'a str) -> Self {
        if text.is_ascii() || !text.chars().any(|c| fold(c) != Fold::Keep) {
            return Self { text: Cow::Borrowed(text), origin: None };
        }
        let mut scan = String::with_capacity(text.len());
        let mut origin = Vec::with_capacity(text.len() + 1);
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < text.len() {
            // ASCII is copied a run at a time; only the other characters are looked at one by one.
            let ascii =
                bytes[at..].iter().position(|b| !b.is_ascii()).map_or(text.len(), |offset| at + offset);
            scan.push_str(&text[at..ascii]);
            origin.extend(at..ascii);
            at = ascii;
            let Some(c) = text[at..].chars().next() else { break };
            let folded = match fold(c) {
                Fold::Keep => c,
                Fold::Drop => {
                    at += c.len_utf8();
                    continue;
                }
                Fold::To(ascii) => ascii,
            };
            let before = scan.len();
            scan.push(folded);
            origin.extend(std::iter::repeat_n(at, scan.len() - before));
            at += c.len_utf8();
        }
        origin.push(text.len());
        Self { text: Cow::Owned(scan), origin: Some(origin) }
    }

    /// The text the recognizers read.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The text range that scan range `start..end` stands for.
    pub(crate) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        match &self.origin {
            None => (start, end),
            Some(origin) => (origin[start], origin[end]),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fold {
    Keep,
    Drop,
    To(char),
}

fn fold(c: char) -> Fold {
    match c {
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
            Fold::To(' ')
        }
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => Fold::To('-'),
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(u32::from(c) - 0xFF01 + 0x21).map_or(Fold::Keep, Fold::To),
        '\u{00AD}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => Fold::Drop,
        _ => Fold::Keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_borrowed() {
        let scan = Scan::new("4111 1111");
        assert!(matches!(scan.text, Cow::Borrowed(_)));
        assert_eq!(scan.original(0, 4), (0, 4));
    }

    #[test]
    fn folds_spaces_dashes_fullwidth_and_drops_invisibles() {
        let text = "4111\u{00A0}1111\u{202F}22\u{00AD}22 \u{FF11}\u{FF12}\u{2011}3\u{200B}4 é";
        let scan = Scan::new(text);
        assert_eq!(scan.text(), "4111 1111 2222 12-34 é");
        // "2222" in the scan is "22\u{AD}22" in the text.
        let start = scan.text().find("2222").expect("found");
        let (from, to) = scan.original(start, start + 4);
        assert_eq!(&text[from..to], "22\u{00AD}22");
        // The fullwidth "12" maps back to its six bytes.
        let start = scan.text().find("12-").expect("found");
        let (from, to) = scan.original(start, start + 2);
        assert_eq!(&text[from..to], "\u{FF11}\u{FF12}");
        let (from, to) = scan.original(scan.text().len() - 2, scan.text().len());
        assert_eq!(&text[from..to], "é");
    }

    #[test]
    fn other_unicode_is_kept_borrowed() {
        let scan = Scan::new("Grüße, jürgen@example.de");
        assert!(matches!(scan.text, Cow::Borrowed(_)));
    }
}
