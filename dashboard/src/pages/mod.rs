//! The dashboard's pages, one module each, and the small pieces several of them share
//! (decision badges, links that only appear when the viewer may follow them).
//!
//! Every page is a pure function from a [`Shell`](crate::Shell) and its data to a complete
//! HTML document; the gateway fetches the data, checks roles and CSRF, and serves the string.

pub(crate) mod approvals;
pub(crate) mod audit;
pub(crate) mod errors;
pub(crate) mod inventory;
pub(crate) mod overview;
pub(crate) mod permissions;
pub(crate) mod policies;

use crate::html::Html;

/// A decision as a badge: its text, plus a class chosen from a fixed list (never from data).
pub(crate) fn badge(html: &mut Html, decision: &str) {
    let class = match decision.trim().to_ascii_lowercase().as_str() {
        "allow" | "allowed" | "success" | "approved" => "badge allow",
        "approve" | "ask_approval" | "pending" => "badge approve",
        "deny" | "denied" | "refused" | "blocked" | "failure" => "badge deny",
        _ => "badge other",
    };
    html.raw("<span class=\"").raw(class).raw("\">").text(decision).raw("</span>");
}

/// Text, or an em dash for an empty value (so empty cells are not silent).
pub(crate) fn text_or_dash(html: &mut Html, text: &str) {
    if text.trim().is_empty() {
        html.raw("<span class=\"muted\">—</span>");
    } else {
        html.text(text);
    }
}

/// A `<select>`'s options: `first` (value "") then `values`, with `selected` marked.
pub(crate) fn options(html: &mut Html, first: &'static str, values: &[String], selected: &str) {
    html.raw("<option value=\"\"");
    if selected.is_empty() {
        html.raw(" selected");
    }
    html.raw(">").raw(first).raw("</option>");
    for value in values {
        html.raw("<option value=\"").text(value).raw("\"");
        if value == selected {
            html.raw(" selected");
        }
        html.raw(">").text(value).raw("</option>");
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Sample shells and the hostile strings every page test pushes through every field.

    use crate::{Nav, Roles, Shell};

    /// Breaks out of text, both attribute quote styles and raw-text elements if not escaped.
    pub(crate) const EVIL: &str = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>";

    pub(crate) fn admin(active: Nav) -> Shell<'static> {
        Shell {
            user: "alice",
            roles: Roles { admin: true, ..Roles::default() },
            csrf: "csrf-token-123",
            logout_csrf: "logout-token-456",
            active,
            notice: None,
        }
    }

    pub(crate) fn auditor(active: Nav) -> Shell<'static> {
        Shell { roles: Roles { auditor: true, ..Roles::default() }, ..admin(active) }
    }

    /// Asserts that no hostile markup survived: no tag or attribute break-out from [`EVIL`].
    pub(crate) fn assert_no_injection(html: &str) {
        assert!(!html.contains("<script"), "unescaped <script> in:\n{html}");
        assert!(!html.contains("<img"), "unescaped <img> in:\n{html}");
        assert!(!html.contains("\"'>"), "attribute break-out in:\n{html}");
        assert!(!html.contains("style="), "inline style in:\n{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img"),
            "EVIL not shown escaped"
        );
    }

    /// Asserts that every POST form carries the CSRF token and a local action.
    pub(crate) fn assert_post_forms_carry_csrf(html: &str, csrf: &str) {
        let mut forms = 0;
        for form in html.split("<form").skip(1) {
            let form = &form[..form.find("</form>").unwrap_or(form.len())];
            if form.contains("method=\"post\"") {
                forms += 1;
                // The sign-out form carries the sign-out endpoint's own token.
                let token =
                    if form.contains("action=\"/.toolgate/logout\"") { "logout-token-456" } else { csrf };
                let hidden = format!("<input type=\"hidden\" name=\"csrf\" value=\"{token}\">");
                assert!(form.contains(&hidden), "POST form without CSRF token: {form}");
                assert!(form.contains("action=\"/"), "POST form without a local action: {form}");
            }
        }
        assert!(forms > 0, "no POST form found");
    }
}
