//! Placing the runtime `<script>` exactly once: first child of `<head>`, else first child of
//! `<body>`, else at the end of the document.
//!
//! Whichever of `<head>`/`<body>` the tokenizer meets first wins: once a body has started, a
//! later `<head>` tag is ignored by browsers, so placing the script there would be wrong. The
//! handlers share one "placed" flag; the document-end handler is the fallback for fragments.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lol_html::html_content::ContentType;
use lol_html::{end, send};

use super::attribute_text::escape;
use super::selectors::{on_element, selector};

/// The namespace of ordinary HTML elements; a `<head>` inside `<svg>` is not the document head.
const HTML_NAMESPACE: &str = "http://www.w3.org/1999/xhtml";

/// The `<script>` element that loads the runtime, with every attribute value escaped.
///
/// It is a classic blocking script on purpose (no `defer`, no `async`): placed first, it runs
/// before any of the page's own scripts, so the WebMCP polyfill (`document.modelContext`,
/// `navigator.modelContext`) and `window.__ci4a__` exist when inline page scripts register their
/// tools. Its URL is content-hashed and cached immutably, so the block costs one fetch per build.
pub(super) fn script_tag(src: &str, integrity: &str, nonce: &str) -> String {
    format!(
        r#"<script src="{}" integrity="{}" nonce="{}"></script>"#,
        escape(src),
        escape(integrity),
        escape(nonce)
    )
}

/// Adds the head, body and document-end handlers that place `script_tag`, and set `placed`
/// once one has.
pub(super) fn append_handlers(
    settings: send::Settings<'static, 'static>,
    script_tag: String,
    placed: &Arc<AtomicBool>,
) -> send::Settings<'static, 'static> {
    let markup: Arc<str> = Arc::from(script_tag);
    settings
        .append_element_content_handler(on_element(selector!("head"), prepend_once(&markup, placed)))
        .append_element_content_handler(on_element(selector!("body"), prepend_once(&markup, placed)))
        .append_document_content_handler(end!({
            let markup = Arc::clone(&markup);
            let placed = Arc::clone(placed);
            move |document_end| {
                if !placed.swap(true, Ordering::Relaxed) {
                    document_end.append(&markup, ContentType::Html);
                }
                Ok(())
            }
        }))
}

/// A handler that prepends the script to the element if nothing has placed it yet.
fn prepend_once(
    markup: &Arc<str>,
    placed: &Arc<AtomicBool>,
) -> impl FnMut(&mut send::Element<'_, '_>) -> lol_html::HandlerResult + Send + 'static {
    let markup = Arc::clone(markup);
    let placed = Arc::clone(placed);
    move |element| {
        // A foreign-content `<head/>` (inside SVG or MathML) is not the document's head and
        // cannot hold children; leave the script to the next candidate or the document end.
        let is_document_element = element.namespace_uri() == HTML_NAMESPACE && element.can_have_content();
        if is_document_element && !placed.swap(true, Ordering::Relaxed) {
            // `prepend` also turns a decorative `<head/>` into `<head>`, which is how browsers
            // parse it anyway.
            element.prepend(&markup, ContentType::Html);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_tag_escapes_every_value() {
        assert_eq!(
            script_tag("/r.js?a=1&b=2", "sha384-x\"y", "n<'>"),
            r#"<script src="/r.js?a=1&amp;b=2" integrity="sha384-x&quot;y" nonce="n&lt;&#39;&gt;"></script>"#
        );
    }
}
