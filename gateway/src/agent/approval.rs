//! Asking a human to approve a call and waiting for the decision: the approval record bound to
//! the call (user, session, site, tool, canonical arguments, call id, expiry), the card's event
//! with the rule and condition that asked and, when nobody else who may decide is signed in, a
//! notice saying so, the bounded wait, and the token an approved form submission carries.

use super::context::TurnContext;
use super::prompt::ExposedTool;
use super::sse::{EventSender, TurnEvent};
use crate::approvals::{self, ApprovalState, Binding};

/// Why the policy asks for approval, for the approver to read: the rule and the condition that
/// asked (`rule big-expenses, when args.amount > 1000`), or the default that did.
pub(super) fn reason(explanation: &policy::Explanation) -> String {
    let asked =
        explanation.matches.iter().find(|found| found.applied && found.effect == policy::Effect::Approve);
    let reason = match (asked, &explanation.decided_by) {
        (Some(found), _) => match &found.condition {
            Some(check) => format!("rule {}, when {}", found.rule, check.source),
            None => format!("rule {}", found.rule),
        },
        (None, policy::DecidedBy::ConsequentialHint { .. }) => {
            "the tool says it is consequential, and the policy asks for approval of such tools".to_owned()
        }
        (None, policy::DecidedBy::SiteDefault { site, .. }) => format!("the default of site {site}"),
        (None, policy::DecidedBy::Default { .. }) => "the policy's default".to_owned(),
        (None, policy::DecidedBy::Rule { rule, .. }) => format!("rule {rule}"),
        (None, _) => "the policy asks for approval".to_owned(),
    };
    super::cap(&reason, 1000)
}

/// Asks for approval and waits for it; the token on approval, else the model's error text.
pub(super) async fn ask(
    turn: &TurnContext,
    exposed: &ExposedTool,
    call_id: &str,
    args: &serde_json::Value,
    canonical: &str,
    (approver, reason): (policy::Approver, &str),
    events: &EventSender,
) -> Result<String, String> {
    let now = crate::support::clock::unix_now();
    let binding = Binding {
        user: turn.owner.user.clone(),
        session: turn.owner.session.clone(),
        site: turn.owner.site.clone(),
        tool: exposed.catalog_name.clone(),
        args_digest: approvals::args_digest(canonical),
        call_id: call_id.to_owned(),
        expires_at: now + turn.approval_timeout.as_secs(),
    };
    let approver = match approver {
        policy::Approver::User => approvals::Approver::User,
        policy::Approver::Group(group) => approvals::Approver::Group(group.as_str().to_owned()),
    };
    let approver_label = match &approver {
        approvals::Approver::User => "user".to_owned(),
        approvals::Approver::Group(group) => group.clone(),
    };
    // A form tool's approval is bound to its form, and the proxy guards that form's action
    // before the token leaves the gateway, so a marked submission cannot slip past unchecked.
    let form = exposed.form.clone();
    if let Some(target) = &form {
        turn.gated_forms.remember(&turn.owner.site, target, now).await;
    }
    let record = turn
        .approvals
        .request(binding, canonical.to_owned(), approver, reason, form, now)
        .await
        .map_err(|_| "error: the approval could not be recorded".to_owned())?;
    turn.metrics.approvals.with_label_values(&["requested"]).inc();
    // Four eyes: when nobody else who may decide is signed in, the card says so at once.
    let notice = match (&record.approver, &turn.deciders) {
        (approvals::Approver::Group(group), Some(deciders)) => {
            let requester = (turn.owner.user.as_str(), turn.actor.1.as_slice());
            deciders.notice(group, requester, turn.approval_timeout).await
        }
        _ => None,
    };
    let required = TurnEvent::ApprovalRequired {
        approval_id: record.id.clone(),
        call_id: call_id.to_owned(),
        tool: exposed.catalog_name.clone(),
        args: args.clone(),
        approver: approver_label,
        notice,
    };
    if !events.send(&required).await {
        return Err("error: the page was closed".into());
    }
    let deadline = tokio::time::Instant::now() + turn.approval_timeout;
    // A user who leaves gives up the turn: it must not keep its slot until the approval expires.
    let decided = tokio::select! {
        decided = turn.approvals.wait(&record.id, deadline) => decided,
        () = events.closed() => return Err("error: the page was closed".into()),
    };
    let (decision, outcome) = match decided {
        Ok(record) if matches!(record.state, ApprovalState::Approved { .. }) => {
            ("approved", Ok(turn.approvals.token(&record)))
        }
        Ok(record) if matches!(record.state, ApprovalState::Denied { .. }) => {
            ("denied", Err("error: a human declined this call; do not retry it".to_owned()))
        }
        _ => ("expired", Err("error: no human approved this call in time".to_owned())),
    };
    turn.metrics.approvals.with_label_values(&[decision]).inc();
    events.send(&TurnEvent::ApprovalResolved { approval_id: record.id, decision: decision.into() }).await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::reason;
    use serde_json::json;

    /// The approver reads which rule, and which condition, asked for approval.
    #[test]
    fn the_approval_reason_names_the_rule_and_its_condition() {
        let text = r#"
groups = ["finance-approvers"]

[[rule]]
id = "expenses-staff"
tools.allow = ["submit_expense"]

[[rule]]
id = "big-expenses"
tools.approve_by = { tools = ["submit_expense"], group = "finance-approvers", when = "args.amount > 1000" }

[[rule]]
id = "tasks"
tools.approve = ["delete_task"]
"#;
        let site = policy::SiteId::new("expenses");
        let policy =
            policy::Policy::parse(text, "test.toml", std::slice::from_ref(&site)).expect("test policy");
        let subject = policy::Subject { user: policy::UserId::new("bob"), email: None, groups: Vec::new() };
        let view = policy.view(&subject, &site);
        let (_, big) = view.tool_call(&policy::ToolRef::named("submit_expense"), &json!({"amount": 5000}));
        assert_eq!(reason(&big), "rule big-expenses, when args.amount > 1000");
        let (_, plain) = view.tool_call(&policy::ToolRef::named("delete_task"), &json!({"id": 3}));
        assert_eq!(reason(&plain), "rule tasks");
    }
}
