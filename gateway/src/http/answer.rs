//! Small answers: JSON that no cache keeps and no browser sniffs (the one builder for every JSON
//! API), and plain text (the admin listener's probes and refusals).

use crate::http::body::{self, ProxyBody};
use http::{HeaderValue, Response, StatusCode, header};

/// `value` as the body of a `status` response, `no-store` and `nosniff`.
pub fn json(status: StatusCode, value: &serde_json::Value) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(value.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// A plain-text answer.
pub fn text(status: StatusCode, body: impl Into<bytes::Bytes>) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
