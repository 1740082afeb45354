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

/// Whether some comment of `page` could hold tool markup. One pass, in linear time: only `<`
/// and `>` change what may be open, and `toolname` (which holds neither) is looked for only in
/// the stretches between them where something is.
pub(in crate::page) fn may_hide_markup(page: &[u8]) -> bool {
    let starts = |at: usize, marker: &[u8]| {
        page.get(at..at + marker.len()).is_some_and(|slice| slice.eq_ignore_ascii_case(marker))
    };
    let names_tool =
        |stretch: &[u8]| stretch.windows(8).any(|window| window.eq_ignore_ascii_case(b"toolname"));
    // The last `<!--` seen has no `-->` after its end; where that end is.
    let (mut dashed_open, mut dashed_end) = (false, 0);
    // The last `<!`, `<?` or `</` seen has no `>` after it.
    let mut bogus_open = false;
    // Where the stretch since the last `<` or `>` starts.
    let mut stretch = 0;
    for at in memchr::memchr2_iter(b'<', b'>', page) {
        let open = dashed_open || bogus_open;
        if open && names_tool(&page[stretch..at]) {
            return true;
        }
        if page[at] == b'<' {
            if open && (starts(at, b"<tool") || starts(at, b"<context")) {
                return true;
            }
            if matches!(page.get(at + 1), Some(b'!' | b'?' | b'/')) {
                bogus_open = true;
            }
            if starts(at, b"<!--") {
                (dashed_open, dashed_end) = (true, at + 4);
            }
        } else {
            bogus_open = false;
            if at >= dashed_end + 2 && &page[at - 2..at] == b"--" {
                dashed_open = false;
            }
        }
        stretch = at + 1;
    }
    (dashed_open || bogus_open) && names_tool(&page[stretch..])
}

#[cfg(test)]
mod tests {
    use super::may_hide_markup;

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
            assert!(may_hide_markup(page.as_bytes()), "{page}");
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
            assert!(!may_hide_markup(page.as_bytes()), "{page}");
        }
    }
}
