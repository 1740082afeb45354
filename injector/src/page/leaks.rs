//! Tool and context markup hidden where the element filter cannot see it: comments, raw text
//! (`<noscript>`, `<noembed>`, `<noframes>`, `<xmp>`, and `<script>` data blocks that page
//! scripts render, such as `text/template`) and `srcdoc` documents. Whatever the user may see,
//! such markup is removed, because a page script or a nested document could turn it into tools.
//!
//! Raw text arrives in pieces, so it is scanned with an overlap and held back (up to
//! `HOLD_LIMIT` bytes): an element whose first marker lies within that limit loses its whole
//! content; beyond it the content is cut at the marker. Neither depends on chunk boundaries.

use std::borrow::Cow;
use std::sync::OnceLock;

use lol_html::html_content::ContentType;
use lol_html::{Selector, doc_comments, send};

use super::selectors::{Handlers, cached_built, on_element, on_text, selector};
use super::shared::{SharedState, lock};
use super::survey::{Survey, Tag};

pub(super) mod comments;
pub(super) mod scan;

use scan::{RawTextScan, find_marker};

/// Raw-text elements whose content is always scanned.
const RAW_TEXT: [(Tag, &str); 4] =
    [(Tag::Noscript, "noscript"), (Tag::Noembed, "noembed"), (Tag::Noframes, "noframes"), (Tag::Xmp, "xmp")];

/// `type` values that make a `<script>` JavaScript (its content is code, not markup).
const JAVASCRIPT_TYPES: [&str; 17] = [
    "module",
    "application/ecmascript",
    "application/javascript",
    "application/x-ecmascript",
    "application/x-javascript",
    "text/ecmascript",
    "text/javascript",
    "text/javascript1.0",
    "text/javascript1.1",
    "text/javascript1.2",
    "text/javascript1.3",
    "text/javascript1.4",
    "text/javascript1.5",
    "text/jscript",
    "text/livescript",
    "text/x-ecmascript",
    "text/x-javascript",
];

/// Adds the comment, `srcdoc` and raw-text handlers the page may need (`survey`).
pub(super) fn append_handlers(
    mut settings: send::Settings<'static, 'static>,
    state: &SharedState,
    survey: &Survey,
) -> send::Settings<'static, 'static> {
    if survey.comments {
        let comments = SharedState::clone(state);
        settings = settings.append_document_content_handler(doc_comments!(move |comment| {
            if find_marker(comment.text().as_bytes(), 0, true).is_some() {
                comment.remove();
                count_leak(&comments);
            }
            Ok(())
        }));
    }
    if survey.may_have(Tag::Iframe) {
        let srcdoc = SharedState::clone(state);
        // `srcdoc` only means something on an iframe (and naming the tag keeps lol_html fast).
        settings = settings.append_element_content_handler(on_element(
            selector!("iframe[srcdoc]"),
            move |element| {
                let leaks = element.get_attribute("srcdoc").is_some_and(|value| srcdoc_has_markup(&value));
                if leaks {
                    element.remove_attribute("srcdoc");
                    count_leak(&srcdoc);
                }
                Ok(())
            },
        ));
    }
    if !survey.markers {
        return settings;
    }
    let script = SharedState::clone(state);
    settings = settings.append_element_content_handler(on_element(selector!("script"), move |element| {
        let scanned = !is_javascript(element.get_attribute("type").as_deref());
        start_scan(&script, scanned);
        Ok(())
    }));
    // Raw-text elements whose content is always scanned, where the page may have them.
    let present = RAW_TEXT
        .iter()
        .enumerate()
        .filter(|(_, (tag, _))| survey.may_have(*tag))
        .fold(0, |present, (bit, _)| present | 1 << bit);
    if present != 0 {
        let raw = SharedState::clone(state);
        settings = settings.append_element_content_handler(on_element(
            raw_text_selector(present, false),
            move |_| {
                start_scan(&raw, true);
                Ok(())
            },
        ));
    }
    // One text handler for every scanned element, because lol_html runs each handler whose
    // selector matches: text inside two nested ones (foreign content allows that) would be fed
    // to the scan twice by two handlers.
    settings.append_element_content_handler(scan_text(raw_text_selector(present, true), state))
}

/// The selector list of the raw-text elements in `present` (bit `i` for `RAW_TEXT[i]`), with
/// `script` first when `with_script`; never empty. Each list is parsed once per process.
fn raw_text_selector(present: usize, with_script: bool) -> Cow<'static, Selector> {
    static SELECTORS: [OnceLock<Selector>; 32] = [const { OnceLock::new() }; 32];
    let index = (present & 15) | usize::from(with_script) << 4;
    cached_built(&SELECTORS[index], || {
        let raw = RAW_TEXT.iter().enumerate().filter(|(bit, _)| index & (1 << bit) != 0);
        let names: Vec<&str> =
            with_script.then_some("script").into_iter().chain(raw.map(|(_, (_, name))| *name)).collect();
        names.join(", ")
    })
}

/// The text handler of the scanned elements: their content goes through the `RawTextScan` their
/// element handler started.
fn scan_text(selector: Cow<'static, Selector>, state: &SharedState) -> Handlers {
    let scan = SharedState::clone(state);
    on_text(selector, move |chunk| {
        let verdict = {
            let mut page = lock(&scan);
            let Some(filter) = page.filter.as_mut() else {
                return Ok(());
            };
            let Some(scanner) = filter.raw_text.as_mut() else {
                return Ok(());
            };
            let verdict = scanner.feed(chunk.as_str(), chunk.last_in_text_node());
            if verdict.leak_found {
                filter.counts.leaks_removed += 1;
            }
            if chunk.last_in_text_node() {
                filter.raw_text = None;
            }
            verdict
        };
        if verdict.emit.is_empty() {
            chunk.remove();
        } else {
            // Raw text has no escaping: the held text goes back out exactly as it came in.
            chunk.replace(&verdict.emit, ContentType::Html);
        }
        Ok(())
    })
}

/// Whether a `srcdoc` value holds tool markup once decoded the way the browser decodes it,
/// and again for documents nested inside it. Decoding is deliberately generous (references
/// without `;`, any case): this only decides what to remove.
fn srcdoc_has_markup(value: &str) -> bool {
    let mut text = value.to_owned();
    for _ in 0..4 {
        if find_marker(text.as_bytes(), 0, true).is_some() {
            return true;
        }
        if !text.contains('&') {
            return false;
        }
        text = decode_generously(&text);
    }
    find_marker(text.as_bytes(), 0, true).is_some()
}

fn decode_generously(text: &str) -> String {
    let mut decoded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(ampersand) = rest.find('&') {
        decoded.push_str(&rest[..ampersand]);
        rest = &rest[ampersand + 1..];
        let named = [("lt", '<'), ("gt", '>'), ("amp", '&'), ("quot", '"'), ("apos", '\'')]
            .into_iter()
            .find(|(name, _)| rest.get(..name.len()).is_some_and(|start| start.eq_ignore_ascii_case(name)));
        if let Some((name, character)) = named {
            decoded.push(character);
            rest = &rest[name.len()..];
        } else if let Some(number) = rest.strip_prefix('#') {
            let (radix, digits) = match number.strip_prefix(['x', 'X']) {
                Some(hex) => (16, hex),
                None => (10, number),
            };
            let length = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
            // Leading zeros do not count (`&#0000000060;` is `<`); a value past the last code
            // point is U+FFFD, as browsers decode it.
            let significant = digits[..length].trim_start_matches('0');
            let value =
                if significant.len() > 8 { None } else { u32::from_str_radix(significant, radix).ok() };
            if length == 0 {
                decoded.push('&');
            } else {
                decoded.push(value.and_then(char::from_u32).unwrap_or(char::REPLACEMENT_CHARACTER));
                rest = &digits[length..];
            }
        } else if let Some(length) = rest.find(';').filter(|&end| {
            end > 0 && end <= 32 && rest[..end].bytes().all(|byte| byte.is_ascii_alphanumeric())
        }) {
            // Any other named reference (`&Tab;`, `&NewLine;`, `&sol;`…) becomes a separator, so
            // it cannot split a marker the browser would see whole.
            decoded.push(' ');
            rest = &rest[length..];
        } else {
            decoded.push('&');
            continue;
        }
        rest = rest.strip_prefix(';').unwrap_or(rest);
    }
    decoded.push_str(rest);
    decoded
}

fn is_javascript(kind: Option<&str>) -> bool {
    let Some(kind) = kind else {
        return true;
    };
    let kind = kind.trim_matches(|c: char| c.is_ascii_whitespace());
    kind.is_empty() || JAVASCRIPT_TYPES.iter().any(|javascript| javascript.eq_ignore_ascii_case(kind))
}

fn start_scan(state: &SharedState, scanned: bool) {
    if let Some(filter) = lock(state).filter.as_mut() {
        filter.raw_text = scanned.then(RawTextScan::new);
    }
}

fn count_leak(state: &SharedState) {
    if let Some(filter) = lock(state).filter.as_mut() {
        filter.counts.leaks_removed += 1;
    }
}

#[cfg(test)]
mod tests;
