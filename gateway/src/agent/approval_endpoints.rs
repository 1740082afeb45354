//! `GET /.toolgate/agent/approvals/{id}` (the record: tool, canonical arguments, state) and
//! `POST /.toolgate/agent/approvals/{id}` (`{"approve": bool, "comment": "…"}`, CSRF): the user
//! decides on their own calls here (self-approval); approver groups decide in the dashboard
//! through the same `Approvals::decide`, which checks who may decide.

use super::{ApiError, Caller, csrf, json};
use crate::approvals::{ApprovalError, ApprovalRecord};
use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::request_id::RequestId;
use crate::state::Gateway;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde::Deserialize;

#[derive(Deserialize)]
struct DecisionRequest {
    approve: bool,
    #[serde(default)]
    comment: String,
}

/// Answers `approvals/{id}`.
pub async fn respond(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    method: Method,
    id: &str,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<Response<ProxyBody>, ApiError> {
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, "no_such_approval", "no such approval for you");
    let record = gateway.approvals.get(id).await.map_err(store_error)?.ok_or_else(not_found)?;
    // Only the user it is for sees it here, and only on its own site.
    if record.binding.user != caller.user_id() || record.binding.site != site.id.as_str() {
        return Err(not_found());
    }
    match method {
        Method::GET => Ok(json(StatusCode::OK, &view(&record))),
        Method::POST => {
            let token =
                request.headers().get(csrf::HEADER).and_then(|value| value.to_str().ok()).unwrap_or("");
            if !csrf::verify(gateway, site, caller, token) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "csrf_failed",
                    "missing or wrong X-Toolgate-CSRF token",
                ));
            }
            let body = IdleTimeout::new(request.into_body(), gateway.config.timeouts.body_idle);
            let bytes = Limited::new(body, 4096)
                .collect()
                .await
                .map_err(|_| {
                    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the decision is too large")
                })?
                .to_bytes();
            let decision: DecisionRequest = serde_json::from_slice(&bytes).map_err(|error| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    format!("the decision is not valid: {error}"),
                )
            })?;
            let groups = caller.identity.as_ref().map(|identity| identity.groups.clone()).unwrap_or_default();
            let now = crate::support::clock::unix_now();
            let decided = gateway
                .approvals
                .decide(
                    id,
                    &crate::approvals::Decider::member(caller.user_id(), &groups),
                    decision.approve,
                    &decision.comment,
                    now,
                )
                .await
                .map_err(decide_error)?;
            let verdict = if decision.approve { "approved" } else { "denied" };
            let mut event = AuditEvent::new(EventKind::ApprovalDecision)
                .actor(caller.user_id(), caller.identity.as_ref().and_then(|i| i.email.as_deref()), &groups)
                .site(site.id.as_str())
                .request(request_id.as_str())
                .resource(&format!("approval:{id}"))
                .decision(verdict, "user");
            event.tool = Some(decided.binding.tool.clone());
            gateway
                .audit
                .record_with_texts(event, &[("comment", decision.comment.as_str())], site.capture_content)
                .await
                .map_err(|_| {
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "audit_unavailable",
                        "the audit log cannot be written right now",
                    )
                })?;
            Ok(json(StatusCode::OK, &view(&decided)))
        }
        _ => Err(ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "use GET or POST")),
    }
}

fn view(record: &ApprovalRecord) -> serde_json::Value {
    serde_json::json!({
        "id": record.id,
        "tool": record.binding.tool,
        "call_id": record.binding.call_id,
        "args": serde_json::from_str::<serde_json::Value>(&record.canonical_args).unwrap_or(serde_json::Value::Null),
        "state": serde_json::to_value(&record.state).unwrap_or(serde_json::Value::Null),
        "expires_at": record.binding.expires_at,
    })
}

fn store_error(_: ApprovalError) -> ApiError {
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable", "approvals cannot be read right now")
}

fn decide_error(error: ApprovalError) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, "not_decidable", error.to_string())
}
