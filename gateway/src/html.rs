//! The HTML branch of the request path: decides whether a response is a page to rewrite, plans
//! the Content-Security-Policy changes, fixes the headers of a rewritten response, and primes
//! the rewriting body so a page that fails early gets a clear 502 instead of a broken stream.

use crate::body::ProxyBody;
use crate::config::Site;
use crate::decode::{ContentCoding, Decoder};
use crate::errors::ProxyError;
use crate::rewrite_body::RewriteBody;
use crate::state::Gateway;
use base64::Engine as _;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode};
use http_body_util::BodyExt;
use injector::{CspHeader, PageRewriter, PageSettings};

const CSP: HeaderName = header::CONTENT_SECURITY_POLICY;
const CSP_REPORT_ONLY: HeaderName = header::CONTENT_SECURITY_POLICY_REPORT_ONLY;

/// Whether the response is a full HTML page the rewriter must see: a 200 `text/html` answer to
/// anything but HEAD. 204, 304 and 206 (a slice of a page) are never rewritten.
pub fn is_page(method: &Method, response: &Response<ProxyBody>) -> bool {
    method != Method::HEAD && response.status() == StatusCode::OK && media_type_is_html(response.headers())
}

/// The browser's view of the page's origin, for CSP source expressions.
pub struct PageOrigin<'a> {
    /// `http` or `https`, as the browser used it.
    pub scheme: &'static str,
    /// The `Host` the browser sent, port included.
    pub host: &'a str,
}

/// Turns an upstream page response into the rewritten response streamed to the browser.
pub async fn rewrite(
    gateway: &Gateway,
    site: &Site,
    origin: PageOrigin<'_>,
    response: Response<ProxyBody>,
) -> Result<Response<ProxyBody>, ProxyError> {
    let (mut parts, upstream_body) = response.into_parts();
    let coding = ContentCoding::from_header(parts.headers.get(header::CONTENT_ENCODING))
        .ok_or(ProxyError::UpstreamEncoding)?;
    let runtime = injector::runtime_asset();
    let script_url = format!("{}://{}{}", origin.scheme, origin.host, runtime.path);
    let plan = injector::plan_csp(&csp_headers(&parts.headers), &fresh_nonce(), &script_url);
    replace_csp_headers(&mut parts.headers, &plan.headers)?;
    let settings = PageSettings {
        script_src: runtime.path.clone(),
        integrity: runtime.integrity.clone(),
        nonce: plan.nonce,
        script_url,
        declared_charset: declared_charset(&parts.headers),
        memory_limit: gateway.config.limits.rewrite_memory,
    };
    fix_rewritten_headers(&mut parts.headers);
    let mut body = RewriteBody::new(
        upstream_body,
        Decoder::new(coding),
        PageRewriter::new(settings),
        &gateway.metrics,
        site.id.clone(),
    );
    body.prime().await?;
    Ok(Response::from_parts(parts, body.boxed_unsync()))
}

fn media_type_is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media_type| media_type.trim().eq_ignore_ascii_case("text/html"))
}

fn declared_charset(headers: &HeaderMap) -> Option<String> {
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_owned())
    })
}

fn csp_headers(headers: &HeaderMap) -> Vec<CspHeader> {
    let collect = |name: &HeaderName, report_only: bool| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .map(move |value| CspHeader { report_only, value: value.to_owned() })
            .collect::<Vec<_>>()
    };
    let mut all = collect(&CSP, false);
    all.extend(collect(&CSP_REPORT_ONLY, true));
    all
}

/// Puts the planned policies in place of the page's own. The plan only adds nonces and the
/// script URL built from a valid `Host`, so a value that is not a header cannot happen; if it
/// did, the page is refused rather than served with a policy missing.
fn replace_csp_headers(headers: &mut HeaderMap, planned: &[CspHeader]) -> Result<(), ProxyError> {
    headers.remove(CSP);
    headers.remove(CSP_REPORT_ONLY);
    for policy in planned {
        let name = if policy.report_only { CSP_REPORT_ONLY } else { CSP };
        let value = HeaderValue::from_str(&policy.value).map_err(|_| ProxyError::RewriteFailed)?;
        headers.append(name, value);
    }
    Ok(())
}

/// A rewritten body has another length and other bytes, and it is per user from the policy
/// issue on: no length, no strong validator, no shared caching, no ranges.
fn fix_rewritten_headers(headers: &mut HeaderMap) {
    headers.remove(header::CONTENT_LENGTH);
    headers.remove(header::CONTENT_ENCODING);
    headers.remove(header::ACCEPT_RANGES);
    headers.remove("content-md5");
    headers.remove("digest");
    headers.remove("repr-digest");
    headers.remove("content-digest");
    if let Some(etag) = headers.get(header::ETAG).and_then(|value| value.to_str().ok())
        && !etag.starts_with("W/")
        && let Ok(weak) = HeaderValue::from_str(&format!("W/{etag}"))
    {
        headers.insert(header::ETAG, weak);
    }
    let directives: Vec<String> = headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|directive| directive.trim().to_owned())
        .filter(|directive| {
            let name = directive.split('=').next().unwrap_or_default().trim().to_ascii_lowercase();
            !directive.is_empty() && name != "public" && name != "s-maxage" && name != "private"
        })
        .collect();
    let mut cache_control = vec!["private".to_owned()];
    cache_control.extend(directives);
    headers.remove(header::CACHE_CONTROL);
    if let Ok(value) = HeaderValue::from_str(&cache_control.join(", ")) {
        headers.insert(header::CACHE_CONTROL, value);
    } else {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    }
}

/// A fresh per-response nonce: 128 random bits, base64.
fn fresh_nonce() -> String {
    base64::engine::general_purpose::STANDARD.encode(crate::random::random_bytes::<16>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewritten_headers_are_private_weak_and_unsized() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("10"));
        headers.insert(header::ETAG, HeaderValue::from_static("\"abc\""));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=60, s-maxage=600"));
        headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        fix_rewritten_headers(&mut headers);
        assert!(headers.get(header::CONTENT_LENGTH).is_none());
        assert!(headers.get(header::ACCEPT_RANGES).is_none());
        assert_eq!(headers[header::ETAG], "W/\"abc\"");
        assert_eq!(headers[header::CACHE_CONTROL], "private, max-age=60");
    }

    #[test]
    fn charset_and_media_type_are_read_from_content_type() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("Text/HTML; Charset=\"windows-1252\""));
        assert!(media_type_is_html(&headers));
        assert_eq!(declared_charset(&headers).as_deref(), Some("windows-1252"));
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/htmlx"));
        assert!(!media_type_is_html(&headers));
    }

    #[test]
    fn nonces_are_fresh() {
        assert_ne!(fresh_nonce(), fresh_nonce());
        assert_eq!(fresh_nonce().len(), 24);
    }
}
