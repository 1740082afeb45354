//! The HTML branch of the request path: decides whether a response is a document the filter
//! must see (any status with a body, `text/html` or XHTML however the headers spell it), plans
//! the Content-Security-Policy changes, fixes the headers of a rewritten response, primes the
//! rewriting body so a page that fails early gets a clear 502 instead of a broken stream, and
//! compresses the rewritten page for the browser when it may (`compression`, `encode`).
//!
//! Layer 5 of the gateway (ARCHITECTURE.md, "Code map"): may import `config`, `http`, `metrics`,
//! `outcomes`, `state`, `support`.

pub mod compression;
pub mod decode;
pub mod encode;
pub mod rewrite_body;
pub mod visibility;

use crate::config::Site;
use crate::http::accept_encoding::ContentCoding;
use crate::http::body::ProxyBody;
use crate::http::content_type::{self, BodyKind};
use crate::http::errors::ProxyError;
use crate::outcomes::PageWatch;
use crate::page::compression::Compression;
use crate::page::decode::Decoder;
use crate::page::encode::{CompressedBody, Encoder};
use crate::page::rewrite_body::RewriteBody;
use crate::state::Gateway;
use base64::Engine as _;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Response, StatusCode};
use http_body_util::BodyExt;
use injector::{CspHeader, PagePolicy, PageRewriter, PageSettings};

const CSP: HeaderName = header::CONTENT_SECURITY_POLICY;
const CSP_REPORT_ONLY: HeaderName = header::CONTENT_SECURITY_POLICY_REPORT_ONLY;
const PERMISSIONS_POLICY: HeaderName = HeaderName::from_static("permissions-policy");

/// What the gateway does with a response body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Treatment {
    /// A document: filter and inject.
    Rewrite {
        /// The charset the headers declare, if any.
        charset: Option<String>,
    },
    /// A slice (206) of a document: the filter cannot work on a slice, so the whole page is
    /// fetched again without `Range`.
    Refetch,
    /// No usable `Content-Type`: a browser would sniff, and could render unfiltered HTML; the
    /// gateway adds `X-Content-Type-Options: nosniff` so it cannot.
    ForbidSniffing,
    /// SVG or another XML document (`BodyKind::XmlDocument`): streamed untouched, with the
    /// browser's agent APIs switched off (`guard_xml_document`).
    XmlDocument,
    /// Anything else: streamed untouched.
    PassThrough,
}

/// Decides the treatment of an upstream response. Error pages are documents too; responses
/// without a body a browser shows (HEAD, 1xx, 204, 205, 304, an empty body, a 3xx with
/// `Location`) are never rewritten.
pub fn treatment(method: &Method, response: &Response<ProxyBody>) -> Treatment {
    let status = response.status();
    let kind = content_type::body_kind(response.headers());
    // Nothing to filter and nothing a browser renders: no body, an empty one, or the body of a
    // redirect the browser follows (it never shows it, and no page script can read it).
    let empty =
        response.headers().get(header::CONTENT_LENGTH).is_some_and(|length| length.as_bytes() == b"0");
    let followed_redirect = status.is_redirection() && response.headers().contains_key(header::LOCATION);
    let bodiless = method == Method::HEAD
        || status.is_informational()
        || matches!(status, StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT | StatusCode::NOT_MODIFIED)
        || empty
        || followed_redirect;
    match kind {
        // A bodiless answer still carries headers a browser applies (a 304 refreshes the cached
        // document's), so an XML document's guard goes on every answer.
        BodyKind::XmlDocument => Treatment::XmlDocument,
        _ if bodiless => Treatment::PassThrough,
        BodyKind::Page { .. } if status == StatusCode::PARTIAL_CONTENT => Treatment::Refetch,
        BodyKind::Page { charset, .. } => Treatment::Rewrite { charset },
        BodyKind::Unlabelled => Treatment::ForbidSniffing,
        BodyKind::Other => Treatment::PassThrough,
    }
}

/// The browser's view of the page's origin, for CSP source expressions.
pub struct PageOrigin<'a> {
    /// `http` or `https`, as the browser used it.
    pub scheme: &'static str,
    /// The `Host` the browser sent, port included.
    pub host: &'a str,
    /// The page's path.
    pub path: &'a str,
}

/// What the filter needs about the user on this site.
pub struct PageUser {
    /// Visibility and form rules for the filter.
    pub policy: PagePolicy,
    /// Whether page tools are on (else `Permissions-Policy: tools=()`).
    pub tools_on: bool,
}

/// Turns an upstream page response into the rewritten response streamed to the browser,
/// compressed in `preferred` (the configured coding the browser prefers,
/// `compression::preferred`) unless the page must not be. A page that answers an agent's form
/// submission is also read for the site's verdict (`answer`).
pub async fn rewrite(
    gateway: &Gateway,
    site: &Site,
    origin: PageOrigin<'_>,
    user: PageUser,
    preferred: ContentCoding,
    response: Response<ProxyBody>,
    answer: Option<PageWatch>,
) -> Result<Response<ProxyBody>, ProxyError> {
    let (mut parts, upstream_body) = response.into_parts();
    let decoder = Decoder::for_content_encoding(parts.headers.get(header::CONTENT_ENCODING))
        .ok_or(ProxyError::UpstreamEncoding)?;
    // Decided on the upstream's own headers, before the rewrite changes them.
    let config = &gateway.config.compression;
    let mut compression = compression::choose(config, preferred, parts.status, &parts.headers);
    let encoder = match compression {
        Compression::Encode(coding) => Encoder::new(coding, config),
        Compression::Never | Compression::Identity => None,
    };
    if encoder.is_none() && matches!(compression, Compression::Encode(_)) {
        compression = Compression::Identity;
    }
    if let BodyKind::Page { essence, charset } = content_type::body_kind(&parts.headers) {
        // The filter parses HTML. An XHTML page is served as HTML so the browser parses exactly
        // what was filtered: XML would make markup inside <style>, <script> or <title>, and
        // entities declared in a DTD, into real elements the filter never saw.
        let essence = if essence == "application/xhtml+xml" { "text/html" } else { essence.as_str() };
        content_type::normalize_page_type(&mut parts.headers, essence, charset.as_deref());
    }
    let runtime = injector::runtime_asset();
    let script_url = format!("{}://{}{}", origin.scheme, origin.host, runtime.path);
    let upstream_csp = csp_headers(&parts.headers);
    // A page sandboxed into an opaque origin cannot load the runtime (its integrity check needs
    // a CORS-enabled request): it is filtered without it, its CSP untouched, its tools off.
    let sandboxed = injector::sandboxes_origin(&upstream_csp);
    let plan = injector::plan_csp(&upstream_csp, &fresh_nonce(), &script_url);
    if !sandboxed {
        replace_csp_headers(&mut parts.headers, &plan.headers)?;
    }
    let settings = PageSettings {
        script_src: runtime.path.clone(),
        integrity: runtime.integrity.clone(),
        nonce: plan.nonce,
        script_url,
        declared_charset: declared_charset(&parts.headers),
        memory_limit: gateway.config.limits.rewrite_memory,
        inject: !sandboxed,
    };
    let declared_length = crate::http::body::declared_length(&parts.headers);
    fix_rewritten_headers(&mut parts.headers);
    compression::set_headers(&mut parts.headers, compression);
    if !user.tools_on || sandboxed {
        switch_page_tools_off(&mut parts.headers);
    }
    if sandboxed {
        note_sandboxed(gateway, site, origin.path);
    }
    let mut rewriter = PageRewriter::filtered(settings, user.policy);
    if let Some(watch) = &answer {
        rewriter = rewriter.with_answer_probe(watch.probe());
    }
    let mut body = RewriteBody::new(
        upstream_body,
        declared_length,
        decoder,
        rewriter,
        gateway.page_counters(site),
        site.id.clone(),
        answer,
    );
    body.prime().await?;
    let body = match encoder {
        Some(encoder) => CompressedBody::new(body, encoder).boxed_unsync(),
        None => body.boxed_unsync(),
    };
    Ok(Response::from_parts(parts, body))
}

/// Tells the inventory that this page of the site runs without the runtime, its tools off
/// (in a task of its own, so the page never waits for it; a failure is only logged).
fn note_sandboxed(gateway: &Gateway, site: &Site, path: &str) {
    let (inventory, site_id, path) = (gateway.inventory.clone(), site.id.clone(), path.to_owned());
    tokio::spawn(async move {
        let now = crate::support::clock::unix_now();
        if let Err(error) = inventory.note_sandboxed(site_id.as_str(), &path, now).await {
            tracing::warn!(site = %site_id, error = %error, "the sandboxed page was not noted in the inventory");
        }
    });
}

/// SVG and XML documents (`Treatment::XmlDocument`) can carry tool markup the HTML filter
/// cannot parse: the browser's own agent APIs are switched off in them, whoever the user is.
pub fn guard_xml_document(response: &mut Response<ProxyBody>) {
    switch_page_tools_off(response.headers_mut());
}

/// Marks an unlabelled response so no browser sniffs it into a page.
pub fn forbid_sniffing(response: &mut Response<ProxyBody>) {
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

/// Adds `tools=()` to the page's Permissions-Policy (replacing a `tools` member the site set),
/// so the browser's own agent APIs are off in this document too.
fn switch_page_tools_off(headers: &mut HeaderMap) {
    let mut members: Vec<String> = headers
        .get_all(&PERMISSIONS_POLICY)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|member| {
            let name = member.split('=').next().unwrap_or_default().trim();
            !member.is_empty() && !name.eq_ignore_ascii_case("tools")
        })
        .map(str::to_owned)
        .collect();
    // Browsers ignore a Permissions-Policy that does not parse, our member with it; the site's
    // own members are kept only when each looks valid (the browser would have ignored them anyway).
    if !members.iter().all(|member| is_plausible_policy_member(member)) {
        members.clear();
    }
    members.push("tools=()".to_owned());
    headers.remove(&PERMISSIONS_POLICY);
    let value = HeaderValue::from_str(&members.join(", ")).unwrap_or(HeaderValue::from_static("tools=()"));
    headers.insert(PERMISSIONS_POLICY, value);
}

/// A conservative check of one structured-field dictionary member of a Permissions-Policy:
/// `feature=()`, `feature=*`, `feature=self`, `feature=(self "https://a.example")`, with optional
/// parameters.
fn is_plausible_policy_member(member: &str) -> bool {
    let member = member.split(';').next().unwrap_or_default();
    let Some((key, value)) = member.split_once('=') else { return false };
    let key_ok = key.bytes().next().is_some_and(|byte| byte.is_ascii_lowercase() || byte == b'*')
        && key
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"_-.*".contains(&byte));
    let item = |text: &str| {
        matches!(text, "*" | "self" | "src")
            || (text.len() >= 2
                && text.starts_with('"')
                && text.ends_with('"')
                && text[1..text.len() - 1]
                    .bytes()
                    .all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\'))
    };
    let value = value.trim();
    let value_ok = match value.strip_prefix('(').and_then(|rest| rest.strip_suffix(')')) {
        Some(inner) => inner.split(' ').filter(|part| !part.is_empty()).all(item),
        None => item(value),
    };
    key_ok && value_ok
}

fn declared_charset(headers: &HeaderMap) -> Option<String> {
    match content_type::body_kind(headers) {
        BodyKind::Page { charset, .. } => charset,
        _ => None,
    }
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
///
/// A policy that is not text (a byte >= 0x80) cannot be planned; it is kept exactly as sent, so
/// the page never loses a restriction (the browser may then block the runtime: fail safe).
fn replace_csp_headers(headers: &mut HeaderMap, planned: &[CspHeader]) -> Result<(), ProxyError> {
    let mut unreadable = Vec::new();
    for name in [CSP, CSP_REPORT_ONLY] {
        for value in headers.get_all(&name) {
            if value.to_str().is_err() {
                unreadable.push((name.clone(), value.clone()));
            }
        }
        headers.remove(&name);
    }
    for policy in planned {
        let name = if policy.report_only { CSP_REPORT_ONLY } else { CSP };
        let value = HeaderValue::from_str(&policy.value).map_err(|_| ProxyError::RewriteFailed)?;
        headers.append(name, value);
    }
    for (name, value) in unreadable {
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
    base64::engine::general_purpose::STANDARD.encode(crate::support::random::random_bytes::<16>())
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
    fn treatment_covers_error_pages_ranges_and_unlabelled_bodies() {
        let response = |status: u16, content_type: Option<&str>| {
            let mut response = Response::new(crate::http::body::empty());
            *response.status_mut() = StatusCode::from_u16(status).expect("status");
            if let Some(value) = content_type {
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_str(value).expect("value"));
            }
            response
        };
        let rewrite = |charset: Option<&str>| Treatment::Rewrite { charset: charset.map(str::to_owned) };
        let get = Method::GET;
        assert_eq!(treatment(&get, &response(200, Some("text/html; charset=utf-8"))), rewrite(Some("utf-8")));
        assert_eq!(treatment(&get, &response(404, Some("text/html"))), rewrite(None));
        assert_eq!(treatment(&get, &response(500, Some("application/xhtml+xml"))), rewrite(None));
        assert_eq!(treatment(&get, &response(206, Some("text/html"))), Treatment::Refetch);
        assert_eq!(treatment(&get, &response(200, None)), Treatment::ForbidSniffing);
        assert_eq!(treatment(&get, &response(200, Some("application/json"))), Treatment::PassThrough);
        assert_eq!(treatment(&Method::HEAD, &response(200, Some("text/html"))), Treatment::PassThrough);
        assert_eq!(treatment(&get, &response(304, Some("text/html"))), Treatment::PassThrough);
        assert_eq!(treatment(&get, &response(204, Some("text/html"))), Treatment::PassThrough);
        // An XML document is guarded on every answer, bodiless ones included.
        assert_eq!(treatment(&get, &response(200, Some("image/svg+xml"))), Treatment::XmlDocument);
        assert_eq!(treatment(&get, &response(304, Some("application/xml"))), Treatment::XmlDocument);
        assert_eq!(treatment(&Method::HEAD, &response(200, Some("text/xml"))), Treatment::XmlDocument);
    }

    #[test]
    fn redirects_the_browser_follows_and_empty_bodies_get_nothing() {
        let response = |status: u16, headers: &[(header::HeaderName, &'static str)]| {
            let mut response = Response::new(crate::http::body::empty());
            *response.status_mut() = StatusCode::from_u16(status).expect("status");
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            for (name, value) in headers {
                response.headers_mut().insert(name, HeaderValue::from_static(value));
            }
            response
        };
        let get = Method::GET;
        let to = (header::LOCATION, "/next");
        for status in [301, 302, 303, 307, 308] {
            assert_eq!(
                treatment(&get, &response(status, std::slice::from_ref(&to))),
                Treatment::PassThrough,
                "{status}"
            );
        }
        assert_eq!(treatment(&get, &response(200, &[(header::CONTENT_LENGTH, "0")])), Treatment::PassThrough);
        // A 3xx without a Location (300 Multiple Choices) is shown, so it is filtered.
        assert_eq!(treatment(&get, &response(300, &[])), Treatment::Rewrite { charset: None });
        assert_eq!(
            treatment(&get, &response(200, &[(header::CONTENT_LENGTH, "10")])),
            Treatment::Rewrite { charset: None }
        );
    }

    #[test]
    fn unreadable_policies_are_kept_as_sent() {
        let mut headers = HeaderMap::new();
        headers.append(CSP, HeaderValue::from_bytes(b"script-src 'none'; img-src \xE9").expect("value"));
        headers.append(CSP, HeaderValue::from_static("script-src 'self'"));
        let planned =
            injector::plan_csp(&csp_headers(&headers), "bm9uY2U=", "http://a.test/.toolgate/runtime.x.js");
        replace_csp_headers(&mut headers, &planned.headers).expect("replaced");
        let values: Vec<&[u8]> = headers.get_all(CSP).iter().map(HeaderValue::as_bytes).collect();
        assert_eq!(values, [&b"script-src 'self'"[..], &b"script-src 'none'; img-src \xE9"[..]]);
    }

    #[test]
    fn page_tools_off_replaces_any_tools_member() {
        let mut headers = HeaderMap::new();
        headers.append(&PERMISSIONS_POLICY, HeaderValue::from_static("camera=(), tools=(self)"));
        headers.append(&PERMISSIONS_POLICY, HeaderValue::from_static("geolocation=()"));
        switch_page_tools_off(&mut headers);
        assert_eq!(headers.get_all(&PERMISSIONS_POLICY).iter().count(), 1);
        assert_eq!(headers[&PERMISSIONS_POLICY], "camera=(), geolocation=(), tools=()");
        let mut empty = HeaderMap::new();
        switch_page_tools_off(&mut empty);
        assert_eq!(empty[&PERMISSIONS_POLICY], "tools=()");
        // An invalid site policy would make the browser drop ours too: only ours is sent.
        let mut invalid = HeaderMap::new();
        invalid.insert(&PERMISSIONS_POLICY, HeaderValue::from_static("camera 'none', geolocation=(self)"));
        switch_page_tools_off(&mut invalid);
        assert_eq!(invalid[&PERMISSIONS_POLICY], "tools=()");
        let mut origins = HeaderMap::new();
        origins.insert(
            &PERMISSIONS_POLICY,
            HeaderValue::from_static("fullscreen=(self \"https://a.example\"), usb=*"),
        );
        switch_page_tools_off(&mut origins);
        assert_eq!(origins[&PERMISSIONS_POLICY], "fullscreen=(self \"https://a.example\"), usb=*, tools=()");
    }

    #[test]
    fn nonces_are_fresh() {
        assert_ne!(fresh_nonce(), fresh_nonce());
        assert_eq!(fresh_nonce().len(), 24);
    }
}
