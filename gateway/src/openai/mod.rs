//! The OpenAI-compatible endpoint for agents outside the page (SDK clients, a browser extension
//! pointed at the gateway): `POST /v1/chat/completions` and `GET /v1/models` on the gateway's
//! own host, with single sign-on configured.
//!
//! A caller authenticates with a bearer JWT from the corporate provider and names the site it
//! acts on in `X-Toolgate-Site`, or in the path (`/sites/{site}/v1/…`, a base URL of its own for
//! clients that cannot send headers); the user needs that site as a page request would. The client's
//! tools are filtered by the policy, the conversation is redacted and capped, the configured
//! model answers with the gateway's credentials, and every tool call in the answer is decided
//! again with its arguments: only allowed calls go back for execution. Errors have OpenAI's shape.
//!
//! Layer 6 of the gateway (ARCHITECTURE.md, "Code map"): may import `agent`, `audit`, `config`,
//! `http`, `llm`, `metrics`, `sso`, `state`, `support`.

mod calls;
mod completion;
mod error;
mod exchange;
mod options;
mod request;
mod response;
mod stream;

use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::http::request_id::RequestId;
use crate::sso::Sso;
use crate::sso::bearer::BearerError;
use crate::sso::identity::Identity;
use crate::state::Gateway;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use hyper::body::Incoming;

pub use error::ApiError;

/// The prefix of every path this endpoint answers on the gateway host.
pub const PREFIX: &str = "/v1/";

/// The header that names the site a request acts on.
pub const SITE_HEADER: &str = "x-toolgate-site";

/// The prefix of a per-site base URL: `/sites/{site}/v1/…`.
const SITES_PREFIX: &str = "/sites/";

/// Whether `path` belongs to the OpenAI-compatible API.
pub fn is_api_path(path: &str) -> bool {
    api_path(path).is_some()
}

/// A path of the API, split into the site its base URL names (`/sites/{site}/v1/…`) and the
/// API path (`/v1/…`); `None` for other paths.
fn api_path(path: &str) -> Option<(Option<&str>, &str)> {
    if path.starts_with(PREFIX) || path == "/v1" {
        return Some((None, path));
    }
    let rest = path.strip_prefix(SITES_PREFIX)?;
    let (site, api) = rest.split_once('/')?;
    let api_starts = &rest[site.len()..];
    (!site.is_empty() && (api.starts_with("v1/") || api == "v1")).then_some((Some(site), api_starts))
}

/// The site id a `/v1` request names: in its base URL, else in `X-Toolgate-Site`.
pub fn named_site<'a>(path: &'a str, headers: &'a HeaderMap) -> Option<&'a str> {
    match api_path(path)? {
        (Some(site), _) => Some(site),
        (None, _) => headers.get(SITE_HEADER)?.to_str().ok().map(str::trim),
    }
}

/// Answers a request under `/v1/` on the gateway host; failures are OpenAI-style JSON errors.
pub async fn handle(
    gateway: &Gateway,
    sso: &Sso,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Response<ProxyBody> {
    let full_path = request.uri().path().trim_end_matches('/').to_owned();
    let Some((path_site, path)) = api_path(&full_path) else {
        return ApiError::new(StatusCode::NOT_FOUND, "not_found", "not an API path").into_response();
    };
    if let (Some(in_path), Some(in_header)) = (path_site, request.headers().get(SITE_HEADER))
        && in_header.to_str().map(str::trim).ok() != Some(in_path)
    {
        return ApiError::invalid(
            "site_conflict",
            "the base URL and the X-Toolgate-Site header name different sites; send one",
        )
        .into_response();
    }
    let named = named_site(&full_path, request.headers()).map(str::to_owned);
    let answer = match (request.method().clone(), path) {
        (Method::POST, "/v1/chat/completions") => {
            completion::respond(gateway, sso, request, named.as_deref(), request_id).await
        }
        (Method::GET, "/v1/models") => models(gateway, sso, request.headers()).await,
        (_, "/v1/chat/completions" | "/v1/models") => Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this endpoint does not accept that method",
        )),
        _ => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "the gateway serves only /v1/chat/completions and /v1/models",
        )),
    };
    answer.unwrap_or_else(ApiError::into_response)
}

/// `GET /v1/models`: the one model the gateway offers, under the configured model name and
/// each of its aliases (clients that pick from the list then find the name they expect).
async fn models(gateway: &Gateway, sso: &Sso, headers: &HeaderMap) -> Result<Response<ProxyBody>, ApiError> {
    authenticate(sso, headers).await?;
    let llm = gateway.llm.as_ref().ok_or_else(ApiError::no_model)?;
    let names = std::iter::once(llm.model()).chain(llm.aliases().iter().map(String::as_str));
    let data: Vec<_> = names
        .map(|name| serde_json::json!({"id": name, "object": "model", "created": 0, "owned_by": "toolgate"}))
        .collect();
    let body = serde_json::json!({ "object": "list", "data": data });
    Ok(response::json(StatusCode::OK, &body))
}

/// The caller's identity from `Authorization: Bearer <JWT>`. Only bearer tokens count here: a
/// session cookie on the gateway host would let any page the user visits post completions.
async fn authenticate(sso: &Sso, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let token = crate::http::bearer_token(headers).ok_or_else(|| {
        ApiError::unauthenticated("send Authorization: Bearer <token from the identity provider>")
    })?;
    match sso.bearer_identity(token).await {
        Ok(identity) => Ok(identity),
        Err(BearerError::Unavailable) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "sso_unavailable",
            "the identity provider cannot be reached to verify the token; try again later",
        )),
        Err(error) => {
            tracing::info!(reason = %error, "bearer token refused");
            Err(ApiError::unauthenticated("the bearer token was not accepted; get a fresh one"))
        }
    }
}

/// The site the request names (base URL or `X-Toolgate-Site`), if the user may use it (its
/// `allow_groups`). Unknown sites and refused ones get the same 403, so the answer does not
/// tell which sites exist.
async fn site_scope<'a>(
    gateway: &'a Gateway,
    identity: &Identity,
    named: Option<&str>,
    request_id: &RequestId,
) -> Result<&'a Site, ApiError> {
    let Some(id) = named else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "site_required",
            "name the site this request acts on: use the base URL {public_url}/sites/{site}/v1, or send \
             the X-Toolgate-Site header (its site id)",
        ));
    };
    let refused = || ApiError::new(StatusCode::FORBIDDEN, "site_forbidden", "you may not use this site");
    let site = gateway.config.sites.iter().find(|site| site.id.as_str() == id).ok_or_else(refused)?;
    if site.allow_groups.as_ref().is_some_and(|allowed| !identity.in_any(allowed)) {
        let event = AuditEvent::new(EventKind::AccessDenied)
            .actor(&identity.user, identity.email.as_deref(), &identity.groups)
            .site(site.id.as_str())
            .request(request_id.as_str())
            .decision("deny", "site_access_rule");
        gateway.audit.record(event).await.map_err(|_| ApiError::audit_unavailable())?;
        return Err(refused());
    }
    Ok(site)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_paths_name_their_site_in_the_base_url_or_not_at_all() {
        assert_eq!(api_path("/v1/chat/completions"), Some((None, "/v1/chat/completions")));
        assert_eq!(api_path("/v1"), Some((None, "/v1")));
        assert_eq!(api_path("/sites/tasks/v1/models"), Some((Some("tasks"), "/v1/models")));
        assert_eq!(api_path("/sites/tasks/v1"), Some((Some("tasks"), "/v1")));
        for other in ["/", "/v2/x", "/sites/tasks", "/sites//v1/models", "/sites/tasks/v1x", "/v1x"] {
            assert_eq!(api_path(other), None, "{other}");
        }
    }
}
