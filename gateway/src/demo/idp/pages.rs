//! The provider's HTML: the development sign-in page that lists the demo users, and the error
//! and signed-out pages. Every value from a request is escaped; every page says plainly that
//! this is a development provider, not a real sign-in.

use super::users::DemoUser;
use crate::http::pages::escape_html;
use std::fmt::Write as _;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}\
.warning{background:#fff3cd;border:1px solid #d39e00;padding:.75rem 1rem;border-radius:.25rem}\
button{display:block;width:100%;text-align:left;margin:.5rem 0;padding:.75rem 1rem;font:inherit;\
cursor:pointer;border:1px solid #888;border-radius:.25rem;background:#fafafa}\
button:hover{background:#eef}.email,.groups{color:#555;font-size:.9em}";

/// The sign-in page: one submit button per demo user in a form that posts `parameters` (the
/// original authorization request) back to `/authorize/choose`.
pub(super) fn sign_in(client_id: &str, parameters: &[(&str, &str)], users: &[DemoUser]) -> String {
    let mut hidden = String::new();
    for (name, value) in parameters {
        // Writing to a String cannot fail.
        let _ = writeln!(
            hidden,
            r#"<input type="hidden" name="{}" value="{}">"#,
            escape_html(name),
            escape_html(value)
        );
    }
    let mut buttons = String::new();
    for user in users {
        let groups = if user.groups.is_empty() { "no groups".to_owned() } else { user.groups.join(", ") };
        let _ = writeln!(
            buttons,
            r#"<button type="submit" name="user" value="{id}"><strong>{name}</strong><br>
<span class="email">{email}</span><br><span class="groups">Groups: {groups}</span></button>"#,
            id = escape_html(user.id),
            name = escape_html(user.name),
            email = escape_html(user.email),
            groups = escape_html(&groups),
        );
    }
    layout(
        "Development sign-in (not for production)",
        &format!(
            r#"<p class="warning">This is the <strong>development OIDC provider</strong> started by
<code>toolgate demo</code>. It signs anyone in as any demo user without a password. Never use it
for real users: configure your organisation's identity provider instead.</p>
<p>Signing in to <code>{client}</code>. Choose a demo user:</p>
<form method="post" action="/authorize/choose">
{hidden}{buttons}</form>"#,
            client = escape_html(client_id),
        ),
    )
}

/// A page for a request that cannot be sent back to the client.
pub(super) fn error(message: &str) -> String {
    layout(
        "Sign-in request refused (development provider)",
        &format!(
            r#"<p class="warning">The development OIDC provider refused this request and did not send
you anywhere.</p><p>{}</p>"#,
            escape_html(message)
        ),
    )
}

/// The page shown after sign-out when there is no registered place to return to.
pub(super) fn signed_out() -> String {
    layout(
        "Signed out (development provider)",
        "<p>You are signed out of the development OIDC provider. It keeps no sessions, so there \
was nothing else to end. You can close this tab.</p>",
    )
}

fn layout(title: &str, content: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="noindex"><title>{title}</title><style>{STYLE}</style></head>
<body><h1>{title}</h1>
{content}
</body></html>
"#,
        title = escape_html(title),
    )
}
