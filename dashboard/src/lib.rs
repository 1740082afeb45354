//! The policy administration dashboard: server-rendered pages, policy diffs and the inventory
//! page's rule writer.
//!
//! It renders and validates but owns no sockets (docs/design.md §3): every page is a pure function
//! from a [`Shell`] and its data to a complete HTML document, and the gateway
//! (`gateway/src/dashboard_http/`) does the HTTP, sign-in, roles, CSRF checks, storage and
//! audit. Pages carry no script and no inline style, so they work under
//! `default-src 'none'; style-src 'self'` with the one stylesheet at [`STYLESHEET_PATH`].
//! Every string from data is escaped ([`html::escape`] and the writer in [`html`]).

#![forbid(unsafe_code)]

pub mod chart;
pub mod diff;
pub mod html;
mod layout;
mod pages;
pub mod rules;

pub use chart::Series;
pub use diff::DiffLine;
pub use layout::{
    CSRF_FIELD, LOGOUT_PATH, Nav, Notice, Roles, STYLESHEET, STYLESHEET_PATH, Shell, logout_form,
};
pub use pages::approvals::{ApprovalRow, ApprovalsData, approvals};
pub use pages::audit::{AuditData, AuditQuery, AuditRow, ChainStatus, RecordData, audit, audit_record};
pub use pages::errors::{error_page, forbidden};
pub use pages::inventory::{InventoryData, InventoryRow, InventorySite, inventory};
pub use pages::overview::{OverviewData, SiteRow, overview};
pub use pages::permissions::{DecisionRow, PermissionsData, PermissionsResult, permissions};
pub use pages::policies::{
    Editor, PoliciesData, PolicySource, VersionData, VersionRow, policies, policy_version,
};
pub use rules::{Effect, EntryKind, GeneratedRule, RuleEditError};

#[cfg(test)]
mod tests {
    //! Properties every page shares: the shell, navigation per role, the document head.

    use super::*;
    use crate::pages::test_support::admin;

    fn page_for(roles: Roles, active: Nav) -> String {
        let shell = Shell { roles, ..admin(active) };
        overview(&shell, &OverviewData::default())
    }

    fn nav_links(page: &str) -> Vec<&'static str> {
        let nav = &page[page.find("<nav").unwrap_or(0)..page.find("</nav>").unwrap_or(page.len())];
        Nav::ALL.iter().map(|p| p.path()).filter(|path| nav.contains(&format!("href=\"{path}\""))).collect()
    }

    #[test]
    fn navigation_shows_only_the_pages_each_role_may_open() {
        let admin_roles = Roles { admin: true, ..Roles::default() };
        let auditor = Roles { auditor: true, ..Roles::default() };
        let approver = Roles { approver: true, ..Roles::default() };
        let both = Roles { auditor: true, approver: true, admin: false };
        assert_eq!(
            nav_links(&page_for(admin_roles, Nav::Overview)),
            ["/", "/policies", "/inventory", "/permissions", "/approvals", "/audit"]
        );
        // Auditors read the approvals queue too (they decide nothing).
        assert_eq!(
            nav_links(&page_for(auditor, Nav::Overview)),
            ["/", "/policies", "/inventory", "/permissions", "/approvals", "/audit"]
        );
        assert_eq!(nav_links(&page_for(approver, Nav::Overview)), ["/", "/approvals"]);
        assert_eq!(nav_links(&page_for(both, Nav::Overview)).len(), 6);
        assert!(nav_links(&page_for(Roles::default(), Nav::Overview)).is_empty());
        assert!(
            !approver.may_open(Nav::Audit)
                && auditor.may_open(Nav::Audit)
                && auditor.may_open(Nav::Approvals)
        );
    }

    #[test]
    fn every_page_has_the_head_landmarks_and_sign_out_form() {
        let page = page_for(Roles { admin: true, ..Roles::default() }, Nav::Overview);
        for needle in [
            "<!DOCTYPE html>",
            "<html lang=\"en\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<link rel=\"stylesheet\" href=\"/static/dashboard.css\">",
            "<header class=\"top\"><p class=\"brand\">Toolgate administration</p>",
            "Signed in as <span class=\"user\">alice</span>",
            "<nav aria-label=\"Dashboard\">",
            "<main id=\"main\">",
            "<form method=\"post\" action=\"/.toolgate/logout\" class=\"logout\"><input type=\"hidden\" name=\"csrf\" value=\"logout-token-456\">",
        ] {
            assert!(page.contains(needle), "missing {needle}");
        }
        assert!(!page.contains("<script") && !page.contains("style=") && !page.contains("<style"));
        assert_eq!(
            logout_form("t\"x"),
            "<form method=\"post\" action=\"/.toolgate/logout\" class=\"logout\"><input type=\"hidden\" name=\"csrf\" value=\"t&quot;x\"><button type=\"submit\">Sign out</button></form>"
        );
    }

    #[test]
    fn notices_use_status_and_alert_roles() {
        let mut shell = admin(Nav::Policies);
        shell.notice = Some(Notice::Success("Saved version 4.".into()));
        let out = overview(&shell, &OverviewData::default());
        assert!(out.contains("<p class=\"notice success\" role=\"status\">Saved version 4.</p>"));
        shell.notice = Some(Notice::Error("Version 3 is no longer in force.".into()));
        let out = overview(&shell, &OverviewData::default());
        assert!(
            out.contains("<p class=\"notice error\" role=\"alert\">Version 3 is no longer in force.</p>")
        );
    }

    #[test]
    fn the_stylesheet_covers_what_the_pages_rely_on() {
        for selector in [
            ".scroll",
            "overflow-x: auto",
            "overflow-wrap: anywhere",
            ":focus-visible",
            ".series-5",
            ".visually-hidden",
            ".badge.deny",
            "@media",
        ] {
            assert!(STYLESHEET.contains(selector), "stylesheet lacks {selector}");
        }
        assert_eq!(STYLESHEET_PATH, "/static/dashboard.css");
    }
}
