//! National identification numbers: the German tax identification number, the French NIR and
//! the UK National Insurance number, each with its own check, plus the scanning helpers they share.
//!
//! Each recognizer is anchored on runs of ASCII digits, which ordinary prose has few of: it walks
//! the text's digit groups (`digits::groups`, listed once for every number recognizer) and reads
//! the kind's shape at each and nowhere else. A finding starts and ends at a token boundary: not next to
//! a letter, a digit or `_`, and not glued to another number by `.`, `,`, `-`, `/` or a leading
//! `+` (`+12345678903` is a phone number, `3.14159265358` a decimal). The IP recognizers (`ip`)
//! use the same scanning helpers.

mod de_tax_id;
mod fr_nir;
mod uk_nino;

pub(crate) use de_tax_id::find as find_de_tax_id;
pub(crate) use fr_nir::find as find_fr_nir;
pub(crate) use uk_nino::find as find_uk_nino;

/// Whether the character before byte `start` is a letter, a digit or `_` (Unicode-aware).
pub(super) fn word_before(text: &str, start: usize) -> bool {
    text.get(..start)
        .and_then(|head| head.chars().next_back())
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the character at byte `end` is a letter, a digit or `_` (Unicode-aware).
pub(super) fn word_after(text: &str, end: usize) -> bool {
    text.get(end..).and_then(|tail| tail.chars().next()).is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `text[start..end]` stands alone as a number: not inside a longer word or number.
/// With `grouped`, a digit group one space away on either side also counts as part of a longer
/// number (`49 12 345 678 903` is not a tax id written in groups).
pub(super) fn standalone(text: &str, start: usize, end: usize, grouped: bool) -> bool {
    let bytes = text.as_bytes();
    let byte = |index: Option<usize>| index.and_then(|i| bytes.get(i)).copied();
    let before = byte(start.checked_sub(1));
    let before2 = byte(start.checked_sub(2));
    let after = byte(Some(end));
    let after2 = byte(Some(end + 1));
    let is_digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
    let joiner = |b: Option<u8>| matches!(b, Some(b'.' | b'-' | b'/'));
    if word_before(text, start) || word_after(text, end) || before == Some(b'+') {
        return false;
    }
    if (joiner(before) && is_digit(before2)) || (joiner(after) && is_digit(after2)) {
        return false;
    }
    // A comma joins digits as a decimal or thousands separator (`12345,6`, `1,234`): one to three
    // digits on the other side. A CSV field (`…,19412…,09/02/2021`) is not joined.
    let short_run = |digits: &mut dyn Iterator<Item = &u8>, beyond: Option<u8>| {
        let count = digits.take_while(|b| b.is_ascii_digit()).count();
        (1..=3).contains(&count) && !matches!(beyond, Some(b'/' | b'-' | b':' | b'.'))
    };
    if before == Some(b',') && start >= 2 {
        let run = bytes[..start - 1].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let beyond = (start - 1).checked_sub(run + 1).map(|i| bytes[i]);
        if short_run(&mut bytes[..start - 1].iter().rev(), beyond) && run > 0 {
            return false;
        }
    }
    if after == Some(b',') {
        let run = bytes[end + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let beyond = bytes.get(end + 1 + run).copied();
        if short_run(&mut bytes[end + 1..].iter(), beyond) {
            return false;
        }
    }
    !(grouped && ((before == Some(b' ') && is_digit(before2)) || (after == Some(b' ') && is_digit(after2))))
}

/// Reads groups of the given `lengths` from `from`, separated by `separator` (`None`: written
/// together), where `allowed(i, byte)` says whether the `i`-th character of the value may be
/// `byte`; returns the `N` characters without separators and the end of the last group.
pub(super) fn read_groups<const N: usize>(
    bytes: &[u8],
    from: usize,
    lengths: &[usize],
    separator: Option<u8>,
    allowed: impl Fn(usize, u8) -> bool,
) -> Option<([u8; N], usize)> {
    let mut digits = [0u8; N];
    let mut filled = 0;
    let mut at = from;
    for (index, &length) in lengths.iter().enumerate() {
        if index > 0
            && let Some(separator) = separator
        {
            if bytes.get(at) != Some(&separator) {
                return None;
            }
            at += 1;
        }
        let group = bytes.get(at..at + length)?;
        if !group.iter().enumerate().all(|(offset, &byte)| allowed(filled + offset, byte)) {
            return None;
        }
        digits.get_mut(filled..filled + length)?.copy_from_slice(group);
        filled += length;
        at += length;
    }
    (filled == N).then_some((digits, at))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::redact::finding::Finding;

    /// What `find` reports in `text`: each span's text and whether it is valid.
    pub(in crate::redact::national) fn found_by(find: Find, text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        find(text, &crate::redact::digits::groups(text), &mut out);
        out.iter().map(|f| (text[f.start..f.end].to_owned(), f.valid)).collect()
    }

    /// The expectation of one valid finding.
    pub(in crate::redact::national) fn valid(span: &str) -> Vec<(String, bool)> {
        vec![(span.to_owned(), true)]
    }

    /// The expectation of one look-alike.
    pub(in crate::redact::national) fn look_alike(span: &str) -> Vec<(String, bool)> {
        vec![(span.to_owned(), false)]
    }

    /// A recognizer's entry point.
    type Find = fn(&str, &[crate::redact::digits::Group], &mut Vec<Finding>);

    #[test]
    fn standalone_boundaries() {
        // (text, start, end, grouped, expected)
        let cases = [
            ("12345", 0, 5, false, true),
            ("x 12345.", 2, 7, false, true),
            ("a12345", 1, 6, false, false),
            ("12345b", 0, 5, false, false),
            ("é12345", 2, 7, false, false),
            ("+12345", 1, 6, false, false),
            ("1.12345", 2, 7, false, false),
            ("12345,6", 0, 5, false, false),
            ("1,12345", 2, 7, false, false),
            ("12345,09/02/2021", 0, 5, false, true),
            ("2021,12345,40782536964", 5, 10, false, true),
            ("12345-6", 0, 5, false, false),
            ("12345-x", 0, 5, false, true),
            ("(12345)", 1, 6, false, true),
            ("9 12345", 2, 7, false, true),
            ("9 12345", 2, 7, true, false),
            ("12345 9", 0, 5, true, false),
            ("12345 x", 0, 5, true, true),
        ];
        for (text, start, end, grouped, expected) in cases {
            assert_eq!(standalone(text, start, end, grouped), expected, "{text:?}");
        }
    }

    #[test]
    fn reads_groups() {
        let digit = |_: usize, byte: u8| byte.is_ascii_digit();
        assert_eq!(read_groups::<5>(b"12 345x", 0, &[2, 3], Some(b' '), digit), Some((*b"12345", 6)));
        assert_eq!(read_groups::<5>(b"12345", 0, &[2, 3], None, digit), Some((*b"12345", 5)));
        assert_eq!(read_groups::<5>(b"12-345", 0, &[2, 3], Some(b' '), digit), None);
        assert_eq!(read_groups::<5>(b"12 34", 0, &[2, 3], Some(b' '), digit), None);
        assert_eq!(read_groups::<5>(b"1A345", 0, &[2, 3], None, digit), None);
        let letter_second = |i: usize, byte: u8| byte.is_ascii_digit() || (i == 1 && byte == b'A');
        assert_eq!(read_groups::<5>(b"1A 345", 0, &[2, 3], Some(b' '), letter_second), Some((*b"1A345", 6)));
    }

    /// Every kind's valid sample is found whole next to spaces and punctuation, at the start and
    /// end of the text, and never whole when glued to a letter, a digit, `_` or `é`.
    #[test]
    fn samples_between_neighbours() {
        let samples: [(Find, &str); 9] = [
            (find_de_tax_id, "86095742719"),
            (find_de_tax_id, "86 095 742 719"),
            (find_fr_nir, "185057800608491"),
            (find_fr_nir, "1 85 05 78 006 084 91"),
            (find_uk_nino, "AB123456C"),
            (find_uk_nino, "AB 12 34 56 C"),
            (crate::redact::ip::find_ipv4, "192.0.2.55"),
            (|text, _, out| crate::redact::ip::find_ipv6(text, out), "2001:db8::55"),
            (|text, _, out| crate::redact::ip::find_ipv6(text, out), "::ffff:192.0.2.55"),
        ];
        let apart = [
            ("", ""),
            (" ", " "),
            ("(", ")"),
            ("\"", "\","),
            ("[", "];"),
            ("\n", "."),
            ("'", "'!"),
            ("<", ">"),
        ];
        let glued = [("x", ""), ("", "x"), ("1", ""), ("", "1"), ("_", ""), ("", "_"), ("é", ""), ("", "é")];
        for (find, sample) in samples {
            for (before, after) in apart {
                let text = format!("{before}{sample}{after}");
                let mut out = Vec::new();
                find(&text, &crate::redact::digits::groups(&text), &mut out);
                let spans: Vec<&str> =
                    out.iter().filter(|f| f.valid).map(|f| &text[f.start..f.end]).collect();
                assert_eq!(spans, [sample], "{text:?}");
            }
            for (before, after) in glued {
                let text = format!("{before}{sample}{after}");
                let mut out = Vec::new();
                find(&text, &crate::redact::digits::groups(&text), &mut out);
                let spans: Vec<&str> =
                    out.iter().filter(|f| f.valid).map(|f| &text[f.start..f.end]).collect();
                // Glued, the sample is never taken whole (what is left may still be a value: a
                // NINO without its suffix, the address after `x2001:` as in `key:2001:db8::1`).
                assert!(!spans.contains(&sample), "{text:?}: {spans:?}");
            }
        }
    }

    proptest::proptest! {
        /// Whatever the text, every recognizer returns spans on character boundaries, in order
        /// within the text, that neither start nor end inside a word.
        #[test]
        fn findings_are_whole_tokens(
            text in "(1|12|255|0|9|\\.|:|::| |é|ü|§|ver |x|AB|ab|C|c|2A|-|\\+|/|f|_|[0-9a-fA-Z .:]{1,4}|\
                86 095 742 719|185057800608491|1 85 05 78 006 084 91|CE 12 34 56|192\\.0\\.2\\.1|2001:db8){0,12}"
        ) {
            let finders: [Find; 5] = [
                find_de_tax_id,
                find_fr_nir,
                find_uk_nino,
                crate::redact::ip::find_ipv4,
                |text, _, out| crate::redact::ip::find_ipv6(text, out),
            ];
            for find in finders {
                let mut out = Vec::new();
                find(&text, &crate::redact::digits::groups(&text), &mut out);
                for finding in out {
                    proptest::prop_assert!(finding.start < finding.end && finding.end <= text.len());
                    proptest::prop_assert!(text.is_char_boundary(finding.start) && text.is_char_boundary(finding.end));
                    proptest::prop_assert!(!word_before(&text, finding.start) && !word_after(&text, finding.end));
                }
            }
        }
    }
}
