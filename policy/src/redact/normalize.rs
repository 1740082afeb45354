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

/// The scan text and, when it differs from the text, where its bytes came from.
pub(crate) struct Scan<'a> {
    text: Cow<'a, str>,
    /// After each folded or dropped character: (scan offset, text offset). Between two such
    /// points the scan and the text are the same bytes, so an offset maps by its distance from
    /// the point before it. Empty when nothing was folded.
    shifts: Vec<(usize, usize)>,
}

impl<'a> Scan<'a> {
    /// Folds `text`; borrows it when there is nothing to fold (all ASCII, the common case).
    pub(crate) fn new(text: &'a str) -> Self {
        if text.is_ascii() {
            return Self { text: Cow::Borrowed(text), shifts: Vec::new() };
        }
        let bytes = text.as_bytes();
        let mut scan: Option<String> = None;
        let mut shifts = Vec::new();
        let mut copied = 0;
        let mut at = 0;
        // ASCII is skipped a run at a time; only the other characters are looked at one by one.
        while let Some(next) = super::digits::next_matching(bytes, at, |b| !b.is_ascii()) {
            at = next;
            let Some(c) = text[at..].chars().next() else { break };
            let next = at + c.len_utf8();
            let folded = match fold(c) {
                Fold::Keep => {
                    at = next;
                    continue;
                }
                Fold::Drop => None,
                Fold::To(ascii) => Some(ascii),
            };
            let out = scan.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..at]);
            out.extend(folded);
            shifts.push((out.len(), next));
            copied = next;
            at = next;
        }
        match scan {
            None => Self { text: Cow::Borrowed(text), shifts },
            Some(mut out) => {
                out.push_str(&text[copied..]);
                Self { text: Cow::Owned(out), shifts }
            }
        }
    }

    /// The text the recognizers read.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The text range that scan range `start..end` stands for.
    pub(crate) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        (self.to_text(start), self.to_text(end))
    }

    /// The text offset of scan offset `at`.
    fn to_text(&self, at: usize) -> usize {
        match self.shifts.partition_point(|&(scan, _)| scan <= at).checked_sub(1) {
            None => at,
            Some(index) => {
                let (scan, text) = self.shifts[index];
                text + (at - scan)
            }
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
