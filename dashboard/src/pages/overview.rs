//! The overview page: sites, traffic and decision charts, pending approvals, recent denials and
//! the audit chain's status.

use crate::chart::{Series, figure};
use crate::html::Html;
use crate::layout::{Nav, Shell, page};
use crate::pages::audit::{AuditRow, ChainStatus, chain_status, records_table};
use crate::pages::text_or_dash;

/// What the overview shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OverviewData {
    /// The configured sites.
    pub sites: Vec<SiteRow>,
    /// Requests per interval, one series per site.
    pub traffic: Vec<Series>,
    /// Tool decisions per interval, one series per outcome (allow, approve, deny).
    pub decisions: Vec<Series>,
    /// Calls waiting for an approver.
    pub pending_approvals: usize,
    /// The latest denials.
    pub recent_denials: Vec<AuditRow>,
    /// The last chain verification.
    pub chain: ChainStatus,
}

/// One configured site.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteRow {
    /// Site id.
    pub id: String,
    /// The host users open.
    pub host: String,
    /// Where it forwards.
    pub upstream: String,
    /// Whether page tools are on.
    pub page_tools: bool,
    /// Requests since start.
    pub requests: u64,
}

/// The overview page.
pub fn overview(shell: &Shell, data: &OverviewData) -> String {
    let mut html = Html::new();
    html.raw(
        "<section aria-labelledby=\"pending-heading\"><h2 id=\"pending-heading\">Pending approvals</h2><p>",
    );
    match data.pending_approvals {
        0 => html.raw("No call is waiting for approval."),
        1 => html.raw("1 call is waiting for approval."),
        n => html.count(n).raw(" calls are waiting for approval."),
    };
    if data.pending_approvals > 0 && shell.roles.may_open(Nav::Approvals) {
        html.raw(" <a href=\"/approvals\">Open the queue</a>");
    }
    html.raw("</p></section>");

    html.raw("<section aria-labelledby=\"activity-heading\"><h2 id=\"activity-heading\">Activity</h2><div class=\"charts\">")
        .markup(&figure("Requests per site", &data.traffic))
        .markup(&figure("Tool decisions by outcome", &data.decisions))
        .raw("</div></section>");

    html.raw("<section aria-labelledby=\"sites-heading\"><h2 id=\"sites-heading\">Sites</h2>");
    if data.sites.is_empty() {
        html.raw("<p class=\"empty\">No sites are configured.</p>");
    } else {
        html.raw("<div class=\"scroll\"><table><caption>Configured sites</caption><thead><tr>")
            .raw("<th scope=\"col\">Site</th><th scope=\"col\">Host</th><th scope=\"col\">Upstream</th>")
            .raw("<th scope=\"col\">Page tools</th><th scope=\"col\" class=\"number\">Requests</th></tr></thead><tbody>");
        for site in &data.sites {
            html.raw("<tr><th scope=\"row\">").text(&site.id).raw("</th><td class=\"wrap\">");
            text_or_dash(&mut html, &site.host);
            html.raw("</td><td class=\"wrap\">");
            text_or_dash(&mut html, &site.upstream);
            html.raw("</td><td>")
                .raw(if site.page_tools { "on" } else { "off" })
                .raw("</td><td class=\"number\">")
                .num(site.requests)
                .raw("</td></tr>");
        }
        html.raw("</tbody></table></div>");
    }
    html.raw("</section>");

    html.raw("<section aria-labelledby=\"denials-heading\"><h2 id=\"denials-heading\">Recent denials</h2>")
        .markup(&records_table(
            &data.recent_denials,
            "Latest denied requests and calls",
            shell.roles.may_open(Nav::Audit),
        ))
        .raw("</section>");
    html.raw("<section aria-labelledby=\"chain-heading\"><h2 id=\"chain-heading\">Audit chain</h2>")
        .markup(&chain_status(&data.chain))
        .raw("</section>");
    page(shell, "Overview", &html.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Roles;
    use crate::pages::test_support::{EVIL, admin, assert_no_injection};

    fn sample(text: &str) -> OverviewData {
        let series = |label: &str| Series {
            label: label.into(),
            points: vec![(1_795_341_600, 1.0), (1_795_341_660, 3.0)],
        };
        OverviewData {
            sites: vec![SiteRow {
                id: text.into(),
                host: text.into(),
                upstream: text.into(),
                page_tools: true,
                requests: 12,
            }],
            traffic: vec![series(text)],
            decisions: vec![series("allow"), series("deny")],
            pending_approvals: 2,
            recent_denials: vec![AuditRow {
                seq: 5,
                decision: "deny".into(),
                reason: text.into(),
                ..AuditRow::default()
            }],
            chain: ChainStatus::Verified { records: 99, checked_at: text.into() },
        }
    }

    #[test]
    fn renders_every_section() {
        let out = overview(&admin(Nav::Overview), &sample("tasks"));
        assert!(out.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(out.contains("2 calls are waiting for approval. <a href=\"/approvals\">"));
        assert_eq!(out.matches("<svg").count(), 2);
        assert!(out.contains("<th scope=\"row\">tasks</th>") && out.contains("<td class=\"number\">12</td>"));
        assert!(out.contains("<a href=\"/audit/records/5\">5</a>"));
        assert!(out.contains("verified</span> 99 records"));
        assert!(out.contains("<a href=\"/\" aria-current=\"page\">Overview</a>"));
    }

    #[test]
    fn approvers_get_no_audit_links() {
        let shell = Shell { roles: Roles { approver: true, ..Roles::default() }, ..admin(Nav::Overview) };
        let out = overview(&shell, &sample("tasks"));
        assert!(!out.contains("/audit/records/"));
        assert!(out.contains("<a href=\"/approvals\">Open the queue</a>"));
    }

    #[test]
    fn every_field_is_escaped() {
        let mut shell = admin(Nav::Overview);
        shell.user = EVIL;
        shell.csrf = EVIL;
        shell.notice = Some(crate::Notice::Error(EVIL.into()));
        let out = overview(&shell, &sample(EVIL));
        assert_no_injection(&out);
        let empty = overview(&admin(Nav::Overview), &OverviewData::default());
        assert!(empty.contains("No data yet.") && empty.contains("No sites are configured."));
        assert!(empty.contains("No call is waiting for approval."));
    }
}
