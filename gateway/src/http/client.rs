//! What the gateway knows about a request's client and address: the connection it came on
//! (`ClientInfo`), the host it is for, and the scheme the browser used (believing forwarding
//! headers only from trusted proxies).

use http::Request;
use http::header::{self, HeaderMap};
use std::net::IpAddr;

/// What the gateway saw of the client connection.
#[derive(Debug, Clone, Copy)]
pub struct ClientInfo {
    /// The peer address of the TCP connection.
    pub peer: IpAddr,
    /// Whether the connection to the gateway was TLS.
    pub tls: bool,
}

/// The host the request is for: the URI authority (HTTP/2, absolute-form) or the `Host`
/// header, lower-cased and without port.
pub fn request_host<B>(request: &Request<B>) -> Option<String> {
    let authority: http::uri::Authority = authority_text(request)?.parse().ok()?;
    Some(authority.host().trim_end_matches('.').to_ascii_lowercase())
}

/// The authority as the browser wrote it (port included), for URLs the page will use.
pub fn request_authority<B>(request: &Request<B>) -> Option<String> {
    authority_text(request).map(str::to_owned)
}

/// [`request_authority`], borrowed from the request.
fn authority_text<B>(request: &Request<B>) -> Option<&str> {
    // RFC 9112 §3.2: one Host, no userinfo; anything else is a 400.
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return None;
    }
    if let Some(authority) = request.uri().authority() {
        return (!authority.as_str().contains('@')).then(|| authority.as_str());
    }
    let value = host?.to_str().ok()?;
    (!value.is_empty() && !value.contains('@')).then_some(value)
}

/// `scheme://authority`, an origin as URLs and `Origin` headers write it; built without the
/// formatter, as it is for every request.
pub fn origin(scheme: &str, authority: &str) -> String {
    let mut origin = String::with_capacity(scheme.len() + 3 + authority.len());
    origin.push_str(scheme);
    origin.push_str("://");
    origin.push_str(authority);
    origin
}

/// The port a URL of the scheme has when it names none: 443 for `https`, 80 for `http`.
pub fn default_port(https: bool) -> u16 {
    if https { 443 } else { 80 }
}

/// `host` as a `Host` header names it: with `:port` only when the port is not the scheme's
/// default.
pub fn host_with_port(host: &str, port: Option<u16>, https: bool) -> String {
    match port {
        Some(port) if port != default_port(https) => format!("{host}:{port}"),
        _ => host.to_owned(),
    }
}

/// The scheme the browser used, as far as the gateway can tell.
pub fn browser_scheme(headers: &HeaderMap, client: ClientInfo, trusted: bool) -> &'static str {
    if trusted {
        match single_token(headers, "x-forwarded-proto") {
            Some("https") => return "https",
            Some("http") => return "http",
            _ => {}
        }
    }
    if client.tls { "https" } else { "http" }
}

/// The first comma-separated token of a header, if any.
pub(crate) fn single_token<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = headers.get(name)?.to_str().ok()?;
    let first = value.split(',').next()?.trim();
    (!first.is_empty()).then_some(first)
}
