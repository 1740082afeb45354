//! The gateway's reserved paths under `/.toolgate/` on every site host. Requests there are
//! answered by the gateway and never reach the upstream.
//!
//! For now: the discovery runtime script, content-hashed and cached immutably. The agent API,
//! login callback, logout and approvals arrive with their issues.

use crate::http::body::{self, ProxyBody};
use crate::http::errors::ProxyError;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};

/// Every path under this prefix belongs to the gateway.
pub const PREFIX: &str = "/.toolgate/";

/// Whether `path` is reserved for the gateway.
pub fn is_reserved(path: &str) -> bool {
    path.starts_with(PREFIX) || path == "/.toolgate"
}

/// Answers a request for a reserved path.
pub fn respond<B>(request: &Request<B>) -> Result<Response<ProxyBody>, ProxyError> {
    let runtime = injector::runtime_asset();
    if request.uri().path() != runtime.path {
        return Err(ProxyError::NotFound);
    }
    let mut response = match *request.method() {
        Method::GET => Response::new(body::full(runtime.body)),
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
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(runtime.body.len()));
    // The URL carries the content hash, so the file at it can never change.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(response)
}
