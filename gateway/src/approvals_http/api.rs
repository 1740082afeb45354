//! The approvals API for approver groups, on the gateway's own host (the one the dashboard uses):
//! `GET /.toolgate/approvals` lists the pending calls the caller's groups may decide, and
//! `POST /.toolgate/approvals/{id}` (`{"approve": bool, "comment": "…"}`) decides one; the waiting
//! agent turn then goes on or tells the model no.
//!
//! Callers authenticate with a bearer token (no cookie: nothing a web page could ride on). Who
//! may decide is `Approvals::decide`'s business: a member of the approver group other than the
//! user who asked (four eyes). Every decision is audited before it is answered.

use crate::approvals::{ApprovalError, ApprovalRecord, Approver, Decider, Queue};
use crate::audit::event::{AuditEvent, EventKind};
use crate::http::body::{self, IdleTimeout, ProxyBody};
use crate::http::request_id::RequestId;
use crate::sso::Sso;
use crate::sso::identity::Identity;
use crate::state::Gateway;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};

/// The API's path prefix on the gateway host.
pub const PREFIX: &str = "/.toolgate/approvals";

/// Whether `path` belongs to this API.
pub fn is_api_path(path: &str) -> bool {
    path == PREFIX || path.starts_with("/.toolgate/approvals/")
}

#[derive(Deserialize)]
struct Decision {
    approve: bool,
    #[serde(default)]
    comment: String,
}

/// Answers one request to the approvals API.
pub async fn handle(
    gateway: &Gateway,
    sso: &Sso,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Response<ProxyBody> {
    let identity = match caller(sso, &request).await {
        Ok(identity) => identity,
        Err(response) => return response,
    };
    let path = request.uri().path().to_owned();
    match (request.method().clone(), path.strip_prefix("/.toolgate/approvals/")) {
        (Method::GET, None) => match gateway.approvals.pending_for(queue(gateway, &identity)).await {
            Ok(records) => {
                let listed: Vec<Value> = records.iter().map(view).collect();
                answer(StatusCode::OK, &json!({ "approvals": listed }))
            }
            Err(_) => error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                "approvals cannot be read right now",
            ),
        },
        (Method::POST, Some(id)) => decide(gateway, &identity, id, request, request_id).await,
        _ => error(
            StatusCode::NOT_FOUND,
            "not_found",
            "GET /.toolgate/approvals or POST /.toolgate/approvals/{id}",
        ),
    }
}

async fn decide(
    gateway: &Gateway,
    identity: &Identity,
    id: &str,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Response<ProxyBody> {
    let body = IdleTimeout::new(request.into_body(), gateway.config.timeouts.body_idle);
    let Ok(collected) = Limited::new(body, 4096).collect().await else {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the decision is too large");
    };
    let Ok(decision) = serde_json::from_slice::<Decision>(&collected.to_bytes()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "send {\"approve\": true|false, \"comment\": \"…\"}",
        );
    };
    match decide_and_audit(gateway, identity, id, decision.approve, &decision.comment, request_id).await {
        Ok(decided) => answer(StatusCode::OK, &view(&decided)),
        Err(DecideFailure::Refused(refusal)) => {
            error(StatusCode::CONFLICT, refusal.reason(), &refusal.to_string())
        }
        Err(DecideFailure::AuditUnavailable) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "audit_unavailable",
            "the audit log cannot be written right now",
        ),
    }
}

/// Why a decision was not made (or not recorded).
#[derive(Debug)]
pub enum DecideFailure {
    /// The approvals refused it: not the caller's to decide, already decided, expired…
    Refused(ApprovalError),
    /// The decision was made but could not be audited.
    AuditUnavailable,
}

/// Decides an approval for an approver (this API and the dashboard's Approvals page share it):
/// four eyes and exactly-once are `Approvals::decide`'s, then the decision is audited (with the
/// comment as captured text where the site keeps texts) and counted.
pub async fn decide_and_audit(
    gateway: &Gateway,
    identity: &Identity,
    id: &str,
    approve: bool,
    comment: &str,
    request_id: &RequestId,
) -> Result<ApprovalRecord, DecideFailure> {
    let now = crate::support::clock::unix_now();
    let admin = standing(gateway, identity).admin;
    let decider = Decider { user: &identity.user, groups: &identity.groups, admin };
    let decided = gateway
        .approvals
        .decide(id, &decider, approve, comment, now)
        .await
        .map_err(DecideFailure::Refused)?;
    let as_member = matches!(&decided.approver, Approver::Group(group) if identity.groups.contains(group));
    let verdict = if approve { "approved" } else { "denied" };
    let mut event = AuditEvent::new(EventKind::ApprovalDecision)
        .actor(&identity.user, identity.email.as_deref(), &identity.groups)
        .site(&decided.binding.site)
        .request(request_id.as_str())
        .resource(&format!("approval:{id}"))
        .decision(verdict, if as_member { "approver_group" } else { "administrator" });
    event.tool = Some(decided.binding.tool.clone());
    let capture = gateway
        .config
        .sites
        .iter()
        .find(|site| site.id.as_str() == decided.binding.site)
        .and_then(|site| site.capture_content);
    gateway
        .audit
        .record_with_texts(event, &[("comment", comment)], capture)
        .await
        .map_err(|_| DecideFailure::AuditUnavailable)?;
    gateway.metrics.approvals.with_label_values(&[verdict]).inc();
    Ok(decided)
}

/// What a caller's groups make them on the approvals queue.
#[derive(Debug, Clone, Copy, Default)]
pub struct Standing {
    /// In `[dashboard] admin_groups`: sees every pending approval, decides any they did not ask for.
    pub admin: bool,
    /// In `[dashboard] auditor_groups`: sees every pending approval, decides none of them.
    pub auditor: bool,
}

/// The caller's standing, from the dashboard's role groups (none without a dashboard).
pub fn standing(gateway: &Gateway, identity: &Identity) -> Standing {
    gateway.config.dashboard.as_ref().map_or_else(Standing::default, |dashboard| Standing {
        admin: identity.in_any(&dashboard.admin_groups),
        auditor: identity.in_any(&dashboard.auditor_groups),
    })
}

/// The pending approvals a caller sees: every one for administrators and auditors, else those of
/// their approver groups.
pub fn queue<'a>(gateway: &Gateway, identity: &'a Identity) -> Queue<'a> {
    let standing = standing(gateway, identity);
    if standing.admin || standing.auditor { Queue::Everything } else { Queue::Groups(&identity.groups) }
}

/// Who is calling: bearer tokens only.
async fn caller(sso: &Sso, request: &Request<Incoming>) -> Result<Identity, Response<ProxyBody>> {
    let token = crate::http::bearer_token(request.headers());
    let Some(token) = token else {
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "send a bearer token from the identity provider",
        ));
    };
    match sso.bearer_identity(token.trim()).await {
        Ok(identity) => Ok(identity),
        Err(crate::sso::bearer::BearerError::Unavailable) => Err(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "sso_unavailable",
            "the identity provider cannot be reached",
        )),
        Err(_) => Err(error(StatusCode::UNAUTHORIZED, "unauthenticated", "the bearer token is not valid")),
    }
}

/// What an approver is shown: who asked, for what, the exact arguments, why, until when.
fn view(record: &ApprovalRecord) -> Value {
    let approver = match &record.approver {
        Approver::User => "user".to_owned(),
        Approver::Group(group) => group.clone(),
    };
    json!({
        "id": record.id,
        "site": record.binding.site,
        "tool": record.binding.tool,
        "requested_by": record.binding.user,
        "args": serde_json::from_str::<Value>(&record.canonical_args).unwrap_or(Value::Null),
        "approver": approver,
        "reason": record.reason,
        "requested_at": record.requested_at,
        "expires_at": record.binding.expires_at,
        "state": serde_json::to_value(&record.state).unwrap_or(Value::Null),
    })
}

fn answer(status: StatusCode, value: &Value) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(value.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn error(status: StatusCode, code: &str, message: &str) -> Response<ProxyBody> {
    answer(status, &json!({"error": {"code": code, "message": message}}))
}
