//! The audit pages: search with filters, one record, chain verification, export; and the audit
//! pieces the overview reuses (the record table, the chain status).

use crate::html::{Html, Markup, is_local_path};
use crate::layout::{Shell, csrf_input, page};
use crate::pages::{badge, options, text_or_dash};

/// The search form's values, as the user typed them (shown back in the form).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// From (RFC 3339), inclusive.
    pub since: String,
    /// Until (RFC 3339), exclusive.
    pub until: String,
    /// A user id.
    pub user: String,
    /// A site id.
    pub site: String,
    /// An event kind (one of [`AuditData::kinds`]) or "" for any.
    pub kind: String,
    /// A decision (`allow`, `deny`, …) or "".
    pub decision: String,
}

/// The audit search page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditData {
    /// The query the rows answer.
    pub query: AuditQuery,
    /// Every event kind, for the kind filter.
    pub kinds: Vec<String>,
    /// The matching records, one page.
    pub rows: Vec<AuditRow>,
    /// The next page of the same query (a local path), if any.
    pub next_href: Option<String>,
    /// The same query as JSON lines (a local path).
    pub export_href: String,
    /// The last chain verification.
    pub chain: ChainStatus,
    /// Why the query could not run (a bad time), shown as an alert.
    pub problem: Option<String>,
}

/// One audit record in a table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditRow {
    /// Sequence number (links to the record).
    pub seq: u64,
    /// UTC time, formatted.
    pub time: String,
    /// Event kind.
    pub kind: String,
    /// The actor.
    pub user: String,
    /// The site, if any.
    pub site: String,
    /// What it was about (a tool, a policy version, …).
    pub resource: String,
    /// The outcome.
    pub decision: String,
    /// Why.
    pub reason: String,
}

/// The result of the last hash-chain verification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ChainStatus {
    /// Every record's hash and link checked out.
    Verified {
        /// Records checked.
        records: u64,
        /// When.
        checked_at: String,
    },
    /// The chain breaks at a record.
    Broken {
        /// The first bad record.
        at_seq: u64,
        /// What is wrong.
        reason: String,
        /// When.
        checked_at: String,
    },
    /// The log could not be read.
    Unavailable(String),
    /// No verification has run yet.
    #[default]
    NotChecked,
}

/// One record in full.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordData {
    /// Its sequence number.
    pub seq: u64,
    /// The record as pretty JSON.
    pub json_pretty: String,
    /// Whether its stored hash matches its content.
    pub hash_valid: bool,
}

/// The audit search page.
pub fn audit(shell: &Shell, data: &AuditData) -> String {
    let mut html = Html::new();
    if let Some(problem) = &data.problem {
        html.raw("<p class=\"notice error\" role=\"alert\">").text(problem).raw("</p>");
    }
    search_form(&mut html, data);
    html.raw("<section aria-labelledby=\"records-heading\"><h2 id=\"records-heading\">Records</h2>");
    html.markup(&records_table(&data.rows, "Matching audit records", true));
    html.raw("<p class=\"actions\">");
    if let Some(next) = data.next_href.as_deref().filter(|href| is_local_path(href)) {
        html.raw("<a class=\"button\" href=\"").text(next).raw("\" rel=\"next\">Next page</a> ");
    }
    if is_local_path(&data.export_href) {
        html.raw("<a class=\"button\" href=\"").text(&data.export_href).raw("\">Export JSON lines</a>");
    }
    html.raw("</p></section>");
    html.raw("<section aria-labelledby=\"chain-heading\"><h2 id=\"chain-heading\">Chain</h2>")
        .markup(&chain_status(&data.chain))
        .raw("<form method=\"post\" action=\"/audit/verify\">");
    csrf_input(&mut html, shell.csrf);
    html.raw("<button type=\"submit\">Verify chain</button></form></section>");
    page(shell, "Audit", &html.finish())
}

/// One record's page.
pub fn audit_record(shell: &Shell, data: &RecordData) -> String {
    let mut html = Html::new();
    html.raw("<p><a href=\"/audit\">Back to the search</a></p>");
    if data.hash_valid {
        html.raw("<p class=\"notice success\">Its hash matches its content.</p>");
    } else {
        html.raw("<p class=\"notice error\" role=\"alert\">Its hash does NOT match its content: the record was altered.</p>");
    }
    html.raw("<pre class=\"code\">").text(&data.json_pretty).raw("</pre>");
    let title = format!("Audit record {}", data.seq);
    page(shell, &title, &html.finish())
}

/// A table of audit records; `link` makes each sequence number a link to the record.
pub(crate) fn records_table(rows: &[AuditRow], caption: &str, link: bool) -> Markup {
    let mut html = Html::new();
    if rows.is_empty() {
        html.raw("<p class=\"empty\">No records.</p>");
        return html.finish();
    }
    html.raw("<div class=\"scroll\"><table><caption>")
        .text(caption)
        .raw("</caption><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Time</th><th scope=\"col\">Kind</th>")
        .raw("<th scope=\"col\">User</th><th scope=\"col\">Site</th><th scope=\"col\">Resource</th>")
        .raw("<th scope=\"col\">Decision</th><th scope=\"col\">Reason</th></tr></thead><tbody>");
    for row in rows {
        html.raw("<tr><td>");
        if link {
            html.raw("<a href=\"/audit/records/").num(row.seq).raw("\">").num(row.seq).raw("</a>");
        } else {
            html.num(row.seq);
        }
        html.raw("</td><td class=\"nowrap\">")
            .text(&row.time)
            .raw("</td><td>")
            .text(&row.kind)
            .raw("</td><td>");
        text_or_dash(&mut html, &row.user);
        html.raw("</td><td>");
        text_or_dash(&mut html, &row.site);
        html.raw("</td><td class=\"wrap\">");
        text_or_dash(&mut html, &row.resource);
        html.raw("</td><td>");
        badge(&mut html, &row.decision);
        html.raw("</td><td class=\"wrap\">");
        text_or_dash(&mut html, &row.reason);
        html.raw("</td></tr>");
    }
    html.raw("</tbody></table></div>");
    html.finish()
}

/// The chain's status as one sentence with a class (and an alert when broken).
pub(crate) fn chain_status(status: &ChainStatus) -> Markup {
    let mut html = Html::new();
    match status {
        ChainStatus::Verified { records, checked_at } => {
            html.raw("<p class=\"chain ok\"><span class=\"badge allow\">verified</span> ")
                .num(*records)
                .raw(" records, checked ")
                .text(checked_at)
                .raw(".</p>");
        }
        ChainStatus::Broken { at_seq, reason, checked_at } => {
            html.raw("<p class=\"chain broken\" role=\"alert\"><span class=\"badge deny\">broken</span> at record ")
                .num(*at_seq)
                .raw(": ")
                .text(reason)
                .raw(" (checked ")
                .text(checked_at)
                .raw(").</p>");
        }
        ChainStatus::Unavailable(reason) => {
            html.raw("<p class=\"chain unavailable\"><span class=\"badge other\">unavailable</span> ")
                .text(reason)
                .raw("</p>");
        }
        ChainStatus::NotChecked => {
            html.raw("<p class=\"chain\"><span class=\"badge other\">not checked</span> No verification has run yet.</p>");
        }
    }
    html.finish()
}

fn search_form(html: &mut Html, data: &AuditData) {
    let query = &data.query;
    html.raw("<form method=\"get\" action=\"/audit\" class=\"filters\"><fieldset><legend>Search</legend>");
    let hint = "RFC 3339, e.g. 2026-11-22T10:00:00Z";
    text_field(html, "since", "From", &query.since, hint);
    text_field(html, "until", "Until", &query.until, hint);
    text_field(html, "user", "User", &query.user, "user id");
    text_field(html, "site", "Site", &query.site, "site id");
    html.raw(
        "<p class=\"field\"><label for=\"audit-kind\">Kind</label><select id=\"audit-kind\" name=\"kind\">",
    );
    options(html, "any", &data.kinds, &query.kind);
    html.raw("</select></p>");
    text_field(html, "decision", "Decision", &query.decision, "allow, deny, …");
    html.raw("<p class=\"field submit\"><button type=\"submit\">Search</button></p></fieldset></form>");
}

fn text_field(
    html: &mut Html,
    name: &'static str,
    label: &'static str,
    value: &str,
    placeholder: &'static str,
) {
    html.raw("<p class=\"field\"><label for=\"audit-")
        .raw(name)
        .raw("\">")
        .raw(label)
        .raw("</label><input type=\"text\" id=\"audit-")
        .raw(name)
        .raw("\" name=\"")
        .raw(name)
        .raw("\" value=\"")
        .text(value)
        .raw("\" placeholder=\"")
        .raw(placeholder)
        .raw("\"></p>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Nav;
    use crate::pages::test_support::{EVIL, admin, assert_no_injection, assert_post_forms_carry_csrf};

    fn row(seq: u64, text: &str) -> AuditRow {
        AuditRow {
            seq,
            time: text.into(),
            kind: text.into(),
            user: text.into(),
            site: text.into(),
            resource: text.into(),
            decision: text.into(),
            reason: text.into(),
        }
    }

    fn sample(text: &str) -> AuditData {
        AuditData {
            query: AuditQuery {
                since: text.into(),
                until: text.into(),
                user: text.into(),
                site: text.into(),
                kind: text.into(),
                decision: text.into(),
            },
            kinds: vec!["login".into(), text.into()],
            rows: vec![row(41, text), row(42, "deny")],
            next_href: Some("/audit?cursor=42&user=a%22b".into()),
            export_href: "/audit/export?user=x".into(),
            chain: ChainStatus::Broken { at_seq: 7, reason: text.into(), checked_at: text.into() },
            problem: Some(text.into()),
        }
    }

    #[test]
    fn renders_filters_rows_links_and_chain() {
        let out = audit(&admin(Nav::Audit), &sample("2026-11-22T10:00:00Z"));
        assert!(out.contains("<form method=\"get\" action=\"/audit\""));
        for name in ["since", "until", "user", "site", "kind", "decision"] {
            assert!(out.contains(&format!("name=\"{name}\"")), "{name}");
            assert!(out.contains(&format!("<label for=\"audit-{name}\">")), "label for {name}");
        }
        assert!(out.contains("placeholder=\"RFC 3339, e.g. 2026-11-22T10:00:00Z\""));
        assert!(out.contains("<a href=\"/audit/records/41\">41</a>"));
        assert!(out.contains("href=\"/audit?cursor=42&amp;user=a%22b\" rel=\"next\">Next page</a>"));
        assert!(out.contains("href=\"/audit/export?user=x\">Export JSON lines</a>"));
        assert!(out.contains("<form method=\"post\" action=\"/audit/verify\">"));
        assert!(out.contains("broken</span> at record 7"));
        assert!(out.contains("<span class=\"badge deny\">deny</span>"));
        assert!(out.contains("<div class=\"scroll\"><table><caption>"));
        assert_post_forms_carry_csrf(&out, "csrf-token-123");
    }

    #[test]
    fn selected_kind_and_problem_alert() {
        let mut data = sample("x");
        data.query.kind = "login".into();
        let out = audit(&admin(Nav::Audit), &data);
        assert!(out.contains("<option value=\"login\" selected>login</option>"));
        assert!(out.contains("<option value=\"\">any</option>"));
        assert!(out.contains("<p class=\"notice error\" role=\"alert\">x</p>"));
    }

    #[test]
    fn every_field_is_escaped_and_foreign_links_are_dropped() {
        let mut data = sample(EVIL);
        data.next_href = Some("javascript:alert(1)".into());
        data.export_href = "//evil.example/export".into();
        let out = audit(&admin(Nav::Audit), &data);
        assert_no_injection(&out);
        assert!(!out.contains("javascript:") && !out.contains("evil.example"));
        for status in [
            ChainStatus::Unavailable(EVIL.into()),
            ChainStatus::Verified { records: 3, checked_at: EVIL.into() },
        ] {
            assert_no_injection(&chain_status(&status).into_string());
        }
        let record = audit_record(
            &admin(Nav::Audit),
            &RecordData { seq: 9, json_pretty: EVIL.into(), hash_valid: false },
        );
        assert_no_injection(&record);
        assert!(record.contains("<h1>Audit record 9</h1>") && record.contains("NOT match"));
    }
}
