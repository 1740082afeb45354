//! What a whole page may contain, read from its bytes before lol_html's handlers are built, so
//! the filter registers only the handlers that can act on this page. Every handler costs each
//! start tag a check in lol_html's selector matching, whether or not its element ever comes.
//!
//! The answers may say "may" of what is not there; they must never say "cannot" of what is.
//! lol_html makes an element only from a start tag in the source, and a start tag named `form`
//! is `<` followed by those letters in any case. The encodings lol_html parses are
//! ASCII-compatible: an ASCII character of the decoded page is always that same byte of the
//! page, a multi-byte sequence never decodes to one, and `<` is never the trailing byte of a
//! multi-byte character (an ASCII letter can be, in Shift_JIS, GBK or Big5, but then it is not a
//! letter of the decoded page). So the decoded page holds `<form` only where its bytes do, and
//! the same goes for `toolname`. A page still arriving is [`Survey::unknown`]: everything may
//! come.

use super::leaks::comments;

/// The elements some filter handler acts on, found by their start tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    /// The tool filter.
    Tool,
    /// The context filter.
    Context,
    /// Form rules, declarative form tools, auto mode and the source-marker removal, all of which
    /// act on forms or inside them.
    Form,
    /// The `srcdoc` check.
    Iframe,
    /// Raw-text elements whose content is scanned for markup.
    Noscript,
    Noembed,
    Noframes,
    Xmp,
    /// Controls a form rule describes.
    Input,
    Select,
    Textarea,
}

impl Tag {
    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// What a page may hold, as far as the filter's handlers go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Survey {
    /// The [`Tag`]s whose start tags may come, one bit each.
    tags: u16,
    /// Tool markup may sit somewhere (`toolname`, `<tool`, `<context`, any case): the raw-text
    /// scan, which can only find what is there.
    pub(super) markers: bool,
    /// A comment may hold tool markup (`leaks::comments`): the comment scan, which keeps lol_html
    /// lexing every byte.
    pub(super) comments: bool,
}

impl Survey {
    /// A page not seen yet: every handler is needed.
    pub(super) const fn unknown() -> Self {
        Self { tags: u16::MAX, markers: true, comments: true }
    }

    /// Whether a start tag of `tag` may come.
    pub(super) const fn may_have(&self, tag: Tag) -> bool {
        self.tags & tag.bit() != 0
    }

    /// Reads a whole page: one pass over its `<` (the comment check's), and a look for
    /// `toolname`.
    pub(super) fn of(page: &[u8]) -> Self {
        let mut tags = 0;
        let may_hide = comments::may_hide_markup(page, |at| {
            if let Some(tag) = tag_at(&page[at + 1..]) {
                tags |= tag.bit();
            }
        });
        let markers = tags & (Tag::Tool.bit() | Tag::Context.bit()) != 0 || names_tool(page);
        Self { tags, markers, comments: markers && may_hide }
    }
}

/// The [`Tag`] whose name `name` begins with, in any case. A longer name counts too
/// (`<toolbar` for `tool`): "may" is enough. Decided on the first two letters first, since it
/// runs for every `<` of the page.
fn tag_at(name: &[u8]) -> Option<Tag> {
    let (first, second) = match name {
        [first, second, ..] => (first.to_ascii_lowercase(), second.to_ascii_lowercase()),
        _ => return None,
    };
    let candidates: &[(&[u8], Tag)] = match (first, second) {
        (b't', b'o') => &[(b"tool", Tag::Tool)],
        (b't', b'e') => &[(b"textarea", Tag::Textarea)],
        (b'c', b'o') => &[(b"context", Tag::Context)],
        (b'f', b'o') => &[(b"form", Tag::Form)],
        (b'i', b'f') => &[(b"iframe", Tag::Iframe)],
        (b'i', b'n') => &[(b"input", Tag::Input)],
        (b'n', b'o') => {
            &[(b"noscript", Tag::Noscript), (b"noembed", Tag::Noembed), (b"noframes", Tag::Noframes)]
        }
        (b'x', b'm') => &[(b"xmp", Tag::Xmp)],
        (b's', b'e') => &[(b"select", Tag::Select)],
        _ => return None,
    };
    let starts =
        |wanted: &[u8]| name.get(..wanted.len()).is_some_and(|head| head.eq_ignore_ascii_case(wanted));
    candidates.iter().find(|(wanted, _)| starts(wanted)).map(|&(_, tag)| tag)
}

/// Whether `toolname` appears in `page`, in any case: the page is lower-cased a block at a
/// time on the stack (the blocks overlap by the word's length less one, so a word across two
/// blocks is whole in one) and searched with a vectorised substring search. Looking for `t`
/// and comparing there stops at about one byte in twenty of ordinary text.
fn names_tool(page: &[u8]) -> bool {
    const WORD: &[u8] = b"toolname";
    const BLOCK: usize = 4096;
    let finder = memchr::memmem::Finder::new(WORD);
    let mut lowered = [0u8; BLOCK + WORD.len() - 1];
    let mut start = 0;
    while start < page.len() {
        let end = (start + lowered.len()).min(page.len());
        let block = &mut lowered[..end - start];
        block.copy_from_slice(&page[start..end]);
        block.make_ascii_lowercase();
        if finder.find(block).is_some() {
            return true;
        }
        start += BLOCK;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Tag; 11] = [
        Tag::Tool,
        Tag::Context,
        Tag::Form,
        Tag::Iframe,
        Tag::Noscript,
        Tag::Noembed,
        Tag::Noframes,
        Tag::Xmp,
        Tag::Input,
        Tag::Select,
        Tag::Textarea,
    ];

    fn present(survey: &Survey) -> Vec<Tag> {
        ALL.into_iter().filter(|&tag| survey.may_have(tag)).collect()
    }

    #[test]
    fn a_plain_page_needs_no_filter_handler() {
        let page = b"<!DOCTYPE html><html><head><title>t</title><script>let total = 1;</script></head>\
                     <body><h1>Tools</h1><p>toolbox <b>context</b> formal</p><img src=x></body></html>";
        let survey = Survey::of(page);
        assert_eq!(present(&survey), []);
        assert!(!survey.markers && !survey.comments);
    }

    #[test]
    fn start_tags_are_found_in_any_case() {
        let page = b"<TOOL name=a><Context name=b></context><FoRm><IFRAME srcdoc=x><noScript><NOEMBED>\
                     <noframes><xMp><INPUT><Select><TextArea>";
        let survey = Survey::of(page);
        assert_eq!(present(&survey), ALL);
        assert!(survey.markers && !survey.comments);
    }

    #[test]
    fn end_tags_and_names_that_only_begin_alike_are_told_apart() {
        // "may" is enough: `<toolbar>` and `<format>` keep the handlers, at no risk.
        assert_eq!(present(&Survey::of(b"<toolbar></toolbar><format></format>")), [Tag::Tool, Tag::Form]);
        assert_eq!(present(&Survey::of(b"</form></tool><tol><for><sel>")), []);
    }

    #[test]
    fn an_unknown_page_may_have_everything() {
        assert_eq!(present(&Survey::unknown()), ALL);
    }

    #[test]
    fn toolname_anywhere_is_a_marker_and_a_comment_may_hide_it() {
        let survey = Survey::of(b"<p>x</p><!-- <b TOOLNAME=x> -->");
        assert!(survey.markers && survey.comments && present(&survey).is_empty());
        let survey = Survey::of(b"<script type=text/template><button toolName=a></script>");
        assert!(survey.markers && !survey.comments);
    }

    #[test]
    fn toolname_is_found_across_the_blocks_it_is_searched_in() {
        for at in [0, 4090, 4093, 4096, 4100, 8185, 9000] {
            let mut page = vec![b'x'; 9000];
            page.splice(at..at, b"ToolName".iter().copied());
            assert!(names_tool(&page), "at {at}");
            page[at + 7] = b'x';
            assert!(!names_tool(&page), "broken at {at}");
        }
    }

    #[test]
    fn a_page_ending_in_a_bare_angle_bracket_is_read_safely() {
        assert_eq!(Survey::of(b"<p>a <"), Survey::of(b"<p>a"));
        assert!(!Survey::of(b"<p>a <too").may_have(Tag::Tool));
    }
}
