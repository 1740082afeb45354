//! The agent API under `/.toolgate/agent/` on every site host, for the runtime in the page.
//!
//! Every request here is authenticated like a page request (session cookie, the site's access
//! rules); state-changing ones also need the session's CSRF token. Answers and errors are JSON.
//! `session` (who am I, the CSRF token, limits), `catalog` (the page reports the tools it found,
//! the gateway answers which ones the policy lets this user see, and keeps the inventory),
//! `turn` (a message in, the agent loop's events out), `result` (the page's answer to a tool
//! call), `outcomes/{call id}` (what the site answered an agent's form submission) and
//! `approvals/{id}` (the user's own approval decisions).
//!
//! Layer 5 of the gateway (ARCHITECTURE.md, "Code map"): may import `approvals`, `audit`, `config`,
//! `http`, `inventory`, `llm`, `metrics`, `outcomes`, `sso`, `state`, `store`, `support`.

mod approval;
mod approval_endpoints;
mod arguments;
mod catalog;
mod context;
mod conversation_endpoint;
mod csrf;
mod deciders;
mod memory;
mod outcome_endpoint;
mod prompt;
mod session;
mod sse;
mod turn;
mod turn_endpoints;

use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::http::json;
use crate::http::request_id::RequestId;
use crate::sso::identity::Identity;
use crate::sso::session::SessionId;
use crate::state::Gateway;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use hyper::body::Incoming;

pub use prompt::{cap, exposure_event};

/// The prefix of every agent API path.
pub const PREFIX: &str = "/.toolgate/agent/";

/// Who is calling: the signed-in user and their session, or nobody with `insecure_no_sso`.
pub struct Caller {
    /// The user; `None` only without SSO (development), where the caller is "anonymous".
    pub identity: Option<Identity>,
    /// The session the request came with.
    pub session: Option<SessionId>,
}

impl Caller {
    /// The subject the policy decides for.
    pub fn subject(&self) -> policy::Subject {
        subject_of(self.identity.as_ref())
    }

    /// The user id for audit records.
    fn user_id(&self) -> &str {
        self.identity.as_ref().map_or(ANONYMOUS, |identity| identity.user.as_str())
    }

    /// Who this caller is on `site`, as turns and outcomes are bound.
    fn owner(&self, gateway: &Gateway, site: &Site) -> crate::state::turns::Owner {
        let user = self.identity.as_ref().map(|identity| identity.user.as_str());
        gateway.owner(site.id.as_str(), user, self.session.as_ref())
    }
}

/// The subject for a signed-in user, or the anonymous subject without SSO (no groups, so only
/// rules for everyone apply).
pub fn subject_of(identity: Option<&Identity>) -> policy::Subject {
    match identity {
        Some(identity) => identity.subject(),
        None => policy::Subject { user: policy::UserId::new(ANONYMOUS), email: None, groups: Vec::new() },
    }
}

/// The user id of requests without SSO.
const ANONYMOUS: &str = "anonymous";

/// Whether `path` belongs to the agent API.
pub fn is_agent_path(path: &str) -> bool {
    path.starts_with(PREFIX)
}

/// Answers an agent API request; failures are JSON errors, never HTML pages.
pub async fn handle(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Response<ProxyBody> {
    let path = request.uri().path().trim_start_matches(PREFIX).to_owned();
    let answer = match (request.method().clone(), path.as_str()) {
        (Method::GET, "session") => {
            Ok(session::respond(gateway, site, caller, request.uri().query().unwrap_or_default()))
        }
        (Method::POST, "catalog") => catalog::respond(gateway, site, caller, request, request_id).await,
        (Method::POST, "turn") => turn_endpoints::start(gateway, site, caller, request, request_id).await,
        (Method::POST, "result") => turn_endpoints::result(gateway, site, caller, request).await,
        (Method::GET, path) if path.starts_with("outcomes/") => {
            let call_id = path.trim_start_matches("outcomes/").to_owned();
            outcome_endpoint::respond(gateway, site, caller, &call_id, &request).await
        }
        (_, path) if path.starts_with("conversation/") => {
            let id = path.trim_start_matches("conversation/");
            conversation_endpoint::respond(gateway, site, caller, id, &request)
        }
        (method, path) if path.starts_with("approvals/") => {
            let id = path.trim_start_matches("approvals/").to_owned();
            approval_endpoints::respond(gateway, site, caller, method, &id, request, request_id).await
        }
        (_, "session" | "catalog" | "turn" | "result") => Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this endpoint does not accept that method",
        )),
        _ => Err(ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such agent endpoint")),
    };
    answer.unwrap_or_else(ApiError::into_response)
}

/// A request the gateway refused before the agent API saw it (not signed in, not allowed on the
/// site, sign-in or audit unavailable), as the API's JSON error with the same status and reason.
pub fn refusal(error: crate::http::errors::ProxyError) -> Response<ProxyBody> {
    let message = match error.status() {
        StatusCode::UNAUTHORIZED => "not signed in: reload the page to sign in again",
        StatusCode::FORBIDDEN => "you may not use this site",
        _ => "the gateway cannot serve this request right now; try again later",
    };
    let mut response = ApiError::new(error.status(), error.reason(), message).into_response();
    if let Ok(value) = HeaderValue::from_str(error.reason()) {
        response.headers_mut().insert("x-toolgate-reason", value);
    }
    response
}

/// An error the agent API reports as `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into() }
    }

    fn into_response(self) -> Response<ProxyBody> {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        json(self.status, &body)
    }
}

/// Page tools are on unless the site switches them off or the policy offers this user nothing.
pub fn page_tools_on(gateway: &Gateway, site: &Site, caller: &Caller) -> bool {
    site.page_tools && gateway.policy.current().view(&caller.subject(), &site.id).offers_tools()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn refusals_are_json_with_the_status_and_reason() {
        let response = refusal(crate::http::errors::ProxyError::Unauthenticated);
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(response.headers()["x-toolgate-reason"], "unauthenticated");
        let body = response.into_body().collect().await.expect("body").to_bytes();
        let value: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(value["error"]["code"], "unauthenticated");
    }
}
