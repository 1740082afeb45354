//! RP-initiated logout (`GET /end_session`). The provider keeps no sessions, so there is nothing
//! to end; it only returns the browser to the client, and only to the origin of a registered
//! redirect URI, so the endpoint cannot be used as an open redirect.

use super::Provider;
use super::form::Parameters;
use super::pages;
use super::responses::{self, Body};
use http::{Response, StatusCode};
use url::Url;

/// `GET /end_session?post_logout_redirect_uri=…&state=…`.
pub(super) fn respond(provider: &Provider, query: &[u8]) -> Response<Body> {
    let parameters = Parameters::parse(query);
    let destination = parameters
        .get("post_logout_redirect_uri")
        .filter(|_| !parameters.is_repeated("post_logout_redirect_uri"))
        .and_then(|uri| Url::parse(uri).ok())
        .filter(|uri| provider.client.allows_post_logout(uri));
    match destination {
        Some(mut destination) => {
            if let Some(state) = parameters.get("state") {
                destination.query_pairs_mut().append_pair("state", state);
            }
            responses::redirect(destination.as_str())
        }
        None => responses::html(StatusCode::OK, pages::signed_out()),
    }
}
