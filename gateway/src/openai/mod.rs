//! The OpenAI-compatible endpoint for agents outside the page (SDK clients, a browser extension
//! pointed at the gateway): `POST /v1/chat/completions` and `GET /v1/models` on the gateway's
//! own host, with single sign-on configured.
//!
//! A caller authenticates with a bearer JWT from the corporate provider and names the site it
//! acts on in `X-Toolgate-Site`; the user needs that site as a page request would. The client's
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

/// Whether `path` belongs to the OpenAI-compatible API.
pub fn is_api_path(path: &str) -> bool {
    path.starts_with(PREFIX) || path == "/v1"
}

/// Answers a request under `/v1/` on the gateway host; failures are OpenAI-style JSON errors.
pub async fn handle(
    gateway: &Gateway,
    sso: &Sso,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Response<ProxyBody> {
    let path = request.uri().path().trim_end_matches('/').to_owned();
    let answer = match (request.method().clone(), path.as_str()) {
        (Method::POST, "/v1/chat/completions") => {
            completion::respond(gateway, sso, request, request_id).await
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

/// `GET /v1/models`: the one model the gateway offers, under the configured model name.
async fn models(gateway: &Gateway, sso: &Sso, headers: &HeaderMap) -> Result<Response<ProxyBody>, ApiError> {
    authenticate(sso, headers).await?;
    let llm = gateway.llm.as_ref().ok_or_else(ApiError::no_model)?;
    let body = serde_json::json!({
        "object": "list",
        "data": [{"id": llm.model(), "object": "model", "created": 0, "owned_by": "toolgate"}],
    });
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

/// The site named by `X-Toolgate-Site`, if the user may use it (its `allow_groups`). Unknown
/// sites and refused ones get the same 403, so the answer does not tell which sites exist.
async fn site_scope<'a>(
    gateway: &'a Gateway,
    identity: &Identity,
    headers: &HeaderMap,
    request_id: &RequestId,
) -> Result<&'a Site, ApiError> {
    let Some(value) = headers.get(SITE_HEADER) else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "site_required",
            "name the site this request acts on in the X-Toolgate-Site header (its site id)",
        ));
    };
    let refused = || ApiError::new(StatusCode::FORBIDDEN, "site_forbidden", "you may not use this site");
    let id = value.to_str().map_err(|_| refused())?.trim();
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
