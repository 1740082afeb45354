//! The gateway's reserved paths under `/.toolgate/` on every site host. Requests there are
//! answered by the gateway and never reach the upstream, and neither does any other spelling of
//! them (`is_disguised_reserved`: refused with 400).
//!
//! For now: the discovery runtime script, content-hashed and cached immutably, in the content
//! coding the client prefers (brotli, gzip or identity, all made at build time). The agent API,
//! login callback, logout and approvals arrive with their issues.

use crate::http::accept_encoding::{self, ContentCoding};
use crate::http::body::{self, ProxyBody};
use crate::http::errors::ProxyError;
use crate::http::percent_decode;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};

/// Every path under this prefix belongs to the gateway.
pub const PREFIX: &str = "/.toolgate/";

/// Whether `path` is reserved for the gateway.
pub fn is_reserved(path: &str) -> bool {
    path.starts_with(PREFIX) || path == "/.toolgate"
}

/// Whether `path` is another spelling of a reserved path (`//.toolgate/`, `/%2Etoolgate/`,
/// `/.TOOLGATE/`, `/x/../.toolgate/`, `/.toolgate;x/`, `\.toolgate\`…): refused with 400, never
/// forwarded, since an upstream that normalises paths would read it as the gateway's. The
/// reading is deliberately wide: every percent-escape decoded (three rounds, for double
/// encoding), `\` as `/`, `;` parameters dropped, slashes merged, dot segments resolved, case
/// folded.
pub fn is_disguised_reserved(path: &str) -> bool {
    if is_reserved(path) {
        return false;
    }
    // The common case, decided without allocating: plain ASCII with no escape cannot spell the
    // namespace unless it contains its name (only non-ASCII letters lower-case into others).
    let may_spell =
        |path: &str| path.as_bytes().windows(8).any(|window| window.eq_ignore_ascii_case(b"toolgate"));
    if path.is_ascii() && !path.contains('%') && !may_spell(path) {
        return false;
    }
    let decoded = percent_decode(path, 3);
    let lowered = decoded.replace('\\', "/").to_lowercase();
    let mut segments: Vec<&str> = Vec::new();
    for segment in lowered.split('/') {
        let segment = segment.split(';').next().unwrap_or_default();
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    segments.first().is_some_and(|first| *first == ".toolgate")
}

/// Answers a request for a reserved path.
pub fn respond<B>(request: &Request<B>) -> Result<Response<ProxyBody>, ProxyError> {
    let runtime = injector::runtime_asset();
    if request.uri().path() != runtime.path {
        return Err(ProxyError::NotFound);
    }
    // Smallest first: where the client weighs two codings alike, it gets the smaller body.
    let coding = accept_encoding::negotiate(request.headers(), &[ContentCoding::Brotli, ContentCoding::Gzip]);
    let bytes = match coding {
        ContentCoding::Brotli => runtime.brotli,
        ContentCoding::Gzip => runtime.gzip,
        // zstd is not offered here (it is for pages compressed in the stream).
        ContentCoding::Identity | ContentCoding::Zstd => runtime.body,
    };
    let mut response = match *request.method() {
        Method::GET => Response::new(body::full(bytes)),
        Method::HEAD => Response::new(body::empty()),
        _ => {
            let mut response = Response::new(body::empty());
            *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Ok(response);
        }
    };
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    if let Some(encoding) = coding.content_encoding() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    // Every answer says it depends on `Accept-Encoding`, the identity one too, so a shared cache
    // never hands brotli to a client that did not ask for it (or identity to every client).
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    // The URL carries the content hash, so the file at it can never change.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_reserved_namespace_is_caught() {
        for path in [
            "//.toolgate/agent/session",
            "/%2Etoolgate/runtime.js",
            "/%2etoolgate/",
            "/%252Etoolgate/x",
            "/.TOOLGATE/agent/turn",
            "/.ToolGate",
            "/x/../.toolgate/agent/session",
            "/./.toolgate/x",
            "/.toolgate;jsessionid=1/x",
            "/%5C.toolgate%5Cx",
            "/\\.toolgate/x",
            "/a/b/../../.toolgate",
            "/%2F.toolgate/x",
            "///.toolgate",
        ] {
            assert!(is_disguised_reserved(path), "{path}");
        }
        for path in [
            "/.toolgate/agent/session",
            "/.toolgate",
            "/",
            "/toolgate/x",
            "/x/.toolgate/y",
            "/.toolgatex/",
            "/%2E%2E/x",
        ] {
            assert!(!is_disguised_reserved(path), "{path}");
        }
    }
}
