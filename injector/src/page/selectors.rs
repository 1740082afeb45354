//! CSS selectors of the filtering handlers, parsed once per process instead of once per page.
//!
//! `lol_html::element!` parses its selector every time a rewriter is built, which costs more
//! than rewriting a small page; these helpers hand lol_html a borrowed, already parsed one.

use std::borrow::Cow;
use std::sync::OnceLock;

use lol_html::html_content::TextChunk;
use lol_html::send::SendHandlerTypes;
use lol_html::{ElementContentHandlers, HandlerResult, Selector, send};

/// A selector and its handlers, as `Settings::append_element_content_handler` takes them.
pub(super) type Handlers = (Cow<'static, Selector>, ElementContentHandlers<'static, SendHandlerTypes>);

/// A constant selector, parsed on first use; `selector!("form label")`.
macro_rules! selector {
    ($css:expr) => {{
        static SLOT: ::std::sync::OnceLock<::lol_html::Selector> = ::std::sync::OnceLock::new();
        $crate::page::selectors::cached(&SLOT, $css)
    }};
}
pub(super) use selector;

/// The selector in `slot`, parsing `css` the first time.
pub(super) fn cached(slot: &'static OnceLock<Selector>, css: &'static str) -> Cow<'static, Selector> {
    cached_built(slot, || css.to_owned())
}

/// The selector in `slot`, parsing what `css` builds the first time.
pub(super) fn cached_built(
    slot: &'static OnceLock<Selector>,
    css: impl FnOnce() -> String,
) -> Cow<'static, Selector> {
    Cow::Borrowed(slot.get_or_init(|| {
        let css = css();
        match css.parse() {
            Ok(selector) => selector,
            // Only constants of this crate, or lists of them, come here, and the unit tests
            // parse every one of them.
            Err(error) => panic!("invalid built-in selector {css:?}: {error}"),
        }
    }))
}

/// An element handler for `selector`.
pub(super) fn on_element(
    selector: Cow<'static, Selector>,
    handler: impl FnMut(&mut send::Element<'_, '_>) -> HandlerResult + Send + 'static,
) -> Handlers {
    (selector, ElementContentHandlers::default().element(handler))
}

/// A text handler for `selector`.
pub(super) fn on_text(
    selector: Cow<'static, Selector>,
    handler: impl FnMut(&mut TextChunk<'_>) -> HandlerResult + Send + 'static,
) -> Handlers {
    (selector, ElementContentHandlers::default().text(handler))
}
