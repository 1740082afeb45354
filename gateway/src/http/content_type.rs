//! What a response's `Content-Type` means to a browser, decided the way browsers decide it
//! (WHATWG Fetch, "extract a MIME type"): every `Content-Type` field counts, values are split on
//! commas outside quotes, the last valid type wins and keeps an earlier charset when the type is
//! the same. A page the browser would render as HTML is one the filter must see, however its
//! headers are spelled.

use http::HeaderMap;
use http::header::{self, HeaderValue};
use std::borrow::Cow;

/// How the browser will treat a response body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyKind {
    /// `text/html` or `application/xhtml+xml`: a document the filter must rewrite.
    Page {
        /// The MIME type's essence, lower-case.
        essence: String,
        /// The charset parameter, if any.
        charset: Option<String>,
    },
    /// SVG or another XML type: a document the filter cannot parse but a browser renders, and
    /// which may carry tool markup (it gets `Permissions-Policy: tools=()`).
    XmlDocument,
    /// No usable `Content-Type`: a browser would sniff the bytes (the gateway forbids that).
    Unlabelled,
    /// Anything else.
    Other,
}

/// Decides the body kind from every `Content-Type` field.
pub fn body_kind(headers: &HeaderMap) -> BodyKind {
    if let Some(kind) = plain_kind(headers) {
        return kind;
    }
    match extract(headers) {
        None => BodyKind::Unlabelled,
        Some((essence, charset)) if is_page(&essence) => BodyKind::Page { essence, charset },
        Some((essence, _)) if is_xml(&essence) => BodyKind::XmlDocument,
        Some(_) => BodyKind::Other,
    }
}

/// The kind of the usual `Content-Type`, one field of ASCII without quotes or commas, decided
/// without allocating (it is read on every response); `None` for a page, which needs its essence
/// and charset, and for anything else, which the full parse reads. The same answer as
/// [`extract`] gives: one field, one value, `;` outside quotes everywhere.
fn plain_kind(headers: &HeaderMap) -> Option<BodyKind> {
    let mut fields = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(field), None) = (fields.next(), fields.next()) else { return None };
    let text = field.to_str().ok()?;
    // One pass: a quote or a comma leaves the field to the full parse; the essence ends at the
    // first `;` (read from the end, so the last one seen is the first).
    let mut essence_end = text.len();
    for (at, byte) in text.bytes().enumerate().rev() {
        match byte {
            b'"' | b',' => return None,
            b';' => essence_end = at,
            _ => {}
        }
    }
    let essence = text[..essence_end].trim();
    let valid = essence.split_once('/').is_some_and(|(kind, subtype)| is_token(kind) && is_token(subtype));
    let lower_is = |wanted: &str| essence.eq_ignore_ascii_case(wanted);
    if !valid || essence == "*/*" {
        Some(BodyKind::Unlabelled)
    } else if lower_is("text/html") || lower_is("application/xhtml+xml") {
        None
    } else if lower_is("text/xml")
        || lower_is("application/xml")
        || essence.get(essence.len().saturating_sub(4)..).is_some_and(|end| end.eq_ignore_ascii_case("+xml"))
    {
        Some(BodyKind::XmlDocument)
    } else {
        Some(BodyKind::Other)
    }
}

/// Whether a (lower-case) essence is a document the filter rewrites.
fn is_page(essence: &str) -> bool {
    essence == "text/html" || essence == "application/xhtml+xml"
}

/// Whether a (lower-case) essence that is not a page is an XML document.
fn is_xml(essence: &str) -> bool {
    essence == "text/xml" || essence == "application/xml" || essence.ends_with("+xml")
}

/// WHATWG Fetch "extract a MIME type": `(essence, charset)` of the type the browser uses.
fn extract(headers: &HeaderMap) -> Option<(String, Option<String>)> {
    let mut found: Option<(String, Option<String>)> = None;
    for field in headers.get_all(header::CONTENT_TYPE) {
        // Browsers read header bytes as Latin-1 (isomorphic decode); a byte >= 0x80 must not make
        // a field invisible to us while the browser still reads it. ASCII, the usual case, is
        // the same text either way.
        let text: Cow<'_, str> = match field.to_str() {
            Ok(ascii) => Cow::Borrowed(ascii),
            Err(_) => Cow::Owned(field.as_bytes().iter().map(|&byte| char::from(byte)).collect()),
        };
        for value in split_outside_quotes(&text, ',') {
            let Some((essence, charset)) = parse(value) else { continue };
            if essence == "*/*" {
                continue;
            }
            found = Some(match found {
                Some((previous, previous_charset)) if previous == essence => {
                    (essence, charset.or(previous_charset))
                }
                _ => (essence, charset),
            });
        }
    }
    found
}

/// Replaces every `Content-Type` field of a page with the one value the browser would have
/// used, so no later reader can disagree about what the page is.
pub fn normalize_page_type(headers: &mut HeaderMap, essence: &str, charset: Option<&str>) {
    let value = match charset {
        Some(charset) if is_token(charset) => format!("{essence}; charset={charset}"),
        _ => essence.to_owned(),
    };
    headers.remove(header::CONTENT_TYPE);
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(header::CONTENT_TYPE, value);
    }
}

/// Parses one MIME type: `(essence, charset)`, or `None` when it is not a valid type.
fn parse(value: &str) -> Option<(String, Option<String>)> {
    let mut parts = split_outside_quotes(value, ';');
    let essence = parts.next()?.trim().to_ascii_lowercase();
    let (kind, subtype) = essence.split_once('/')?;
    if !is_token(kind) || !is_token(subtype) {
        return None;
    }
    let charset = parts.find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim();
        let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        (!value.is_empty()).then(|| value.to_owned())
    });
    Some((essence, charset))
}

/// Splits on `separator` (ASCII) except inside double quotes (a backslash escapes inside
/// quotes). Quotes, backslashes and the separator are ASCII, so the bytes can be scanned: no
/// byte of a multi-byte UTF-8 character is one of them.
fn split_outside_quotes(text: &str, separator: char) -> impl Iterator<Item = &str> {
    debug_assert!(separator.is_ascii());
    let separator = separator as u8;
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        let (mut quoted, mut escaped) = (false, false);
        for (index, &byte) in text.as_bytes().iter().enumerate() {
            match byte {
                _ if escaped => escaped = false,
                b'\\' if quoted => escaped = true,
                b'"' => quoted = !quoted,
                _ if byte == separator && !quoted => {
                    rest = Some(&text[index + 1..]);
                    return Some(&text[..index]);
                }
                _ => {}
            }
        }
        rest = None;
        Some(text)
    })
}

/// An HTTP token (RFC 9110 `tchar`s).
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::CONTENT_TYPE, HeaderValue::from_str(value).expect("value"));
        }
        headers
    }

    fn page(essence: &str, charset: Option<&str>) -> BodyKind {
        BodyKind::Page { essence: essence.into(), charset: charset.map(str::to_owned) }
    }

    #[test]
    fn html_and_xhtml_are_pages_in_any_spelling() {
        assert_eq!(body_kind(&headers(&["Text/HTML; Charset=\"UTF-8\""])), page("text/html", Some("UTF-8")));
        assert_eq!(body_kind(&headers(&["application/xhtml+xml"])), page("application/xhtml+xml", None));
        assert_eq!(body_kind(&headers(&["text/plain"])), BodyKind::Other);
        assert_eq!(body_kind(&headers(&["text/htmlx"])), BodyKind::Other);
    }

    #[test]
    fn the_last_valid_type_wins_across_fields_and_commas() {
        assert_eq!(body_kind(&headers(&["text/plain", "text/html"])), page("text/html", None));
        assert_eq!(body_kind(&headers(&["text/html", "text/plain"])), BodyKind::Other);
        assert_eq!(body_kind(&headers(&["text/plain, text/html"])), page("text/html", None));
        // Invalid and */* values are skipped, so they cannot hide a page.
        assert_eq!(body_kind(&headers(&["text/html", "nonsense", "*/*"])), page("text/html", None));
        // The same type again keeps the earlier charset; another type drops it.
        assert_eq!(
            body_kind(&headers(&["text/html; charset=windows-1252", "text/html"])),
            page("text/html", Some("windows-1252"))
        );
        assert_eq!(body_kind(&headers(&["text/html; charset=\"a,b\"; x=1"])), page("text/html", Some("a,b")));
    }

    #[test]
    fn non_ascii_bytes_do_not_hide_a_page() {
        let mut map = HeaderMap::new();
        map.append(header::CONTENT_TYPE, HeaderValue::from_bytes(b"text/html; charset=\xE9").expect("value"));
        assert_eq!(body_kind(&map), page("text/html", Some("\u{e9}")));
        let mut map = headers(&["text/plain"]);
        map.append(header::CONTENT_TYPE, HeaderValue::from_bytes(b"text/html;x=\xFF").expect("value"));
        assert_eq!(body_kind(&map), page("text/html", None));
    }

    #[test]
    fn the_quick_answer_is_the_full_parse_answer() {
        let essences = [
            "text/html",
            "TEXT/Html",
            "application/xhtml+xml",
            "application/json",
            "text/plain",
            "*/*",
            "image/svg+xml",
            "text/xml",
            "Application/XML",
            "application/xml-dtd",
            "text/xmlx",
            "nonsense",
            "text/",
            "/html",
            "te xt/html",
            "text/html\u{b}",
            "text/html ",
            " text/html",
            "a/b+XML",
            "text/html\t",
            "\u{c}text/plain",
            "x/+xml",
            "+xml",
            "text/ht ml",
        ];
        for essence in essences {
            for suffix in ["", "; charset=utf-8", ";charset=", "; a=b; charset=latin1"] {
                let value = format!("{essence}{suffix}");
                let Ok(field) = HeaderValue::from_str(&value) else { continue };
                let mut map = HeaderMap::new();
                map.append(header::CONTENT_TYPE, field);
                let full = match extract(&map) {
                    None => BodyKind::Unlabelled,
                    Some((essence, charset)) if is_page(&essence) => BodyKind::Page { essence, charset },
                    Some((essence, _)) if is_xml(&essence) => BodyKind::XmlDocument,
                    Some(_) => BodyKind::Other,
                };
                match plain_kind(&map) {
                    Some(quick) => assert_eq!(quick, full, "{value:?}"),
                    None => {
                        assert!(matches!(full, BodyKind::Page { .. }), "{value:?} left to the full parse")
                    }
                }
            }
        }
    }

    #[test]
    fn xml_documents_are_recognised() {
        for xml in ["image/svg+xml", "text/xml", "Application/XML; charset=utf-8", "application/atom+xml"] {
            assert_eq!(body_kind(&headers(&[xml])), BodyKind::XmlDocument, "{xml}");
        }
        for other in ["application/json", "text/plain", "text/xmlx", "application/xml-dtd"] {
            assert_eq!(body_kind(&headers(&[other])), BodyKind::Other, "{other}");
        }
        assert!(matches!(body_kind(&headers(&["application/xhtml+xml"])), BodyKind::Page { .. }));
    }

    #[test]
    fn splitting_keeps_quoted_separators_and_escapes() {
        let pieces = |text| split_outside_quotes(text, ',').collect::<Vec<_>>();
        assert_eq!(pieces(""), [""]);
        assert_eq!(pieces("a,b,"), ["a", "b", ""]);
        assert_eq!(pieces(r#"a;x="1,2",b"#), [r#"a;x="1,2""#, "b"]);
        assert_eq!(pieces(r#"a;x="\",",b"#), [r#"a;x="\",""#, "b"]);
        // A backslash outside quotes escapes nothing.
        assert_eq!(pieces(r"a\,b"), [r"a\", "b"]);
        assert_eq!(pieces("é,ü"), ["é", "ü"]);
    }

    #[test]
    fn missing_or_unusable_types_are_unlabelled() {
        assert_eq!(body_kind(&HeaderMap::new()), BodyKind::Unlabelled);
        assert_eq!(body_kind(&headers(&["", "garbage"])), BodyKind::Unlabelled);
    }

    #[test]
    fn normalizing_leaves_one_unambiguous_field() {
        let mut map = headers(&["text/plain", "text/html; charset=utf-8"]);
        normalize_page_type(&mut map, "text/html", Some("utf-8"));
        assert_eq!(map.get_all(header::CONTENT_TYPE).iter().count(), 1);
        assert_eq!(map[header::CONTENT_TYPE], "text/html; charset=utf-8");
    }
}
