//! The page shell every dashboard page shares: document head, header with the sign-out form,
//! the navigation a user's roles allow, the notice box, and `<main>`.
//!
//! It is the one place that knows which roles may open which page (the gateway enforces the
//! same table) and what a complete document looks like under the dashboard's CSP: one external
//! stylesheet, no scripts, no inline styles.

use crate::html::{Html, Markup};

/// Where the stylesheet is served (the gateway answers this path with [`STYLESHEET`]).
pub const STYLESHEET_PATH: &str = "/static/dashboard.css";

/// The dashboard's only stylesheet.
pub const STYLESHEET: &str = include_str!("dashboard.css");

/// Where the sign-out form posts.
pub const LOGOUT_PATH: &str = "/.toolgate/logout";

/// The name of the form field that carries the CSRF token, in every POST form.
pub const CSRF_FIELD: &str = "csrf";

/// What every page shows around its content.
pub struct Shell<'a> {
    /// The signed-in user's display name or id.
    pub user: &'a str,
    /// What the user may do.
    pub roles: Roles,
    /// The CSRF token every POST form carries.
    pub csrf: &'a str,
    /// The sign-out form's token (the gateway's sign-out endpoint checks its own token, not the
    /// dashboard's).
    pub logout_csrf: &'a str,
    /// The page the navigation marks as current.
    pub active: Nav,
    /// A message shown above the page content.
    pub notice: Option<Notice>,
}

/// The dashboard roles a user holds (from the configured groups).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// Every page; policy edits, inventory rules, approvals.
    pub admin: bool,
    /// Reads overview, policies, inventory, permissions, the approvals queue and audit; changes
    /// nothing.
    pub auditor: bool,
    /// Overview and the approvals queue.
    pub approver: bool,
}

impl Roles {
    /// Whether these roles may open `page` (the navigation shows exactly these).
    pub fn may_open(self, page: Nav) -> bool {
        if self.admin {
            return true;
        }
        let auditor = self.auditor
            && matches!(
                page,
                Nav::Overview
                    | Nav::Policies
                    | Nav::Inventory
                    | Nav::Permissions
                    | Nav::Approvals
                    | Nav::Audit
            );
        let approver = self.approver && matches!(page, Nav::Overview | Nav::Approvals);
        auditor || approver
    }
}

/// The dashboard's pages, in navigation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nav {
    /// `/`.
    Overview,
    /// `/policies`.
    Policies,
    /// `/inventory`.
    Inventory,
    /// `/permissions`.
    Permissions,
    /// `/approvals`.
    Approvals,
    /// `/audit`.
    Audit,
}

impl Nav {
    /// Every page, in navigation order.
    pub const ALL: [Nav; 6] =
        [Nav::Overview, Nav::Policies, Nav::Inventory, Nav::Permissions, Nav::Approvals, Nav::Audit];

    /// The page's path on the dashboard host.
    pub fn path(self) -> &'static str {
        match self {
            Self::Overview => "/",
            Self::Policies => "/policies",
            Self::Inventory => "/inventory",
            Self::Permissions => "/permissions",
            Self::Approvals => "/approvals",
            Self::Audit => "/audit",
        }
    }

    /// The page's name in the navigation and the title.
    pub fn label(self) -> &'static str {
        match self {
            Self::Overview => "Overview",
            Self::Policies => "Policies",
            Self::Inventory => "Tool inventory",
            Self::Permissions => "Effective permissions",
            Self::Approvals => "Approvals",
            Self::Audit => "Audit",
        }
    }
}

/// A message at the top of a page, after an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The action worked (`role="status"`).
    Success(String),
    /// The action failed (`role="alert"`).
    Error(String),
}

/// The sign-out form (POST with the CSRF token), the one place its field name lives.
pub fn logout_form(csrf: &str) -> String {
    logout_markup(csrf).into_string()
}

pub(crate) fn logout_markup(csrf: &str) -> Markup {
    let mut html = Html::new();
    html.raw("<form method=\"post\" action=\"").raw(LOGOUT_PATH).raw("\" class=\"logout\">");
    csrf_input(&mut html, csrf);
    html.raw("<button type=\"submit\">Sign out</button></form>");
    html.finish()
}

/// The hidden CSRF field every POST form starts with.
pub(crate) fn csrf_input(html: &mut Html, csrf: &str) {
    html.raw("<input type=\"hidden\" name=\"").raw(CSRF_FIELD).raw("\" value=\"").text(csrf).raw("\">");
}

/// A complete document for a dashboard page: shell around `content`.
pub(crate) fn page(shell: &Shell, title: &str, content: &Markup) -> String {
    let mut html = Html::new();
    head(&mut html, title);
    html.raw("<header class=\"top\"><p class=\"brand\">Toolgate administration</p>")
        .raw("<p class=\"who\">Signed in as <span class=\"user\">")
        .text(shell.user)
        .raw("</span></p>");
    html.markup(&logout_markup(shell.logout_csrf));
    html.raw("</header>");
    html.raw("<nav aria-label=\"Dashboard\"><ul>");
    for page in Nav::ALL.into_iter().filter(|page| shell.roles.may_open(*page)) {
        html.raw("<li><a href=\"").raw(page.path()).raw("\"");
        if page == shell.active {
            html.raw(" aria-current=\"page\"");
        }
        html.raw(">").raw(page.label()).raw("</a></li>");
    }
    html.raw("</ul></nav><main id=\"main\">");
    match &shell.notice {
        Some(Notice::Success(message)) => {
            html.raw("<p class=\"notice success\" role=\"status\">").text(message).raw("</p>");
        }
        Some(Notice::Error(message)) => {
            html.raw("<p class=\"notice error\" role=\"alert\">").text(message).raw("</p>");
        }
        None => {}
    }
    html.raw("<h1>").text(title).raw("</h1>").markup(content).raw("</main></body></html>\n");
    html.finish().into_string()
}

/// A complete document without navigation or user data (403 and error pages).
pub(crate) fn bare_page(title: &str, content: &Markup) -> String {
    let mut html = Html::new();
    head(&mut html, title);
    html.raw("<header class=\"top\"><p class=\"brand\">Toolgate administration</p></header>")
        .raw("<main id=\"main\"><h1>")
        .text(title)
        .raw("</h1>")
        .markup(content)
        .raw("</main></body></html>\n");
    html.finish().into_string()
}

fn head(html: &mut Html, title: &str) {
    html.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        .raw("<meta name=\"referrer\" content=\"same-origin\">")
        .raw("<title>")
        .text(title)
        .raw(" · Toolgate administration</title>")
        .raw("<link rel=\"stylesheet\" href=\"")
        .raw(STYLESHEET_PATH)
        .raw("\"></head><body><a class=\"skip\" href=\"#main\">Skip to content</a>");
}
