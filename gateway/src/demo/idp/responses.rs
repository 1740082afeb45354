//! The HTTP responses the provider sends: JSON, HTML pages, redirects and plain text, each with
//! the headers its kind needs (no caching of anything token-bearing, no framing of pages).

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::Full;
use serde::Serialize;

/// The body of every response.
pub(super) type Body = Full<Bytes>;

/// A JSON response; never cached, since most carry tokens or are about them.
pub(super) fn json(status: StatusCode, value: &impl Serialize) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut response = with_body(status, "application/json", bytes);
            no_store(&mut response);
            response
        }
        Err(_) => plain(StatusCode::INTERNAL_SERVER_ERROR, "cannot encode the response"),
    }
}

/// An HTML page; never cached or framed, and allowed no scripts.
pub(super) fn html(status: StatusCode, page: String) -> Response<Body> {
    let mut response = with_body(status, "text/html; charset=utf-8", page.into_bytes());
    no_store(&mut response);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// A `302 Found` to `location`, which callers build with `url::Url` so it is valid header text.
pub(super) fn redirect(location: &str) -> Response<Body> {
    match HeaderValue::from_str(location) {
        Ok(value) => {
            let mut response = with_body(StatusCode::FOUND, "text/plain; charset=utf-8", Vec::new());
            response.headers_mut().insert(header::LOCATION, value);
            no_store(&mut response);
            response
        }
        Err(_) => plain(StatusCode::INTERNAL_SERVER_ERROR, "cannot encode the redirect location"),
    }
}

/// A short plain-text response.
pub(super) fn plain(status: StatusCode, text: &str) -> Response<Body> {
    with_body(status, "text/plain; charset=utf-8", format!("{text}\n").into_bytes())
}

fn with_body(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn no_store(response: &mut Response<Body>) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}
