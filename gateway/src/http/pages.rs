//! Small HTML pages the gateway itself answers with (errors, not found).
//!
//! Everything interpolated is escaped: site names come from configuration, but a habit of
//! escaping is cheaper than an audit of every caller.

/// Escapes text for HTML element content and attribute values: the dashboard's escaper, the one
/// every page the gateway writes uses. (The injector keeps its own attribute escaper: it runs
/// on lol_html's hot path, borrows when nothing needs escaping, and sits in a crate that must
/// not depend on the dashboard.)
pub use dashboard::html::escape as escape_html;

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
