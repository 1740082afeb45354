//! WebSocket (HTTP/1.1 `Upgrade`) pass-through: the handshake goes to the upstream like any
//! request; when the upstream answers 101, the two upgraded connections are spliced together.
//!
//! Frames are not inspected: WebSockets carry no HTML for the rewriter.

use crate::http::body::ProxyBody;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Request, Response, Version};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;

/// Whether a request asks for a protocol upgrade (WebSocket and the like).
pub fn is_upgrade<B>(request: &Request<B>) -> bool {
    request.version() == Version::HTTP_11
        && request.headers().contains_key(header::UPGRADE)
        && request
            .headers()
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
}

/// Puts back the two headers an upgrade needs after hop-by-hop stripping removed them.
pub fn restore_upgrade_headers(headers: &mut HeaderMap, upgrade: HeaderValue) {
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, upgrade);
}

/// Splices the client's and the upstream's upgraded connections once both are ready. Returns
/// the 101 response for the client.
pub fn tunnel(
    client: OnUpgrade,
    mut upstream_response: Response<ProxyBody>,
    site: String,
) -> Response<ProxyBody> {
    let upstream = hyper::upgrade::on(&mut upstream_response);
    tokio::spawn(async move {
        let (client, upstream) = match tokio::try_join!(client, upstream) {
            Ok(pair) => pair,
            Err(error) => {
                tracing::warn!(site = %site, error = %error, "websocket upgrade failed");
                return;
            }
        };
        let mut client = TokioIo::new(client);
        let mut upstream = TokioIo::new(upstream);
        if let Err(error) = tokio::io::copy_bidirectional(&mut client, &mut upstream).await {
            tracing::debug!(site = %site, error = %error, "websocket tunnel closed with error");
        }
    });
    upstream_response
}
