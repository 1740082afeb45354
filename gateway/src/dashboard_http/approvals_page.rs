//! The Approvals page: the calls waiting for the caller's approver groups, with the exact
//! canonical arguments that will execute, who asked, when and the policy's reason; approve or
//! deny with a comment. The decision goes through the same path as the approvals API (four
//! eyes, exactly once, audited) and the waiting agent turn goes on at once.

use super::form::Form;
use super::{Context, respond};
use crate::approvals::{ApprovalRecord, Approver};
use crate::approvals_http::api::{self, DecideFailure};
use crate::http::body::ProxyBody;
use dashboard::{ApprovalRow, ApprovalsData, Nav, Notice};
use http::{Response, StatusCode};

/// `GET /approvals`.
pub(super) async fn page(context: &Context<'_>, notice: Option<(StatusCode, Notice)>) -> Response<ProxyBody> {
    let identity = &context.caller.identity;
    let pending = match context.gateway.approvals.pending_for(api::queue(context.gateway, identity)).await {
        Ok(pending) => pending,
        Err(_) => {
            return respond::store_unavailable("Approvals cannot be read right now.");
        }
    };
    let notice = notice.or_else(|| match context.param("decided") {
        "approved" => Some((StatusCode::OK, Notice::Success("Approved: the call goes on.".into()))),
        "denied" => Some((StatusCode::OK, Notice::Success("Denied: the model is told no.".into()))),
        _ => None,
    });
    let (status, notice) = notice.map_or((StatusCode::OK, None), |(status, notice)| (status, Some(notice)));
    let standing = api::standing(context.gateway, identity);
    let data = ApprovalsData {
        pending: pending
            .iter()
            .map(|record| row(record, &identity.user, &identity.groups, standing))
            .collect(),
    };
    respond::page(status, dashboard::approvals(&context.shell(Nav::Approvals, notice), &data))
}

/// `POST /approvals/{id}`: `decision` (`approve` | `deny`) and `comment`.
pub(super) async fn decide(context: &Context<'_>, id: &str, form: &Form) -> Response<ProxyBody> {
    let approve = match form.text("decision") {
        "approve" => true,
        "deny" => false,
        _ => return respond::error(StatusCode::BAD_REQUEST, "No decision", "Press approve or deny."),
    };
    let outcome = api::decide_and_audit(
        context.gateway,
        &context.caller.identity,
        id,
        approve,
        form.text("comment"),
        context.request_id,
    )
    .await;
    match outcome {
        Ok(_) => respond::see_other(if approve {
            "/approvals?decided=approved"
        } else {
            "/approvals?decided=denied"
        }),
        Err(DecideFailure::Refused(refusal)) => {
            page(context, Some((StatusCode::CONFLICT, Notice::Error(format!("Not decided: {refusal}.")))))
                .await
        }
        Err(DecideFailure::AuditUnavailable) => respond::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "Audit log unavailable",
            "The decision could not be audited right now.",
        ),
    }
}

fn row(record: &ApprovalRecord, viewer: &str, groups: &[String], standing: api::Standing) -> ApprovalRow {
    let own = record.binding.user == viewer;
    let member = matches!(&record.approver, Approver::Group(group) if groups.contains(group));
    let why_not = if own {
        Some("You asked for this call; another approver must decide.".to_owned())
    } else if !member && !standing.admin {
        Some("Auditors see the queue; the approver group or an administrator decides.".to_owned())
    } else {
        None
    };
    let args = serde_json::from_str::<serde_json::Value>(&record.canonical_args)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| record.canonical_args.clone());
    ApprovalRow {
        id: record.id.clone(),
        site: record.binding.site.clone(),
        tool: record.binding.tool.clone(),
        requested_by: record.binding.user.clone(),
        requested_at: super::utc(record.requested_at),
        expires_at: super::utc(record.binding.expires_at),
        approver: match &record.approver {
            Approver::User => "the user who asked".to_owned(),
            Approver::Group(group) => group.clone(),
        },
        reason: record.reason.clone(),
        args_pretty: args,
        can_decide: why_not.is_none(),
        why_not,
    }
}
