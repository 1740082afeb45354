//! The tiny HTML writer every page is built with, and the escaping it relies on.
//!
//! Markup can only be written from `&'static str` literals ([`Html::raw`]); every string that
//! came from data goes through [`Html::text`] (escaped for text and quoted attributes alike), a
//! number, a path segment or a checked link. So a page cannot interpolate hostile text
//! unescaped by accident: the types do not allow it. Fragments built by another writer travel
//! as [`Markup`], which only a writer can make.

use std::fmt::Write as _;

/// Escapes `text` for HTML text and double- or single-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// A finished fragment of markup, made only by [`Html::finish`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Markup(String);

impl Markup {
    /// The markup as a string.
    pub(crate) fn into_string(self) -> String {
        self.0
    }
}

/// An HTML writer: literal markup, escaped data.
#[derive(Default)]
pub(crate) struct Html {
    out: String,
}

impl Html {
    pub(crate) fn new() -> Self {
        Self { out: String::with_capacity(4096) }
    }

    /// Literal markup; only string literals (never data) can be written this way.
    pub(crate) fn raw(&mut self, markup: &'static str) -> &mut Self {
        self.out.push_str(markup);
        self
    }

    /// Data as text or as an attribute value (inside quotes), escaped.
    pub(crate) fn text(&mut self, text: &str) -> &mut Self {
        push_escaped(&mut self.out, text);
        self
    }

    /// An integer.
    pub(crate) fn num(&mut self, value: impl Into<u64>) -> &mut Self {
        let _ = write!(self.out, "{}", value.into());
        self
    }

    /// A count (`usize`).
    pub(crate) fn count(&mut self, value: usize) -> &mut Self {
        let _ = write!(self.out, "{value}");
        self
    }

    /// A coordinate for SVG attributes, one decimal.
    pub(crate) fn coord(&mut self, value: f64) -> &mut Self {
        let value = if value.is_finite() { value } else { 0.0 };
        let _ = write!(self.out, "{value:.1}");
        self
    }

    /// Data as one URL path segment: everything but RFC 3986 unreserved bytes is
    /// percent-encoded, so `/`, `?`, `#`, `..` tricks and quotes cannot change the path.
    pub(crate) fn segment(&mut self, segment: &str) -> &mut Self {
        if segment.bytes().all(|byte| byte == b'.') {
            // URL parsers read `.`, `..` and `%2E%2E` as dot segments and an empty segment
            // names the parent; a trailing encoded space makes them plain (unknown) names.
            self.out.push_str(&".".repeat(segment.len()));
            self.out.push_str("%20");
            return self;
        }
        for byte in segment.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                self.out.push(char::from(byte));
            } else {
                let _ = write!(self.out, "%{byte:02X}");
            }
        }
        self
    }

    /// A fragment another writer finished.
    pub(crate) fn markup(&mut self, markup: &Markup) -> &mut Self {
        self.out.push_str(&markup.0);
        self
    }

    /// The fragment written so far.
    pub(crate) fn finish(self) -> Markup {
        Markup(self.out)
    }
}

/// Whether `href` (from the gateway) is a same-origin path we may link to. Anything else
/// (`javascript:`, `//host`, `https://…`, backslashes browsers read as slashes) is not linked.
pub(crate) fn is_local_path(href: &str) -> bool {
    href.starts_with('/')
        && !href.starts_with("//")
        && !href.contains('\\')
        && !href.chars().any(|c| c.is_control() || c.is_whitespace())
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // NUL is replaced by browsers anyway; drop other C0 controls but keep layout ones.
            '\0' => out.push('\u{FFFD}'),
            c if c.is_control() && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_both_quote_styles() {
        assert_eq!(
            escape(r#"<script>"x"&'y'</script>"#),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(escape("a\u{1}b\0c\n"), "a\u{FFFD}b\u{FFFD}c\n");
    }

    #[test]
    fn writer_escapes_data_but_not_literals() {
        let mut html = Html::new();
        html.raw("<p title=\"").text("\"><img src=x onerror=alert(1)>").raw("\">").num(7u64).raw("</p>");
        let out = html.finish().into_string();
        assert_eq!(out, "<p title=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">7</p>");
    }

    #[test]
    fn segments_cannot_change_the_path() {
        let encode = |s: &str| {
            let mut html = Html::new();
            html.segment(s);
            html.finish().into_string()
        };
        assert_eq!(encode("abc-_DEF09~."), "abc-_DEF09~.");
        assert_eq!(encode("../x?y#z\"'<"), "..%2Fx%3Fy%23z%22%27%3C");
        assert_eq!(encode(".."), "..%20");
        assert_eq!(encode(""), "%20");
        assert_eq!(encode("é"), "%C3%A9");
    }

    #[test]
    fn only_local_paths_are_links() {
        assert!(is_local_path("/audit?since=x&cursor=5"));
        for bad in ["javascript:alert(1)", "//evil.example/", "https://evil.example/", "/\\evil", "/a b", ""]
        {
            assert!(!is_local_path(bad), "{bad}");
        }
    }
}
