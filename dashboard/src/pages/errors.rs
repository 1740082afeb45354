//! The pages shown instead of the dashboard: 403 for someone without a dashboard role, and a
//! generic error page. Neither has navigation or any admin data.

use crate::html::Html;
use crate::layout::{bare_page, logout_markup};

/// The 403 page: who is signed in, why they may not enter, and a way to sign out (to sign in as
/// someone else on a shared machine); nothing else.
pub fn forbidden(user: &str, reason: &str, logout_csrf: &str) -> String {
    let mut html = Html::new();
    html.raw("<p>You are signed in as <span class=\"user\">")
        .text(user)
        .raw("</span>, but you may not use this page.</p><p class=\"notice error\" role=\"alert\">")
        .text(reason)
        .raw(
            "</p><p>Ask an administrator to add you to one of the dashboard's groups if you need access.</p>",
        );
    html.markup(&logout_markup(logout_csrf));
    bare_page("Access denied", &html.finish())
}

/// A generic error page (bad request, not found, store unavailable).
pub fn error_page(title: &str, message: &str) -> String {
    let mut html = Html::new();
    html.raw("<p class=\"notice error\" role=\"alert\">")
        .text(message)
        .raw("</p><p><a href=\"/\">Back to the overview</a></p>");
    bare_page(title, &html.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::test_support::{EVIL, assert_no_injection};

    #[test]
    fn forbidden_has_no_navigation_and_no_admin_links() {
        let out = forbidden("dave", "you are in none of the dashboard's groups", "token-1");
        assert!(out.contains("<h1>Access denied</h1>") && out.contains("dave"));
        assert!(!out.contains("<nav"));
        // One form: signing out, with this session's token.
        assert_eq!(out.matches("<form").count(), 1, "{out}");
        assert!(out.contains("action=\"/.toolgate/logout\"") && out.contains("value=\"token-1\""), "{out}");
        for path in ["/policies", "/inventory", "/permissions", "/approvals", "/audit"] {
            assert!(!out.contains(path), "{path} linked from the 403 page");
        }
        assert!(out.contains("<html lang=\"en\">") && out.contains("name=\"viewport\""));
    }

    #[test]
    fn both_pages_escape_everything() {
        assert_no_injection(&forbidden(EVIL, EVIL, EVIL));
        let out = error_page(EVIL, EVIL);
        assert_no_injection(&out);
        assert!(!out.contains("<nav"));
    }
}
