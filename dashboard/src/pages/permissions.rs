//! The effective permissions page: pick a user (or groups) and a site, see which tools and
//! contexts they get and the policy engine's explanation of each decision.

use crate::html::Html;
use crate::layout::{Shell, page};
use crate::pages::{badge, options, text_or_dash};

/// The permissions page: the form's values and, once submitted, the answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionsData {
    /// The user id typed.
    pub user: String,
    /// Groups, comma separated, as typed.
    pub groups: String,
    /// The site chosen.
    pub site: String,
    /// Every site id (the select's options).
    pub sites: Vec<String>,
    /// The answer, when the form was submitted.
    pub result: Option<PermissionsResult>,
}

/// What the subject gets on the site.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionsResult {
    /// Whether page tools are on for them there.
    pub offers_tools: bool,
    /// Redactions applied to what the model reads.
    pub redactions: Vec<String>,
    /// Every inventoried tool of the site, decided.
    pub tools: Vec<DecisionRow>,
    /// Every inventoried context of the site, decided.
    pub contexts: Vec<DecisionRow>,
}

/// One decision with its explanation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionRow {
    /// The tool or context.
    pub name: String,
    /// `allow`, `approve` or `deny`.
    pub decision: String,
    /// A short detail (the approver, the deny reason).
    pub detail: String,
    /// The engine's explanation, several lines.
    pub explanation: String,
}

/// The permissions page.
pub fn permissions(shell: &Shell, data: &PermissionsData) -> String {
    let mut html = Html::new();
    html.raw("<form method=\"get\" action=\"/permissions\" class=\"filters\"><fieldset><legend>Who and where</legend>")
        .raw("<p class=\"field\"><label for=\"perm-user\">User id</label>")
        .raw("<input type=\"text\" id=\"perm-user\" name=\"user\" value=\"")
        .text(&data.user)
        .raw("\" autocomplete=\"off\"></p><p class=\"field\"><label for=\"perm-groups\">Groups (comma separated)</label>")
        .raw("<input type=\"text\" id=\"perm-groups\" name=\"groups\" value=\"")
        .text(&data.groups)
        .raw("\" autocomplete=\"off\"></p><p class=\"field\"><label for=\"perm-site\">Site</label>")
        .raw("<select id=\"perm-site\" name=\"site\">");
    options(&mut html, "choose a site", &data.sites, &data.site);
    html.raw("</select></p><p class=\"field submit\"><button type=\"submit\">Show permissions</button></p></fieldset></form>");
    if let Some(result) = &data.result {
        html.raw("<section aria-labelledby=\"result-heading\"><h2 id=\"result-heading\">What ");
        text_or_dash(&mut html, &data.user);
        html.raw(" gets on ").text(&data.site).raw("</h2><p>");
        html.raw(if result.offers_tools {
            "Page tools are <strong>on</strong> for this subject on this site."
        } else {
            "Page tools are <strong>off</strong> for this subject on this site (<code>Permissions-Policy: tools=()</code>)."
        });
        html.raw("</p><p>Redactions: ");
        if result.redactions.is_empty() {
            html.raw("none.");
        } else {
            for (index, redaction) in result.redactions.iter().enumerate() {
                if index > 0 {
                    html.raw(", ");
                }
                html.raw("<code>").text(redaction).raw("</code>");
            }
            html.raw(".");
        }
        html.raw("</p>");
        decisions(&mut html, "Tools", &result.tools);
        decisions(&mut html, "Contexts", &result.contexts);
        html.raw("</section>");
    }
    page(shell, "Effective permissions", &html.finish())
}

fn decisions(html: &mut Html, caption: &'static str, rows: &[DecisionRow]) {
    if rows.is_empty() {
        html.raw("<h3>").raw(caption).raw("</h3><p class=\"empty\">None seen on this site.</p>");
        return;
    }
    html.raw("<div class=\"scroll\"><table><caption>")
        .raw(caption)
        .raw("</caption><thead><tr><th scope=\"col\">Name</th><th scope=\"col\">Decision</th>")
        .raw("<th scope=\"col\">Detail</th><th scope=\"col\">Why</th></tr></thead><tbody>");
    for row in rows {
        html.raw("<tr><th scope=\"row\" class=\"wrap\"><code>").text(&row.name).raw("</code></th><td>");
        badge(html, &row.decision);
        html.raw("</td><td class=\"wrap\">");
        text_or_dash(html, &row.detail);
        html.raw(
            "</td><td class=\"explanation\"><details><summary>Explanation</summary><pre class=\"code\">",
        )
        .text(&row.explanation)
        .raw("</pre></details></td></tr>");
    }
    html.raw("</tbody></table></div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Nav;
    use crate::pages::test_support::{EVIL, admin, assert_no_injection};

    fn decision(name: &str, decision: &str, text: &str) -> DecisionRow {
        DecisionRow {
            name: name.into(),
            decision: decision.into(),
            detail: text.into(),
            explanation: text.into(),
        }
    }

    fn sample(text: &str) -> PermissionsData {
        PermissionsData {
            user: text.into(),
            groups: text.into(),
            site: "tasks".into(),
            sites: vec!["hr".into(), "tasks".into(), text.into()],
            result: Some(PermissionsResult {
                offers_tools: true,
                redactions: vec!["email".into(), text.into()],
                tools: vec![decision("add_task", "allow", text), decision("delete_task", "approve", text)],
                contexts: vec![decision(text, "deny", text)],
            }),
        }
    }

    #[test]
    fn renders_the_form_and_the_decisions_with_badges_and_explanations() {
        let out = permissions(&admin(Nav::Permissions), &sample("line 1\nline 2"));
        assert!(out.contains("<form method=\"get\" action=\"/permissions\""));
        assert!(out.contains("<label for=\"perm-user\">") && out.contains("name=\"user\""));
        assert!(out.contains("<label for=\"perm-groups\">") && out.contains("name=\"groups\""));
        assert!(out.contains("<option value=\"tasks\" selected>tasks</option>"));
        assert!(out.contains("<span class=\"badge allow\">allow</span>"));
        assert!(out.contains("<span class=\"badge approve\">approve</span>"));
        assert!(out.contains("<span class=\"badge deny\">deny</span>"));
        assert!(out.contains(
            "<details><summary>Explanation</summary><pre class=\"code\">line 1\nline 2</pre></details>"
        ));
        assert!(out.contains("<code>email</code>"));
        assert!(out.contains("Page tools are <strong>on</strong>"));
    }

    #[test]
    fn without_a_result_only_the_form_is_shown() {
        let data = PermissionsData { result: None, ..sample("x") };
        let out = permissions(&admin(Nav::Permissions), &data);
        assert!(!out.contains("result-heading") && out.contains("Show permissions"));
    }

    #[test]
    fn every_field_is_escaped() {
        assert_no_injection(&permissions(&admin(Nav::Permissions), &sample(EVIL)));
    }
}
