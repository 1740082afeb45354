//! The scan text: what the recognizers read, with Unicode look-alikes folded to ASCII.
//!
//! Text reaches the gateway the way browsers and JSON carry it: `&nbsp;` arrives as U+00A0,
//! numbers are grouped with narrow or thin spaces, typed with fullwidth digits, or hyphenated with
//! U+2011 or U+2212, and pasted text brings soft hyphens and zero-width characters along. A
//! recognizer must see `4111 1111 1111 1111` in all of them, so before scanning:
//! - every Unicode space separator (U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F, U+3000) is a space;
//! - every dash (U+2010–U+2015, U+2212, U+FE58, U+FE63, U+FF0D) is `-`;
//! - the fullwidth forms U+FF01–U+FF5E are their ASCII characters (digits, letters, `+`, `@`…);
//! - every other decimal digit is its ASCII digit: Arabic-Indic `٤١١١`, Persian `۴`, Devanagari
//!   `४`, Bengali, Thai, mathematical bold `𝟒`… (Unicode's category Nd);
//! - soft hyphens and zero-width characters (U+00AD, U+200B–U+200D, U+2060, U+FEFF) are dropped;
//! - a URL's percent escapes (`john.doe%40example.com`, `%EF%BC%94`) and the `\uXXXX` escapes
//!   of JSON and JavaScript text (`j\u00f6rg@example.de`, `4111\u00a01111`, a surrogate pair as
//!   one character) are read as the character they stand for, then folded like the rest. The
//!   model reads through both: a Python tool that prints JSON escapes every character outside
//!   ASCII, and a logged URL carries its query's `@` as `%40`. Only an escape that decodes to a
//!   whole character that is not a delimiter counts (letters, digits, `-._~@+`, anything outside
//!   ASCII, and for `\u` a space): a decoded `/`, `#`, `&`, `:` or `"` would cut the userinfo,
//!   query value or JSON string that holds a secret short.
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
    /// Folds `text`; borrows it when there is nothing to fold (ASCII without `%` or `\`, the
    /// common case).
    pub(crate) fn new(text: &'a str) -> Self {
        // Without short-circuits, so that the search for them vectorizes.
        let may_fold = |&byte: &u8| (byte >= 0x80) | (byte == b'%') | (byte == b'\\');
        let bytes = text.as_bytes();
        let mut scan: Option<String> = None;
        let mut shifts = Vec::new();
        let mut copied = 0;
        let mut at = 0;
        // Other bytes are skipped a run at a time; only these are looked at one by one.
        while let Some(next) = super::digits::next_matching(bytes, at, may_fold) {
            at = next;
            let Some((folded, end)) = read_at(text, at) else {
                at += text[at..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let out = scan.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..at]);
            out.extend(folded);
            shifts.push((out.len(), end));
            copied = end;
            at = end;
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

/// What the scan holds for the text at `at` (a character, `%`, or `\`): `None` when it keeps
/// the text's own bytes, else the character that `at..end` reads as (or none, when dropped).
fn read_at(text: &str, at: usize) -> Option<(Option<char>, usize)> {
    // The character read, where it ends, and for an escape whether it may stand for a space.
    let (c, end, escape) = match text.as_bytes()[at] {
        b'%' => percent_escape(text.as_bytes(), at).map(|(c, end)| (c, end, Some(false)))?,
        b'\\' => unicode_escape(text.as_bytes(), at).map(|(c, end)| (c, end, Some(true)))?,
        _ => text[at..].chars().next().map(|c| (c, at + c.len_utf8(), None))?,
    };
    let folded = match fold(c) {
        Fold::Keep if escape.is_none() => return None,
        Fold::Keep => Some(c),
        Fold::Drop => None,
        Fold::To(ascii) => Some(ascii),
    };
    let Some(spaces) = escape else {
        return Some((folded, end));
    };
    // An escape that reads as a delimiter stays escaped: decoded, `%2F`, `%23`, `%26` or
    // `\u0022` would end a URL's userinfo, a query value or a JSON string early, and cut the
    // secret the context recognizers take whole in two.
    let keeps_structure = |c: char| {
        !c.is_ascii() || c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '@' | '+')
    };
    folded.is_none_or(|c| keeps_structure(c) || (spaces && c == ' ')).then_some((folded, end))
}

/// The character that the percent escapes at `at` encode in UTF-8 (`%40`, `%C3%A9`), and where
/// they end; `None` when they do not make one whole character.
fn percent_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let byte_at = |at: usize| match bytes.get(at..at + 3)? {
        [b'%', high, low] => Some(hex_value(*high)? << 4 | hex_value(*low)?),
        _ => None,
    };
    let first = byte_at(at)?;
    let length = match first {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let mut encoded = [first, 0, 0, 0];
    for (index, slot) in encoded.iter_mut().enumerate().take(length).skip(1) {
        *slot = byte_at(at + 3 * index)?;
    }
    let c = std::str::from_utf8(&encoded[..length]).ok()?.chars().next()?;
    Some((c, at + 3 * length))
}

/// The character of the `\uXXXX` escape at `at` (or of a surrogate pair of two), and where it
/// ends; `None` for anything else, a lone surrogate included.
fn unicode_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let unit_at = |at: usize| match bytes.get(at..at + 6)? {
        [b'\\', b'u', digits @ ..] => {
            digits.iter().try_fold(0u32, |unit, &digit| Some(unit << 4 | u32::from(hex_value(digit)?)))
        }
        _ => None,
    };
    let unit = unit_at(at)?;
    match unit {
        0xD800..=0xDBFF => {
            let low = unit_at(at + 6).filter(|low| (0xDC00..=0xDFFF).contains(low))?;
            let c = char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?;
            Some((c, at + 12))
        }
        _ => Some((char::from_u32(unit)?, at + 6)),
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit).to_digit(16).and_then(|value| u8::try_from(value).ok())
}

/// The zero of every run of ten decimal digits outside ASCII (Unicode's general category Nd, as
/// of Unicode 14; the fullwidth digits are folded with the other fullwidth forms), ascending.
/// Each run holds its script's 0 to 9 in order.
const DIGIT_ZEROS: [u32; 64] = [
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0,
    0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50,
    0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136,
    0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50,
    0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0,
    0x1E950, 0x1FBF0,
];

/// The ASCII digit that a decimal digit of another script (`٤`, `४`, `𝟒`) stands for.
fn decimal_digit(c: char) -> Option<char> {
    let code = u32::from(c);
    let index = DIGIT_ZEROS.partition_point(|&zero| zero <= code).checked_sub(1)?;
    char::from_digit(code - DIGIT_ZEROS[index], 10)
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
        _ => decimal_digit(c).map_or(Fold::Keep, Fold::To),
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

    #[test]
    fn percent_escapes_are_read_as_their_characters() {
        let text = "john.doe%40example.com j%C3%B6rg %EF%BC%94%2b1";
        let scan = Scan::new(text);
        assert_eq!(scan.text(), "john.doe@example.com jörg 4+1");
        let (from, to) = scan.original(0, "john.doe@example.com".len());
        assert_eq!(&text[from..to], "john.doe%40example.com");
        let start = scan.text().find("jörg").expect("found");
        let (from, to) = scan.original(start, start + "jörg".len());
        assert_eq!(&text[from..to], "j%C3%B6rg");
    }

    #[test]
    fn unicode_escapes_are_read_as_their_characters() {
        let text = r"4111\u00a01111 j\u00F6rg \ud83d\ude00 \u0040";
        let scan = Scan::new(text);
        assert_eq!(scan.text(), "4111 1111 jörg \u{1F600} @");
        let (from, to) = scan.original(0, "4111 1111".len());
        assert_eq!(&text[from..to], r"4111\u00a01111");
    }

    #[test]
    fn escaped_delimiters_and_broken_escapes_stay_as_written() {
        for text in [
            "%2F %23 %26 %3A %3D %3F %20 %22 %25",
            r"\u0022 \u0026 \u002f \u003a \u003c",
            r"%zz %4 %C3 %C3%28 %FF %E2%82 \u12 \uzzzz \ud83d x \ude00 \x40",
            "100% sure, 50%",
        ] {
            let scan = Scan::new(text);
            assert!(matches!(scan.text, Cow::Borrowed(_)), "{text:?} became {:?}", scan.text());
        }
    }

    #[test]
    fn decimal_digits_of_every_script_are_ascii_digits() {
        let text =
            "\u{664}\u{661}\u{661}\u{661} \u{6F4}\u{6F0} \u{96A}\u{969} \u{E54} \u{1D7D2}\u{1D7CF} \u{1FBF9}";
        assert_eq!(Scan::new(text).text(), "4111 40 43 4 41 9");
        // Every zero starts a run of ten, and nothing outside the runs is a digit.
        for zero in DIGIT_ZEROS {
            for value in 0..10 {
                let digit = char::from_u32(zero + value).expect("a character");
                assert_eq!(decimal_digit(digit), char::from_digit(value, 10), "{digit:?}");
            }
        }
        for other in ['\u{65F}', '\u{66A}', '\u{970}', '\u{1D7CD}', 'é', '\u{4E00}'] {
            assert_eq!(decimal_digit(other), None, "{other:?}");
        }
    }
}
