//! Where a start tag ends, read from the page's bytes as the HTML tokenizer reads a tag: a `>`
//! ends it in every tag state except inside a quoted attribute value, and a value is quoted
//! only when its first character after `=` (and any white space) is `"` or `'`.
//!
//! The survey uses this to know where the last element a handler acts on has been read whole.
//! For a `<` that the tokenizer does not read as a tag (inside a comment, raw text or an
//! attribute value) the answer is meaningless but harmless: no handler waits for that element.

/// The tokenizer states of a start tag that differ in how they read `=`, quotes and spaces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// The tag name.
    Name,
    /// Before an attribute name, also after `/` and after a quoted value's stray character.
    BeforeName,
    /// An attribute name.
    AttributeName,
    /// Spaces after an attribute name.
    AfterName,
    /// After `=`, before the value's first character.
    BeforeValue,
    /// Inside a value quoted with `"`.
    DoubleQuoted,
    /// Inside a value quoted with `'`.
    SingleQuoted,
    /// Inside an unquoted value.
    Unquoted,
    /// Right after a quoted value's closing quote.
    AfterQuoted,
    /// Past the `>` that ends the tag.
    Ended,
}

/// The bytes that tell the tag states apart; every other byte reads as [`Class::Other`].
#[derive(Clone, Copy)]
enum Class {
    Other,
    Space,
    Equals,
    DoubleQuote,
    SingleQuote,
    Slash,
    Greater,
}

const STATES: usize = State::Ended as usize + 1;
const CLASSES: usize = Class::Greater as usize + 1;

/// The tokenizer's next state after a byte of `class` in `state`.
const fn next(state: State, class: Class) -> State {
    use {Class as C, State as S};
    match (state, class) {
        (S::Ended, _) => S::Ended,
        (S::DoubleQuoted, C::DoubleQuote) | (S::SingleQuoted, C::SingleQuote) => S::AfterQuoted,
        (S::DoubleQuoted | S::SingleQuoted, _) => state,
        (_, C::Greater) => S::Ended,
        (S::Name | S::Unquoted, C::Space) => S::BeforeName,
        // `/` goes through the self-closing state, which reads its next byte as before an
        // attribute name (in an unquoted value it is part of the value).
        (S::Name, C::Slash) => S::BeforeName,
        (S::Name | S::Unquoted, _) => state,
        (S::BeforeName, C::Space | C::Slash) => S::BeforeName,
        // Even `=` starts a name here.
        (S::BeforeName, _) => S::AttributeName,
        (S::AttributeName | S::AfterName, C::Equals) => S::BeforeValue,
        (S::AttributeName | S::AfterName, C::Slash) => S::BeforeName,
        (S::AttributeName | S::AfterName, C::Space) => S::AfterName,
        (S::AttributeName | S::AfterName, _) => S::AttributeName,
        (S::BeforeValue, C::Space) => S::BeforeValue,
        (S::BeforeValue, C::DoubleQuote) => S::DoubleQuoted,
        (S::BeforeValue, C::SingleQuote) => S::SingleQuoted,
        (S::BeforeValue, _) => S::Unquoted,
        (S::AfterQuoted, C::Space | C::Slash) => S::BeforeName,
        (S::AfterQuoted, _) => S::AttributeName,
    }
}

/// Each byte's class.
const CLASS: [Class; 256] = {
    let mut classes = [Class::Other; 256];
    let mut byte = 0;
    while byte < 256 {
        classes[byte] = match byte as u8 {
            b'\t' | b'\n' | b'\x0C' | b'\r' | b' ' => Class::Space,
            b'=' => Class::Equals,
            b'"' => Class::DoubleQuote,
            b'\'' => Class::SingleQuote,
            b'/' => Class::Slash,
            b'>' => Class::Greater,
            _ => Class::Other,
        };
        byte += 1;
    }
    classes
};

/// [`next`] for every state and class, so the loop reads one table entry a byte.
const NEXT: [[State; CLASSES]; STATES] = {
    const ALL_STATES: [State; STATES] = [
        State::Name,
        State::BeforeName,
        State::AttributeName,
        State::AfterName,
        State::BeforeValue,
        State::DoubleQuoted,
        State::SingleQuoted,
        State::Unquoted,
        State::AfterQuoted,
        State::Ended,
    ];
    const ALL_CLASSES: [Class; CLASSES] = [
        Class::Other,
        Class::Space,
        Class::Equals,
        Class::DoubleQuote,
        Class::SingleQuote,
        Class::Slash,
        Class::Greater,
    ];
    let mut table = [[State::Ended; CLASSES]; STATES];
    let mut state = 0;
    while state < STATES {
        let mut class = 0;
        while class < CLASSES {
            table[ALL_STATES[state] as usize][ALL_CLASSES[class] as usize] =
                next(ALL_STATES[state], ALL_CLASSES[class]);
            class += 1;
        }
        state += 1;
    }
    table
};

/// The index just past the `>` that ends the start tag whose `<` is at `at`, or `None` if the
/// page ends inside it. Kept out of line: the survey's loop over every `<` calls it for the few
/// tags a handler acts on.
#[inline(never)]
pub(super) fn end(page: &[u8], at: usize) -> Option<usize> {
    let mut state = State::Name;
    let mut index = at + 1;
    while let Some(&byte) = page.get(index) {
        index += 1;
        state = NEXT[state as usize][CLASS[usize::from(byte)] as usize];
        match state {
            State::Ended => return Some(index),
            // A quoted value runs to its quote, whatever it holds.
            State::DoubleQuoted | State::SingleQuoted => {
                let quote = if state == State::DoubleQuoted { b'"' } else { b'\'' };
                index += memchr::memchr(quote, page.get(index..)?)? + 1;
                state = State::AfterQuoted;
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use lol_html::{HtmlRewriter, Settings, element};
    use proptest::prelude::*;

    use super::*;

    fn tag(text: &str) -> Option<&str> {
        end(text.as_bytes(), 0).map(|index| &text[..index])
    }

    #[test]
    fn a_quoted_value_hides_its_angle_brackets() {
        assert_eq!(tag(r#"<form a=">" b='>'>x"#), Some(r#"<form a=">" b='>'>"#));
        assert_eq!(tag(r#"<form a = "x>y" >z"#), Some(r#"<form a = "x>y" >"#));
        assert_eq!(tag(r#"<form a="x>"#), None);
    }

    #[test]
    fn a_quote_that_opens_no_value_is_an_ordinary_character() {
        // In a name, in an unquoted value, after a name that `=` does not follow, or when
        // `=` itself starts a name.
        assert_eq!(tag(r#"<form "a>b""#), Some(r#"<form "a>"#));
        assert_eq!(tag(r#"<form a=b"c>d""#), Some(r#"<form a=b"c>"#));
        assert_eq!(tag(r#"<form a "b>c""#), Some(r#"<form a "b>"#));
        assert_eq!(tag(r#"<form ="x>y""#), Some(r#"<form ="x>"#));
        assert_eq!(tag(r#"<form a="b"c="d>e">f"#), Some(r#"<form a="b"c="d>e">"#));
        assert_eq!(tag(r#"<form a="b""c>""#), Some(r#"<form a="b""c>"#));
    }

    #[test]
    fn slashes_and_empty_values_end_where_the_tokenizer_ends_them() {
        assert_eq!(tag("<form/>x"), Some("<form/>"));
        assert_eq!(tag(r#"<form/a="x>">y"#), Some(r#"<form/a="x>">"#));
        assert_eq!(tag(r#"<form a=b/"c>"d"#), Some(r#"<form a=b/"c>"#));
        assert_eq!(tag("<form a=>x"), Some("<form a=>"));
        assert_eq!(tag(r#"<form a=/"b>"c>"#), Some(r#"<form a=/"b>"#));
        assert_eq!(tag(r#"<form /="b>"c>"#), Some(r#"<form /="b>"#));
        assert_eq!(tag(r#"<form a/="b>"c>"#), Some(r#"<form a/="b>"#));
        assert_eq!(tag("<form\n\ta\n=\n'b>'>"), Some("<form\n\ta\n=\n'b>'>"));
        assert_eq!(tag("<form"), None);
    }

    /// Where lol_html says the first `<form>` start tag of `page` ends, if it reads one.
    fn lol_html_end(page: &[u8]) -> Option<usize> {
        let mut found = None;
        let handler = element!("form", |element| {
            found.get_or_insert(element.source_location().bytes().end);
            Ok(())
        });
        let mut rewriter =
            HtmlRewriter::new(Settings::new().append_element_content_handler(handler), |_: &[u8]| {});
        rewriter.write(page).ok()?;
        rewriter.end().ok()?;
        found
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        #[test]
        fn the_end_is_where_lol_html_ends_the_tag(
            // What ends the name `form` (anything else would make another element).
            after_name in prop::sample::select(&[" ", "/", "\n", ">"][..]),
            pieces in prop::collection::vec(
                prop::sample::select(
                    &[
                        "a", "=", "\"", "'", "/", ">", " ", "\n", "<", "x", "\t", "\r", "\x0C", "\x0B", "\0", "é",
                        "&", "`", "!", "-",
                    ][..],
                ),
                0..16,
            )
        ) {
            let page = format!("<form{after_name}{}><p>z</p>", pieces.concat());
            prop_assert_eq!(end(page.as_bytes(), 0), lol_html_end(page.as_bytes()), "{}", page);
        }
    }
}
