//! Words, as the stand-in model compares them: lower-case letters and digits, names split at
//! `_`, `-` and camelCase humps, filler words dropped, and `book`/`booking` counted as one.

/// Words too common to say anything about which tool is meant.
const FILLER: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "called", "can", "could", "do",
    "does", "for", "from", "give", "has", "have", "i", "in", "into", "is", "it", "its", "let", "me", "my",
    "named", "new", "of", "on", "or", "our", "please", "some", "that", "the", "their", "them", "then",
    "this", "to", "up", "us", "we", "what", "which", "will", "with", "would", "you", "your",
];

/// The meaningful words of a text or a name, in order, lower-case.
pub(super) fn words(text: &str) -> Vec<String> {
    all_words(text).into_iter().filter(|word| !is_filler(word)).collect()
}

/// Every word of a text or a name, filler included (a property named `from` or `to` is labelled
/// by exactly that word), in order, lower-case.
pub(super) fn all_words(text: &str) -> Vec<String> {
    split_humps(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `word` (lower-case) carries no meaning of its own.
pub(super) fn is_filler(word: &str) -> bool {
    FILLER.binary_search(&word).is_ok()
}

/// Whether two lower-case words are the same word, allowing for endings (`ticket`/`tickets`).
pub(super) fn same_word(left: &str, right: &str) -> bool {
    if left == right {
        return true;
    }
    let (short, long) = if left.len() <= right.len() { (left, right) } else { (right, left) };
    short.len() >= 4 && long.starts_with(short) && long.len() - short.len() <= 3
}

/// `bookFlight` → `book Flight`, so names written in camelCase split into words.
fn split_humps(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filler_is_sorted_for_binary_search() {
        assert!(FILLER.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn names_split_and_endings_match() {
        assert_eq!(words("bookFlight the open_ticket"), vec!["book", "flight", "open", "ticket"]);
        assert!(
            same_word("ticket", "tickets") && same_word("book", "booking") && !same_word("add", "address")
        );
    }
}
