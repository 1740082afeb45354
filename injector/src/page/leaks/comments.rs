//! Whether any comment of a whole page could hold tool markup, decided on the raw bytes before
//! the page is parsed. When none can, the filter leaves out its comment handler, and lol_html
//! scans for tags instead of lexing every byte (about a fifth of a filtered page's rewrite).
//!
//! The answer may say "could" when no comment does; it must never say "cannot" when one does.
//! A marker (`<tool`, `<context`, `toolname`, any case; `find_marker` is stricter) sits inside a
//! comment only if the comment opened before it and has not closed:
//!
//! - a `<!--` comment closes at the first `-->` after its opening (or earlier, for `<!-->` and
//!   `<!--->`). If one holds the marker, so does the last `<!--` before the marker, with no
//!   `-->` between that opening's end and the marker;
//! - a bogus comment (`<!…`, `<?…`, `</` and a non-letter) closes at the first `>`. If one holds
//!   the marker, the last `<!`, `<?` or `</` before it has no `>` between.
//!
//! Tokenizer states where these are not comments (script data, attribute values, raw text)
//! only make the answer "could" more often. The bytes are those lol_html decodes: the encodings
//! it parses are ASCII-compatible, and in their multi-byte forms `<`, `!`, `?`, `/`, `-` and `>`
//! are never part of another character.

/// Whether some comment of `page` could hold tool markup; `each_tag` is called with the
/// position of every `<` of the page, in order, so a caller that reads tags needs no pass of
/// its own. One pass, in linear time: only `<` and `>` change what may be open, and `toolname`
/// (which holds neither) is looked for only in the stretches between them where something is.
/// While nothing is open a `>` changes nothing, so the pass then only looks for `<`; a `<`
/// that opens no comment (a start tag, or `</` and a letter, which is an end tag in every
/// tokenizer state) leaves it so. Once the answer is "could", only `<` are sought.
pub(in crate::page) fn may_hide_markup(page: &[u8], mut each_tag: impl FnMut(usize)) -> bool {
    let starts = |at: usize, marker: &[u8]| {
        page.get(at..at + marker.len()).is_some_and(|slice| slice.eq_ignore_ascii_case(marker))
    };
    let names_tool =
        |stretch: &[u8]| stretch.windows(8).any(|window| window.eq_ignore_ascii_case(b"toolname"));
    let mut could = false;
    let mut open = Open::default();
    // Where the stretch since the last `<` or `>` starts, while something is open.
    let mut stretch = 0;
    let mut brackets = Brackets::new(page);
    loop {
        if could || !open.any() {
            // Nothing open, or the answer known: only `<` count, and most open nothing (the
            // tight loop most of a page goes through).
            if brackets.closing {
                brackets.restart(stretch, false);
            }
            let opening = loop {
                let Some(at) = brackets.next() else { break None };
                each_tag(at);
                if !could && opens_something(page, at) {
                    break Some(at);
                }
            };
            let Some(at) = opening else { break };
            stretch = at + 1;
            open.opened_at(page, at);
            continue;
        }
        // Something is open: each `<` and `>` may change that, and the text between them is
        // looked at.
        if !brackets.closing {
            brackets.restart(stretch, true);
        }
        let Some(at) = brackets.next() else { break };
        could = names_tool(&page[stretch..at]);
        stretch = at + 1;
        if page[at] == b'>' {
            open.closed_at(page, at);
            continue;
        }
        each_tag(at);
        if could {
            continue;
        }
        if opens_something(page, at) {
            open.opened_at(page, at);
        } else if page.get(at + 1).is_some_and(u8::is_ascii_alphabetic) {
            could = starts(at, b"<tool") || starts(at, b"<context");
        }
    }
    could || (open.any() && names_tool(&page[stretch..]))
}

/// What may be open at a point of the page.
#[derive(Default)]
struct Open {
    /// The last `<!--` seen has no `-->` after its end.
    dashed: bool,
    /// Where that `<!--` ends.
    dashed_end: usize,
    /// The last `<!`, `<?` or `</` and a non-letter seen has no `>` after it.
    bogus: bool,
}

impl Open {
    fn any(&self) -> bool {
        self.dashed || self.bogus
    }

    /// After the `<` at `at`, which [`opens_something`].
    fn opened_at(&mut self, page: &[u8], at: usize) {
        self.bogus = true;
        if page.get(at + 1..at + 4) == Some(b"!--") {
            (self.dashed, self.dashed_end) = (true, at + 4);
        }
    }

    /// After the `>` at `at`: it closes a bogus comment, and a `<!--` comment when it ends a
    /// `-->` past that comment's opening.
    fn closed_at(&mut self, page: &[u8], at: usize) {
        self.bogus = false;
        if at >= self.dashed_end + 2 && &page[at - 2..at] == b"--" {
            self.dashed = false;
        }
    }
}

/// Whether the `<` at `at` opens a comment or a bogus comment: `<!`, `<?`, or `</` and no
/// letter. A start tag, or `</` and a letter (an end tag in every tokenizer state), opens none.
fn opens_something(page: &[u8], at: usize) -> bool {
    match page.get(at + 1) {
        Some(b'!' | b'?') => true,
        Some(b'/') => !page.get(at + 2).is_some_and(u8::is_ascii_alphabetic),
        _ => false,
    }
}

/// The `<` of a page (with `closing`, its `<` and `>`), in order. The page is read eight bytes
/// at a time: each word's brackets become the high bit of their byte in one mask, and the
/// brackets are then taken from the mask lowest first, with no search set up per bracket. On a
/// dense page (a bracket every dozen bytes) that is a few instructions a bracket and about two
/// a byte. After [`NEAR_WORDS`] words without one (a paragraph of text), `memchr` finds the next,
/// so a page of long text is read at a vectorised search's speed.
struct Brackets<'a> {
    page: &'a [u8],
    /// Whether `>` counts too.
    closing: bool,
    /// Where the current word starts (any offset: words need no alignment).
    word: usize,
    /// The brackets of the current word not taken yet, the high bit of their byte.
    found: u64,
}

/// How many words in a row without a bracket are read before a vectorised search takes over: a
/// search set up for each short gap between tags would cost more than it saves.
const NEAR_WORDS: usize = 4;

impl<'a> Brackets<'a> {
    fn new(page: &'a [u8]) -> Self {
        let mut brackets = Self { page, closing: false, word: 0, found: 0 };
        brackets.restart(0, false);
        brackets
    }

    /// Goes on from `from` (a byte not taken yet), counting `>` or not.
    fn restart(&mut self, from: usize, closing: bool) {
        self.closing = closing;
        self.word = from;
        self.found = self.mask();
    }

    /// The high bit of each byte of the current word that is a bracket. Past the page's end
    /// the word reads as zero bytes, which are not.
    fn mask(&self) -> u64 {
        let rest = self.page.get(self.word..).unwrap_or_default();
        let word = match rest.first_chunk::<8>() {
            Some(bytes) => u64::from_le_bytes(*bytes),
            None => {
                let mut bytes = [0; 8];
                bytes[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(bytes)
            }
        };
        let mut found = bytes_equal(word, b'<');
        if self.closing {
            found |= bytes_equal(word, b'>');
        }
        found
    }

    /// Where the next bracket from the current word on is, found by a vectorised search: after
    /// a long stretch with none (text), which the word-wise reading would crawl through. Kept
    /// out of the scan's loop, which it would otherwise crowd.
    #[cold]
    #[inline(never)]
    fn skip_far(&self) -> Option<usize> {
        let rest = &self.page[self.word..];
        let offset =
            if self.closing { memchr::memchr2(b'<', b'>', rest) } else { memchr::memchr(b'<', rest) };
        offset.map(|offset| self.word + offset)
    }
}

impl Iterator for Brackets<'_> {
    type Item = usize;

    // Inlined into the scan's loop: it runs for every bracket and every word of the page.
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let mut empty_words = 0;
        while self.found == 0 {
            self.word += 8;
            if self.word >= self.page.len() {
                return None;
            }
            empty_words += 1;
            if empty_words == NEAR_WORDS {
                self.word = self.skip_far()?;
            }
            self.found = self.mask();
        }
        let at = self.word + self.found.trailing_zeros() as usize / 8;
        self.found &= self.found - 1;
        Some(at)
    }
}

/// The high bit of each byte of `word` that equals `byte`, and no other bit. Exact, unlike the
/// shorter "has a zero byte" test: no carry crosses from one byte into the next.
const fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW_SEVEN: u64 = u64::from_ne_bytes([0x7f; 8]);
    let zero_where_equal = word ^ u64::from_ne_bytes([byte; 8]);
    !(((zero_where_equal & LOW_SEVEN) + LOW_SEVEN) | zero_where_equal | LOW_SEVEN)
}

#[cfg(test)]
mod tests {
    use super::{Brackets, NEAR_WORDS, may_hide_markup};
    use lol_html::{HtmlRewriter, Settings, doc_comments};
    use proptest::prelude::*;

    /// Whether a comment lol_html reads in `page` holds tool markup, in any case.
    fn lol_html_comment_holds_markup(page: &[u8]) -> bool {
        let mut holds = false;
        let handler = doc_comments!(|comment| {
            let text = comment.text().to_ascii_lowercase();
            holds |= ["<tool", "<context", "toolname"].iter().any(|marker| text.contains(marker));
            Ok(())
        });
        let settings = Settings::new().append_document_content_handler(handler);
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        // What lol_html read before refusing a page counts all the same.
        if rewriter.write(page).is_ok() {
            let _ = rewriter.end();
        } else {
            drop(rewriter);
        }
        holds
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// Pages built from the bytes that open and close comments and the markers' pieces:
        /// whenever lol_html reads a comment holding markup, the answer is "could", and every
        /// `<` is reported once, in order.
        #[test]
        fn a_comment_lol_html_reads_with_markup_is_never_missed(
            pieces in prop::collection::vec(
                prop::sample::select(
                    &[
                        "<", ">", "!", "-", "--", "?", "/", "a", " ", "<!--", "-->", "<!", "</", "<?",
                        "<tool", "TOOLNAME", "<Context", "<p>", "</p>", "\"", "<script>", "</script>",
                        "<textarea>", "é", "x=1",
                    ][..],
                ),
                0..40,
            )
        ) {
            let page = pieces.concat();
            let mut seen = Vec::new();
            let could = may_hide_markup(page.as_bytes(), |at| seen.push(at));
            if lol_html_comment_holds_markup(page.as_bytes()) {
                prop_assert!(could, "missed a comment in {:?}", page);
            }
            let expected: Vec<usize> = page.match_indices('<').map(|(at, _)| at).collect();
            prop_assert_eq!(seen, expected, "{:?}", page);
        }
    }

    #[test]
    fn markers_inside_comments_are_seen() {
        for page in [
            "<p>a</p><!-- <tool name=x> -->",
            "<!-- a --><!-- b <TOOL name=x> -->",
            "<!--> <tool name=x>",
            "<!-- x --!> <tool name=x>",
            "<? <tool name=x",
            "</ <context name=y",
            "<!doctype <tool name=x",
            "<!-- toolname -->",
            "<!-- unclosed <context",
        ] {
            assert!(may_hide_markup(page.as_bytes(), |_| {}), "{page}");
        }
    }

    #[test]
    fn markers_outside_comments_do_not_count() {
        for page in [
            "<!doctype html><html><head><!-- a comment --></head><body><tool name=x></tool>",
            "<context name=y>text</context><!-- later -->",
            "<p>no comments, <tool name=z> and toolname=1</p>",
            "<!-- closed --> <?pi?> </ x> <tool name=x>",
            "</tbody></table>\n<tool name=\"t\"><p>T</p></tool><context name=\"c\">c</context>\n<form><label>Q</label><input name=\"q\"><button>Go</button></form><!-- c0 -->\n<script>window.m = [];</script>\n</div><tool name=\"u\"></tool>",
        ] {
            assert!(!may_hide_markup(page.as_bytes(), |_| {}), "{page}");
        }
    }

    #[test]
    fn every_angle_bracket_that_opens_is_reported_once_in_order() {
        for page in
            ["<a><!-- <tool> --> <b></b> <? x > </ y> <c", "<!-- toolname --><p>x</p><i>", "no tags", "<"]
        {
            let mut seen = Vec::new();
            may_hide_markup(page.as_bytes(), |at| seen.push(at));
            let expected: Vec<usize> = page.match_indices('<').map(|(at, _)| at).collect();
            assert_eq!(seen, expected, "{page}");
        }
    }

    #[test]
    fn brackets_are_found_where_a_byte_search_finds_them() {
        // Every byte value beside a bracket, at every offset of a word and across words, in
        // pages of every length up to several words, counting `>` or not, from every start.
        let naive = |page: &[u8], from: usize, closing: bool| -> Vec<usize> {
            (from..page.len()).filter(|&at| page[at] == b'<' || (closing && page[at] == b'>')).collect()
        };
        // Every byte value in pages shorter than the words read before `memchr` takes over;
        // beyond, the values a word-wise test could confuse with a bracket.
        let near_values: Vec<u8> = (0..=u8::MAX).collect();
        let far_values = [0, b'a', b';', b'=', b'?', 0x80, 0xbc, 0xbe, 0xff];
        for length in 0..80 {
            let values = if length <= 8 * NEAR_WORDS { &near_values[..] } else { &far_values[..] };
            for at in 0..length {
                for &byte in values {
                    let mut page = vec![byte; length];
                    page[at] = if at % 2 == 0 { b'<' } else { b'>' };
                    for closing in [false, true] {
                        for from in [0, at / 2, at, length] {
                            let mut brackets = Brackets::new(&page);
                            brackets.restart(from, closing);
                            let found: Vec<usize> = brackets.collect();
                            assert_eq!(
                                found,
                                naive(&page, from, closing),
                                "length {length}, bracket at {at}, filled with {byte:#04x}, closing {closing}, from {from}"
                            );
                        }
                    }
                }
            }
        }
    }
}
