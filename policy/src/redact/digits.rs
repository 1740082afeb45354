//! Digits in the text: the index every number recognizer starts from.
//!
//! [`groups`] reads a text once and lists its maximal runs of ASCII digits. The number
//! recognizers (cards, SSNs, phones, IBANs, the national numbers, IPv4) walk that list instead of
//! scanning the text for digits each on its own, so a page is searched for digits once however
//! many recognizers read numbers.
//!
//! [`for_each_joined`] goes one step further for cards and SSNs: digit groups joined by single
//! separators from a recognizer's own set (`4111 1111`, `123-45-6789`). Recognizers try the whole
//! run and then shorter runs of whole groups, so a stray number next to a valid one
//! (`ref 12 4111 1111 1111 1111`) does not hide it.

/// The separators card numbers and SSNs are grouped with; both read the same runs.
pub(crate) const CARD_AND_SSN_SEPARATORS: &[u8] = b" -";

/// One group of digits: byte range in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Group {
    pub(crate) fn len(self) -> usize {
        self.end - self.start
    }
}

/// Every maximal run of ASCII digits in `text`, in order.
pub(crate) fn groups(text: &str) -> Vec<Group> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut groups = Vec::new();
    // Eight bytes at a time: the high bit of each byte of `digits` says "digit", and a group
    // starts or ends wherever that bit differs from the byte before, so the inner loop runs per
    // group edge, not per byte.
    let mut open: Option<usize> = None;
    for (word, chunk) in text.as_bytes().chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        let w = u64::from_le_bytes(bytes);
        // Per byte, with no borrow between bytes: at least `0`, at most `9`, and ASCII.
        let at_least_zero = (w | HIGH) - 0x3030_3030_3030_3030;
        let at_most_nine = 0xB9B9_B9B9_B9B9_B9B9 - (w & !HIGH);
        let digits = at_least_zero & at_most_nine & !w & HIGH;
        let before = (digits << 8) | if open.is_some() { 0x80 } else { 0 };
        let mut edges = digits ^ before;
        while edges != 0 {
            let at = word * 8 + edges.trailing_zeros() as usize / 8;
            edges &= edges - 1;
            match open.take() {
                Some(start) => groups.push(Group { start, end: at }),
                None => open = Some(at),
            }
        }
    }
    if let Some(start) = open {
        groups.push(Group { start, end: text.len() });
    }
    groups
}

/// The index of the first byte at or after `from` for which `wanted` holds.
pub(crate) fn next_matching(bytes: &[u8], from: usize, wanted: impl Fn(&u8) -> bool) -> Option<usize> {
    let mut index = from;
    // Whole 16-byte blocks without a match are skipped with one branch; the fold vectorizes.
    while let Some(block) = bytes.get(index..index + 16) {
        if block.iter().fold(false, |any, byte| any | wanted(byte)) {
            break;
        }
        index += 16;
    }
    bytes.get(index..)?.iter().position(wanted).map(|offset| index + offset)
}

/// Calls `each` with every maximal run of the digit `groups` of `text` joined by exactly one
/// byte of `separators`, that is not glued to a letter, digit or `_` on either side.
pub(crate) fn for_each_joined(
    text: &str,
    groups: &[Group],
    separators: &[u8],
    mut each: impl FnMut(&[Group]),
) {
    let bytes = text.as_bytes();
    let mut first = 0;
    while first < groups.len() {
        let last = joined_from(bytes, groups, first, separators);
        let (start, end) = (groups[first].start, groups[last].end);
        let glued_before = start > 0 && is_word_byte(bytes[start - 1]);
        let glued_after = end < bytes.len() && is_word_byte(bytes[end]);
        if !glued_before && !glued_after {
            each(&groups[first..=last]);
        }
        first = last + 1;
    }
}

/// The index of the last of `groups` joined to `groups[first]` by single bytes of `separators`.
pub(crate) fn joined_from(bytes: &[u8], groups: &[Group], first: usize, separators: &[u8]) -> usize {
    let mut last = first;
    while let Some(next) = groups.get(last + 1)
        && next.start == groups[last].end + 1
        && separators.contains(&bytes[groups[last].end])
    {
        last += 1;
    }
    last
}

/// Letters, digits and `_` (and any byte of a non-ASCII character, which may be a letter).
pub(crate) fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

/// The digits of `text[start..end]`, separators left out.
pub(crate) fn digits_of(text: &str, start: usize, end: usize) -> Vec<u8> {
    text.as_bytes()[start..end].iter().filter(|b| b.is_ascii_digit()).map(|b| b - b'0').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans<'a>(text: &'a str, separators: &[u8]) -> Vec<Vec<&'a str>> {
        let mut found = Vec::new();
        for_each_joined(text, &groups(text), separators, |run| {
            found.push(run.iter().map(|g| &text[g.start..g.end]).collect())
        });
        found
    }

    #[test]
    fn groups_joined_by_one_separator() {
        assert_eq!(spans("a 4111 1111-22 x", b" -"), vec![vec!["4111", "1111", "22"]]);
        assert_eq!(spans("12  34", b" "), vec![vec!["12"], vec!["34"]]);
        assert_eq!(spans("x12 34 5y", b" "), Vec::<Vec<&str>>::new());
        assert_eq!(spans("1,5", b" "), vec![vec!["1"], vec!["5"]]);
        assert_eq!(spans("7 -8", b" -"), vec![vec!["7"], vec!["8"]]);
    }

    #[test]
    fn groups_are_maximal_digit_runs_past_whole_blocks() {
        let text = format!("{}7 and {}90x1", "a".repeat(40), "b".repeat(17));
        let found: Vec<&str> = groups(&text).iter().map(|g| &text[g.start..g.end]).collect();
        assert_eq!(found, ["7", "90", "1"]);
        assert!(groups("no digits here at all, none").is_empty());
        assert!(groups("").is_empty());
        assert_eq!(next_matching(b"12", 5, u8::is_ascii_digit), None);
        // Every byte value, and runs across the 8-byte words.
        let all: Vec<u8> = (0u8..=255).collect();
        let text = String::from_utf8_lossy(&all).into_owned() + "0123456789abcdefgh12345678";
        let expected: Vec<(usize, usize)> = {
            let bytes = text.as_bytes();
            let mut runs = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                if bytes[at].is_ascii_digit() {
                    let start = at;
                    while at < bytes.len() && bytes[at].is_ascii_digit() {
                        at += 1;
                    }
                    runs.push((start, at));
                } else {
                    at += 1;
                }
            }
            runs
        };
        let found: Vec<(usize, usize)> = groups(&text).iter().map(|g| (g.start, g.end)).collect();
        assert_eq!(found, expected);
    }
}
