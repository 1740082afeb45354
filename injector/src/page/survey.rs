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
//!
//! The survey also finds where the page goes quiet ([`Survey::quiet_from`]): the end of the
//! last start tag of an element some handler acts on (a [`Tag`], or `<meta`, whose `http-equiv`
//! the injection rewrites and whose `charset` lol_html follows), and the end of the last
//! `toolname`. Once lol_html has read that far and nothing is left open (`PageRewriter::
//! rewrite_whole` checks), no handler can change another byte, and the rest of the page is
//! copied instead of parsed. Two things keep a page from going quiet early: a comment that may
//! hide markup (the comment scan reads a comment whole, wherever it ends), and lol_html's strict
//! mode, which refuses a text-type tag (`<script>`, `<style>`, `<title>`, …) that follows a
//! `<select>` or `<frameset>`: after either, those tags count too, so a page the full rewrite
//! refuses is refused all the same.

use super::leaks::comments;
use super::start_tag;

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
    /// CSP in `<meta http-equiv>` (the injection) and `<meta charset>` (lol_html's decoding).
    Meta,
    /// No handler's, but after it lol_html's strict mode refuses text-type tags
    /// ([`Survey::quiet_from`]).
    Frameset,
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
    /// No start tag of an element a handler acts on, and no `toolname`, ends after this byte;
    /// `usize::MAX` when that is not known. What follows may still be the text or the end tag of
    /// an element opened before it, which the rewriter checks for (`Stage::is_quiet`).
    pub(super) quiet_from: usize,
}

impl Survey {
    /// A page not seen yet: every handler is needed.
    pub(super) const fn unknown() -> Self {
        Self { tags: u16::MAX, markers: true, comments: true, quiet_from: usize::MAX }
    }

    /// Whether a start tag of `tag` may come.
    pub(super) const fn may_have(&self, tag: Tag) -> bool {
        self.tags & tag.bit() != 0
    }

    /// Reads a whole page: one pass over its `<` (the comment check's), and a look for
    /// `toolname`.
    pub(super) fn of(page: &[u8]) -> Self {
        let mut tags = 0;
        // Where the last start tag a handler may act on ends (a tag the page leaves open keeps
        // the whole page), and whether strict mode may refuse a later text-type tag.
        let (mut quiet_from, mut guarded) = (0, false);
        let may_hide = comments::may_hide_markup(
            page,
            // Inlined into the scan's loop, as `tag_at`'s first check is into it: it runs for
            // every `<` of the page, and a call each costs more than most of them do.
            #[inline(always)]
            |at| {
                let name = &page[at + 1..];
                let acted_on = match tag_at(name) {
                    Some(tag) => {
                        tags |= tag.bit();
                        guarded |= matches!(tag, Tag::Select | Tag::Frameset);
                        true
                    }
                    None => guarded && switches_text(name),
                };
                if acted_on {
                    quiet_from = quiet_from.max(start_tag::end(page, at).unwrap_or(page.len()));
                }
            },
        );
        // With tool markup already found, only a `toolname` past the last tag can matter.
        let tool_markup = tags & (Tag::Tool.bit() | Tag::Context.bit()) != 0;
        let from = if tool_markup { quiet_from.saturating_sub(TOOL_NAME.len() - 1) } else { 0 };
        let last_name = last_tool_name(&page[from..]).map(|end| from + end);
        let markers = tool_markup || last_name.is_some();
        let comments = markers && may_hide;
        let quiet_from = if comments { page.len() } else { quiet_from.max(last_name.unwrap_or(0)) };
        Self { tags, markers, comments, quiet_from }
    }
}

/// Whether `name` begins with `wanted`, in any case.
fn starts_with(name: &[u8], wanted: &[u8]) -> bool {
    name.get(..wanted.len()).is_some_and(|head| head.eq_ignore_ascii_case(wanted))
}

/// The text-type tags lol_html's strict mode refuses after a `<select>` or `<frameset>` that
/// are not a [`Tag`] already.
fn switches_text(name: &[u8]) -> bool {
    [&b"script"[..], b"style", b"title", b"plaintext"].iter().any(|wanted| starts_with(name, wanted))
}

/// The [`Tag`] whose name `name` begins with, in any case. A longer name counts too
/// (`<toolbar` for `tool`): "may" is enough. It runs for every `<` of the page: most names
/// (`a`, `p`, `div`, `li`, an end tag's `/`) are ruled out here by their first byte, inline,
/// and the rest by their first two letters.
#[inline(always)]
fn tag_at(name: &[u8]) -> Option<Tag> {
    // Lower-cases a letter; no other byte becomes one of these.
    match name.first()? | 0x20 {
        b't' | b'c' | b'f' | b'i' | b'n' | b'x' | b's' | b'm' => named_tag_at(name),
        _ => None,
    }
}

#[inline(never)]
fn named_tag_at(name: &[u8]) -> Option<Tag> {
    let (first, second) = match name {
        [first, second, ..] => (first.to_ascii_lowercase(), second.to_ascii_lowercase()),
        _ => return None,
    };
    let candidates: &[(&[u8], Tag)] = match (first, second) {
        (b't', b'o') => &[(b"tool", Tag::Tool)],
        (b't', b'e') => &[(b"textarea", Tag::Textarea)],
        (b'c', b'o') => &[(b"context", Tag::Context)],
        (b'f', b'o') => &[(b"form", Tag::Form)],
        (b'f', b'r') => &[(b"frameset", Tag::Frameset)],
        (b'i', b'f') => &[(b"iframe", Tag::Iframe)],
        (b'i', b'n') => &[(b"input", Tag::Input)],
        (b'n', b'o') => {
            &[(b"noscript", Tag::Noscript), (b"noembed", Tag::Noembed), (b"noframes", Tag::Noframes)]
        }
        (b'x', b'm') => &[(b"xmp", Tag::Xmp)],
        (b's', b'e') => &[(b"select", Tag::Select)],
        (b'm', b'e') => &[(b"meta", Tag::Meta)],
        _ => return None,
    };
    candidates.iter().find(|(wanted, _)| starts_with(name, wanted)).map(|&(_, tag)| tag)
}

/// The marker word looked for in the whole page.
const TOOL_NAME: &[u8] = b"toolname";

/// Where the last `toolname` in `page` ends, in any case: the page is lower-cased a block at a
/// time on the stack, from its end (each block reaches the word's length less one into the
/// next, so a word across two blocks is whole in the one it starts in), and searched with a
/// vectorised substring
/// search. Looking for `t` and comparing there stops at about one byte in twenty of ordinary
/// text.
fn last_tool_name(page: &[u8]) -> Option<usize> {
    const BLOCK: usize = 4096;
    let finder = memchr::memmem::Finder::new(TOOL_NAME);
    let mut lowered = [0u8; BLOCK + TOOL_NAME.len() - 1];
    (0..page.len().div_ceil(BLOCK)).rev().find_map(|index| {
        let start = index * BLOCK;
        let end = (start + lowered.len()).min(page.len());
        let block = &mut lowered[..end - start];
        block.copy_from_slice(&page[start..end]);
        block.make_ascii_lowercase();
        finder.find_iter(block).last().map(|found| start + found + TOOL_NAME.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Tag; 13] = [
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
        Tag::Meta,
        Tag::Frameset,
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
        assert_eq!(survey.quiet_from, 0);
    }

    #[test]
    fn start_tags_are_found_in_any_case() {
        let page = b"<TOOL name=a><Context name=b></context><FoRm><IFRAME srcdoc=x><noScript><NOEMBED>\
                     <noframes><xMp><INPUT><Select><TextArea><mEtA><FRAMESET>";
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
            assert_eq!(last_tool_name(&page), Some(at + 8), "at {at}");
            page[at + 7] = b'x';
            assert_eq!(last_tool_name(&page), None, "broken at {at}");
        }
        // The last of several, wherever the blocks fall.
        let mut page = vec![b'x'; 9000];
        for at in [100, 4093, 4200] {
            page[at..at + 8].copy_from_slice(b"toolname");
        }
        assert_eq!(last_tool_name(&page), Some(4208));
        assert_eq!(last_tool_name(&page[..4207]), Some(4101));
    }

    /// The part of `page` from where the survey says it goes quiet.
    fn quiet_part(page: &str) -> &str {
        &page[Survey::of(page.as_bytes()).quiet_from.min(page.len())..]
    }

    #[test]
    fn a_page_goes_quiet_after_the_last_tag_or_marker_a_handler_needs() {
        let page = r#"<head><meta charset=utf-8></head><body><form a=">"><input name=q></form><p>1</p>"#;
        assert_eq!(quiet_part(page), "</form><p>1</p>");
        assert_eq!(quiet_part("<p>a</p><b toolname=x>c</b><i>d</i>"), "=x>c</b><i>d</i>");
        assert_eq!(quiet_part("<tool name=a></tool><p>x</p>"), "</tool><p>x</p>");
        // With tool markup found, a `toolname` after the last tag still counts.
        assert_eq!(quiet_part("<tool name=a></tool><p>x</p><b toolName=y>z"), "=y>z");
        assert_eq!(quiet_part("<b toolname=y>z</b><tool name=a></tool><p>x</p>"), "</tool><p>x</p>");
        // A start tag the page leaves open keeps every byte.
        assert_eq!(quiet_part("<p>x</p><form a='>"), "");
    }

    #[test]
    fn a_comment_that_may_hide_markup_keeps_the_whole_page() {
        assert_eq!(quiet_part("<tool name=a></tool><!-- <tool name=b> --><p>x</p>"), "");
        assert_eq!(
            quiet_part("<tool name=a></tool><!-- a comment --><p>x</p>"),
            "</tool><!-- a comment --><p>x</p>"
        );
    }

    #[test]
    fn text_type_tags_after_a_select_or_frameset_count_for_strict_mode() {
        // lol_html's strict mode refuses `<script>` after `<select>` (and `<title>` after a
        // `<frameset>`): the rewrite must read that far to refuse as it would have.
        assert_eq!(quiet_part("<select name=a></select><p>x</p><script>1</script>."), "1</script>.");
        assert_eq!(quiet_part("<frameset><p>x</p><title>t</title>."), "t</title>.");
        assert_eq!(
            quiet_part("<form></form><p>x</p><script>1</script>."),
            "</form><p>x</p><script>1</script>."
        );
    }

    #[test]
    fn a_page_ending_in_a_bare_angle_bracket_is_read_safely() {
        assert_eq!(Survey::of(b"<p>a <"), Survey::of(b"<p>a"));
        assert!(!Survey::of(b"<p>a <too").may_have(Tag::Tool));
    }
}
