//! The dashboard's responses: every page with a strict Content-Security-Policy (no scripts at
//! all, styles only from its own stylesheet), never framed, never cached; refusals as pages
//! that carry no admin data.

use crate::http::body::{self, ProxyBody};
use crate::http::errors::{ProxyError, error_response};
use crate::http::request_id::RequestId;
use http::{HeaderValue, Response, StatusCode, header};

/// No scripts, no plugins, no framing; forms post only to the dashboard itself.
const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// A dashboard page.
pub(super) fn page(status: StatusCode, html: String) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(html));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    secure_headers(headers);
    response
}

/// A download (policy text, audit export).
pub(super) fn download(content_type: &'static str, file_name: &str, data: String) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(data));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    let disposition = format!("attachment; filename=\"{}\"", file_name.replace(['"', '\\', '\r', '\n'], "_"));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    secure_headers(headers);
    response
}

/// After a successful POST: back to a page (so reloading does not submit again).
pub(super) fn see_other(location: &str) -> Response<ProxyBody> {
    let mut response = Response::new(body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    secure_headers(response.headers_mut());
    response
}

fn secure_headers(headers: &mut http::HeaderMap) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// The stylesheet (the only style source the policy allows).
pub(super) fn stylesheet() -> Response<ProxyBody> {
    let mut response = Response::new(body::full(dashboard::STYLESHEET));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/css; charset=utf-8"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// 204 (the browser's icon request: the dashboard has none).
pub(super) fn no_content() -> Response<ProxyBody> {
    let mut response = Response::new(body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

/// An error page.
pub(super) fn error(status: StatusCode, title: &str, message: &str) -> Response<ProxyBody> {
    page(status, dashboard::error_page(title, message))
}

/// 503: the store could not be read or written; `what` says what (nothing was changed).
pub(super) fn store_unavailable(what: &str) -> Response<ProxyBody> {
    error(StatusCode::SERVICE_UNAVAILABLE, "Store unavailable", what)
}

/// 404.
pub(super) fn not_found() -> Response<ProxyBody> {
    error(StatusCode::NOT_FOUND, "Not found", "The dashboard has no such page.")
}

/// 403 for a signed-in user without any dashboard role: no navigation, no data.
pub(super) fn forbidden(user: &str, reason: &str, logout_csrf: &str) -> Response<ProxyBody> {
    page(StatusCode::FORBIDDEN, dashboard::forbidden(user, reason, logout_csrf))
}

/// 403 for a page the caller's roles do not open.
pub(super) fn role_refused() -> Response<ProxyBody> {
    error(StatusCode::FORBIDDEN, "Not allowed", "Your dashboard role does not open this page or action.")
}

/// 403 for a form without this session's dashboard token or from another origin.
pub(super) fn csrf_refused(user: &str, logout_csrf: &str) -> Response<ProxyBody> {
    forbidden(
        user,
        "The form did not carry this session's dashboard token, or did not come from the dashboard. \
         Nothing was changed; open the page again and resubmit.",
        logout_csrf,
    )
}

/// A failure the proxy's error pages describe (sign-in unavailable, …).
pub(super) fn proxy_error(error: ProxyError, request_id: &RequestId) -> Response<ProxyBody> {
    error_response(error, None, request_id.as_str())
}
