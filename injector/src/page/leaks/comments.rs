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
/// While nothing is open a `>` changes nothing, so the pass then jumps from `<` to `<`; a `<`
/// that opens no comment (a start tag, or `</` and a letter, which is an end tag in every
/// tokenizer state) leaves it so. Once the answer is "could", only `<` are sought.
pub(in crate::page) fn may_hide_markup(page: &[u8], mut each_tag: impl FnMut(usize)) -> bool {
    let starts = |at: usize, marker: &[u8]| {
        page.get(at..at + marker.len()).is_some_and(|slice| slice.eq_ignore_ascii_case(marker))
    };
    let names_tool =
        |stretch: &[u8]| stretch.windows(8).any(|window| window.eq_ignore_ascii_case(b"toolname"));
    let mut could = false;
    // The last `<!--` seen has no `-->` after its end; where that end is.
    let (mut dashed_open, mut dashed_end) = (false, 0);
    // The last `<!`, `<?` or `</` and a non-letter seen has no `>` after it.
    let mut bogus_open = false;
    // Where the stretch since the last `<` or `>` starts, and where the search goes on.
    let mut stretch = 0;
    loop {
        let open = !could && (dashed_open || bogus_open);
        let Some(offset) = find_bracket(&page[stretch..], open) else {
            break;
        };
        let at = stretch + offset;
        could |= open && names_tool(&page[stretch..at]);
        stretch = at + 1;
        if page[at] == b'>' {
            bogus_open = false;
            if at >= dashed_end + 2 && &page[at - 2..at] == b"--" {
                dashed_open = false;
            }
            continue;
        }
        each_tag(at);
        if could {
            continue;
        }
        match page.get(at + 1) {
            Some(b'!') => {
                bogus_open = true;
                if page.get(at + 2..at + 4) == Some(b"--") {
                    (dashed_open, dashed_end) = (true, at + 4);
                }
            }
            Some(b'?') => bogus_open = true,
            Some(b'/') => bogus_open |= !page.get(at + 2).is_some_and(u8::is_ascii_alphabetic),
            Some(letter) if open && letter.is_ascii_alphabetic() => {
                could = starts(at, b"<tool") || starts(at, b"<context");
            }
            _ => {}
        }
    }
    could || ((dashed_open || bogus_open) && names_tool(&page[stretch..]))
}

/// Where the first `<` of `haystack` is, or with `also_closing` its first `<` or `>`. The gaps
/// between tags are mostly short (a dozen bytes on a dense page), where setting up a vectorised
/// search costs more than it saves, so the first words are read eight bytes at a time and
/// memchr takes over for a longer stretch.
fn find_bracket(haystack: &[u8], also_closing: bool) -> Option<usize> {
    const NEAR: usize = 32;
    let near = &haystack[..haystack.len().min(NEAR)];
    let mut words = near.chunks_exact(8);
    for (index, word) in (&mut words).enumerate() {
        let word = u64::from_le_bytes(word.try_into().expect("chunks of eight"));
        let mut found = bytes_equal(word, b'<');
        if also_closing {
            found |= bytes_equal(word, b'>');
        }
        if found != 0 {
            return Some(index * 8 + found.trailing_zeros() as usize / 8);
        }
    }
    let searched = near.len() - words.remainder().len();
    let far = &haystack[searched..];
    let offset = if also_closing { memchr::memchr2(b'<', b'>', far) } else { memchr::memchr(b'<', far) };
    offset.map(|offset| searched + offset)
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
    use super::{find_bracket, may_hide_markup};

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
        // Every byte value beside a bracket, at every offset of the word-wise part and beyond
        // it, in haystacks of every length up to past the word-wise part.
        let naive = |haystack: &[u8], closing: bool| {
            haystack.iter().position(|&byte| byte == b'<' || (closing && byte == b'>'))
        };
        for length in 0..48 {
            for at in 0..length {
                for byte in 0..=u8::MAX {
                    let mut haystack = vec![byte; length];
                    haystack[at] = if at % 2 == 0 { b'<' } else { b'>' };
                    for closing in [false, true] {
                        assert_eq!(
                            find_bracket(&haystack, closing),
                            naive(&haystack, closing),
                            "length {length}, bracket at {at}, filled with {byte:#04x}, closing {closing}"
                        );
                    }
                }
            }
            let plain = vec![b'a'; length];
            assert_eq!(find_bracket(&plain, true), None);
        }
    }
}
