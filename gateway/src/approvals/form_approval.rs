//! Server-side enforcement for form tools: an agent-marked submission to an approval-gated form
//! consumes the approval its token names, once, and only when the submission is the approved one
//! — same user, session, site, call, form (method and action) and field values.

use super::form_guard::{AgentMark, fields_match_args};
use super::{ApprovalError, ApprovalRecord, Approvals};

/// Who submits where, as the proxy sees the request.
#[derive(Debug, Clone, Copy)]
pub struct FormSubmission<'a> {
    /// The signed-in user's id.
    pub user: &'a str,
    /// The session's keyed digest ([`Approvals::session_digest`]).
    pub session: &'a str,
    /// The site.
    pub site: &'a str,
    /// The request path (no query).
    pub action_path: &'a str,
}

impl Approvals {
    /// Consumes the approval an agent-marked form submission carries. Fails (each cause its own
    /// error) unless the token names an approved, unused, unexpired approval for this user,
    /// session and site, for the mark's call id, for a form tool whose target is this effective
    /// method and path, and the submitted fields carry exactly the approved arguments.
    pub async fn consume_form(
        &self,
        mark: &AgentMark,
        submission: &FormSubmission<'_>,
        now: u64,
    ) -> Result<ApprovalRecord, ApprovalError> {
        let token = mark.token.as_deref().ok_or(ApprovalError::MissingToken)?;
        let (token_id, _) = super::token::parse(token).ok_or(ApprovalError::MalformedToken)?;
        // The arguments live on the record; read it once to compare the fields outside the
        // compare-and-swap loop (they never change once recorded).
        let record = self.get(token_id).await?.ok_or(ApprovalError::Unknown)?;
        let fields_match = fields_match_args(&record.canonical_args, &mark.fields);
        let form = record.form.clone();
        self.consume_with(token, now, |binding| {
            let target_matches = form.as_ref().is_some_and(|target| {
                target.method.eq_ignore_ascii_case(mark.method.as_str())
                    && target.action_path == submission.action_path
            });
            let checks = [
                (binding.user == submission.user, ApprovalError::OtherUser),
                (binding.session == submission.session, ApprovalError::OtherSession),
                (binding.site == submission.site, ApprovalError::OtherSite),
                (binding.call_id == mark.call_id, ApprovalError::OtherCall),
                (target_matches, ApprovalError::OtherForm),
                (fields_match, ApprovalError::ArgumentsChanged),
            ];
            checks.into_iter().find(|(matches, _)| !matches).map_or(Ok(()), |(_, error)| Err(error))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::form_guard::agent_submission;
    use crate::approvals::{Approver, Binding, FormTarget, args_digest, canonical_args};
    use crate::store::SledStore;
    use http::{HeaderMap, HeaderValue, Method};
    use serde_json::json;
    use std::sync::Arc;

    const NOW: u64 = 1_000_000;
    const SUBMISSION: FormSubmission<'static> =
        FormSubmission { user: "alice", session: "digest", site: "expenses", action_path: "/expenses" };

    /// An approved form-tool call and the runtime's urlencoded submission body builder.
    async fn approved() -> (Approvals, String) {
        let approvals = Approvals::new(
            crate::store::StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store"))),
            [3; 32],
        );
        let canonical = canonical_args(&json!({"amount": 1200, "note": "taxi"}));
        let binding = Binding {
            user: "alice".into(),
            session: "digest".into(),
            site: "expenses".into(),
            tool: "submit_expense".into(),
            args_digest: args_digest(&canonical),
            call_id: "call_1".into(),
            expires_at: NOW + 300,
        };
        let form = FormTarget { method: "POST".into(), action_path: "/expenses".into() };
        let record = approvals
            .request(binding, canonical, Approver::User, "", Some(form), NOW)
            .await
            .expect("request");
        let record = approvals
            .decide(&record.id, &crate::approvals::Decider::member("alice", &[]), true, "", NOW)
            .await
            .expect("decide");
        let token = approvals.token(&record);
        (approvals, token)
    }

    fn mark(body: &str) -> AgentMark {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/x-www-form-urlencoded"));
        agent_submission(&Method::POST, &headers, body.as_bytes()).expect("parses").expect("marked")
    }

    fn reason(result: Result<ApprovalRecord, ApprovalError>) -> &'static str {
        result.err().map_or("consumed", |error| error.reason())
    }

    #[tokio::test]
    async fn the_approved_submission_passes_once() {
        let (approvals, token) = approved().await;
        let body = format!("amount=1200&note=taxi&csrf=x&__toolgate_call=call_1&__toolgate_approval={token}");
        assert_eq!(reason(approvals.consume_form(&mark(&body), &SUBMISSION, NOW + 1).await), "consumed");
        assert_eq!(reason(approvals.consume_form(&mark(&body), &SUBMISSION, NOW + 2).await), "replayed");
    }

    #[tokio::test]
    async fn other_values_forms_calls_users_and_missing_tokens_are_refused() {
        let (approvals, token) = approved().await;
        let body = |amount: &str, call: &str, method: &str| {
            format!(
                "_method={method}&amount={amount}&note=taxi&__toolgate_call={call}&__toolgate_approval={token}"
            )
        };
        let other_path = FormSubmission { action_path: "/expenses/delete", ..SUBMISSION };
        let other_user = FormSubmission { user: "mallory", ..SUBMISSION };
        let other_session = FormSubmission { session: "stolen", ..SUBMISSION };
        let cases = [
            (mark(&body("99999", "call_1", "POST")), SUBMISSION, "arguments_changed"),
            (mark(&body("1200", "call_2", "POST")), SUBMISSION, "other_call"),
            (mark(&body("1200", "call_1", "DELETE")), SUBMISSION, "other_form"),
            (mark(&body("1200", "call_1", "POST")), other_path, "other_form"),
            (mark(&body("1200", "call_1", "POST")), other_user, "other_user"),
            (mark(&body("1200", "call_1", "POST")), other_session, "other_session"),
            (mark("amount=1200&note=taxi&__toolgate_call=call_1"), SUBMISSION, "missing_token"),
        ];
        for (mark, submission, expected) in cases {
            assert_eq!(reason(approvals.consume_form(&mark, &submission, NOW + 1).await), expected);
        }
        let good = mark(&body("1200", "call_1", "POST"));
        assert_eq!(reason(approvals.consume_form(&good, &SUBMISSION, NOW + 300).await), "expired");
        assert_eq!(reason(approvals.consume_form(&good, &SUBMISSION, NOW + 1).await), "consumed");
    }
}
