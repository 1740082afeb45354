//! Small HTML pages the gateway itself answers with (errors, not found).
//!
//! Everything interpolated is escaped: site names come from configuration, but a habit of
//! escaping is cheaper than an audit of every caller.

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A complete error page: a title, a sentence saying what happened and what to do.
pub fn error_page(status: u16, title: &str, detail: &str, request_id: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width\"><title>{status} {title}</title>\
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}}\
small{{color:#666}}</style></head>\n<body><h1>{title}</h1><p>{detail}</p>\
<p><small>Toolgate gateway · status {status} · request {request_id}</small></p></body></html>\n",
        title = escape_html(title),
        detail = escape_html(detail),
        request_id = escape_html(request_id),
    )
}

/// A small complete page; `body_html` must already be escaped by the caller.
pub fn page(title: &str, body_html: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width\"><title>{title}</title>\
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}}\
button{{font:inherit;padding:.4rem 1rem}}</style></head>\n<body><h1>{title}</h1>{body_html}</body></html>\n",
        title = escape_html(title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_content_is_escaped() {
        let page = error_page(502, "<x>", "a \"b\" & 'c'", "<id>");
        assert!(page.contains("&lt;x&gt;"));
        assert!(page.contains("a &quot;b&quot; &amp; &#39;c&#39;"));
        assert!(!page.contains("<id>"));
    }
}
