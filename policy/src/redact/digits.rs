//! Runs of digit groups: the shared first step of the number recognizers.
//!
//! A run is digit groups joined by single separators from a recognizer's own set (`4111 1111`,
//! `030-1234567`). Recognizers try the whole run and then shorter runs of whole groups, so a
//! stray number next to a valid one (`ref 12 4111 1111 1111 1111`) does not hide it.

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

/// Calls `each` with every maximal run of digit groups in `text` joined by exactly one byte of
/// `separators`, that is not glued to a letter, digit or `_` on either side. One buffer serves
/// every run, so a page full of numbers costs no allocation per number.
pub(crate) fn for_each_run(text: &str, separators: &[u8], mut each: impl FnMut(&[Group])) {
    let bytes = text.as_bytes();
    let mut groups = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if !bytes[index].is_ascii_digit() {
            index += 1;
            continue;
        }
        groups.clear();
        let mut position = index;
        loop {
            let start = position;
            while position < bytes.len() && bytes[position].is_ascii_digit() {
                position += 1;
            }
            groups.push(Group { start, end: position });
            let joined = position + 1 < bytes.len()
                && separators.contains(&bytes[position])
                && bytes[position + 1].is_ascii_digit();
            if !joined {
                break;
            }
            position += 1;
        }
        let glued_before = index > 0 && is_word_byte(bytes[index - 1]);
        let glued_after = position < bytes.len() && is_word_byte(bytes[position]);
        if !glued_before && !glued_after {
            each(&groups);
        }
        index = position.max(index + 1);
    }
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
        for_each_run(text, separators, |run| found.push(run.iter().map(|g| &text[g.start..g.end]).collect()));
        found
    }

    #[test]
    fn groups_joined_by_one_separator() {
        assert_eq!(spans("a 4111 1111-22 x", b" -"), vec![vec!["4111", "1111", "22"]]);
        assert_eq!(spans("12  34", b" "), vec![vec!["12"], vec!["34"]]);
        assert_eq!(spans("x12 34 5y", b" "), Vec::<Vec<&str>>::new());
        assert_eq!(spans("1,5", b" "), vec![vec!["1"], vec!["5"]]);
    }
}
