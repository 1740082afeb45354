//! The approvals queue: each pending call with its exact canonical arguments, who asked, when,
//! why it needs approval, and (when this approver may decide) the approve / deny form.

use crate::html::Html;
use crate::layout::{Shell, csrf_input, page};
use crate::pages::text_or_dash;

/// The approvals page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalsData {
    /// Calls waiting for this user's approver groups, oldest first.
    pub pending: Vec<ApprovalRow>,
}

/// One pending call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalRow {
    /// The approval id (base64url; still escaped as a path segment).
    pub id: String,
    /// The site.
    pub site: String,
    /// The tool.
    pub tool: String,
    /// Who asked.
    pub requested_by: String,
    /// When.
    pub requested_at: String,
    /// When it lapses.
    pub expires_at: String,
    /// Who must approve (a group).
    pub approver: String,
    /// The policy's reason (the rule).
    pub reason: String,
    /// The canonical arguments the call will run with, pretty JSON.
    pub args_pretty: String,
    /// Whether this user may decide it.
    pub can_decide: bool,
    /// Why not, when they may not.
    pub why_not: Option<String>,
}

/// The approvals page.
pub fn approvals(shell: &Shell, data: &ApprovalsData) -> String {
    let mut html = Html::new();
    if data.pending.is_empty() {
        html.raw("<p class=\"empty\">No call is waiting for approval.</p>");
    }
    for (index, row) in data.pending.iter().enumerate() {
        html.raw("<article class=\"card\" aria-labelledby=\"approval-")
            .count(index)
            .raw("\"><h2 id=\"approval-")
            .count(index)
            .raw("\"><code>")
            .text(&row.tool)
            .raw("</code> on ")
            .text(&row.site)
            .raw("</h2><dl class=\"facts\"><dt>Asked by</dt><dd>")
            .text(&row.requested_by)
            .raw("</dd><dt>Asked at</dt><dd>")
            .text(&row.requested_at)
            .raw("</dd><dt>Expires</dt><dd>")
            .text(&row.expires_at)
            .raw("</dd><dt>Approver</dt><dd>");
        text_or_dash(&mut html, &row.approver);
        html.raw("</dd><dt>Why approval</dt><dd>");
        text_or_dash(&mut html, &row.reason);
        html.raw("</dd></dl><h3>Arguments the call will run with</h3><pre class=\"code\">")
            .text(&row.args_pretty)
            .raw("</pre>");
        if row.can_decide {
            html.raw("<form method=\"post\" action=\"/approvals/")
                .segment(&row.id)
                .raw("\" class=\"stack\">");
            csrf_input(&mut html, shell.csrf);
            html.raw("<p class=\"field\"><label>Comment <input type=\"text\" name=\"comment\" maxlength=\"500\"></label></p>")
                .raw("<p class=\"actions\"><button type=\"submit\" name=\"decision\" value=\"approve\" class=\"effect-allow\">Approve</button> ")
                .raw("<button type=\"submit\" name=\"decision\" value=\"deny\" class=\"effect-deny\">Deny</button></p></form>");
        } else {
            html.raw("<p class=\"why-not\">");
            match &row.why_not {
                Some(reason) => html.text(reason),
                None => html.raw("You may not decide this call."),
            };
            html.raw("</p>");
        }
        html.raw("</article>");
    }
    page(shell, "Approvals", &html.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::test_support::{EVIL, admin, assert_no_injection, assert_post_forms_carry_csrf};
    use crate::{Nav, Roles};

    fn row(text: &str, can_decide: bool) -> ApprovalRow {
        ApprovalRow {
            id: "q1w2-e3_r4".into(),
            site: text.into(),
            tool: text.into(),
            requested_by: text.into(),
            requested_at: text.into(),
            expires_at: text.into(),
            approver: text.into(),
            reason: text.into(),
            args_pretty: format!("{{\n  \"amount\": 1200,\n  \"note\": {text:?}\n}}"),
            can_decide,
            why_not: (!can_decide).then(|| text.to_owned()),
        }
    }

    #[test]
    fn decidable_calls_get_the_form_others_the_reason() {
        let shell = Shell { roles: Roles { approver: true, ..Roles::default() }, ..admin(Nav::Approvals) };
        let data = ApprovalsData {
            pending: vec![
                row("book_flight", true),
                row("you asked for this call; another approver must decide", false),
            ],
        };
        let out = approvals(&shell, &data);
        assert!(out.contains("<form method=\"post\" action=\"/approvals/q1w2-e3_r4\""));
        assert!(
            out.contains("name=\"decision\" value=\"approve\"")
                && out.contains("name=\"decision\" value=\"deny\"")
        );
        assert!(out.contains("<label>Comment <input type=\"text\" name=\"comment\""));
        assert!(out.contains("<pre class=\"code\">{\n  &quot;amount&quot;: 1200,"));
        assert!(
            out.contains("<p class=\"why-not\">you asked for this call; another approver must decide</p>")
        );
        assert_eq!(out.matches("<form method=\"post\" action=\"/approvals/").count(), 1);
        assert_post_forms_carry_csrf(&out, "csrf-token-123");
        // Approvers see only their pages in the navigation.
        assert!(
            out.contains("href=\"/approvals\"")
                && !out.contains("href=\"/audit\"")
                && !out.contains("href=\"/policies\"")
        );
    }

    #[test]
    fn hostile_ids_cannot_leave_their_path_segment() {
        let mut hostile = row("x", true);
        hostile.id = "../policies\"><x".into();
        let out = approvals(&admin(Nav::Approvals), &ApprovalsData { pending: vec![hostile] });
        assert!(out.contains("action=\"/approvals/..%2Fpolicies%22%3E%3Cx\""), "{out}");
    }

    #[test]
    fn every_field_is_escaped_and_an_empty_queue_says_so() {
        let out = approvals(
            &admin(Nav::Approvals),
            &ApprovalsData { pending: vec![row(EVIL, true), row(EVIL, false)] },
        );
        assert_no_injection(&out);
        assert!(
            approvals(&admin(Nav::Approvals), &ApprovalsData::default())
                .contains("No call is waiting for approval.")
        );
    }
}
