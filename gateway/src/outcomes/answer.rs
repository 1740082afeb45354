//! What the site answered an agent's form submission, read from the response the proxy passed
//! on: a redirect (post/redirect/get) or a 2xx that does not show the form again means the site
//! took it; a 4xx or 5xx, or a 2xx that shows the same form again with error markers, means the
//! site refused it, with the markers' messages.

use http::{Method, StatusCode};
use injector::PageAnswer;
use serde::{Deserialize, Serialize};

/// The site's answer to one submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SiteAnswer {
    /// The site took the submission.
    Accepted {
        /// The answer's status (the redirect's, after a post/redirect/get).
        status: u16,
        /// Where the browser landed: the redirect's target, else the submission's own URL.
        url: Option<String>,
        /// The landing page's title, when it was a page.
        title: Option<String>,
    },
    /// The site refused it.
    RejectedBySite {
        /// The answer's status.
        status: u16,
        /// The page's error messages (page text: the model gets them redacted).
        messages: Vec<String>,
    },
    /// The gateway refused the submission before the site saw it (an approval-gated form
    /// without a valid approval).
    RefusedByGateway {
        /// The gateway's status.
        status: u16,
        /// The gateway's reason code.
        reason: String,
    },
}

impl SiteAnswer {
    /// The answer as a tool result: the landing URL and title, or a `rejected_by_site` error
    /// with the site's messages.
    pub fn tool_result(&self) -> Result<serde_json::Value, String> {
        match self {
            Self::Accepted { status, url, title } => {
                Ok(serde_json::json!({"submitted": true, "status": status, "url": url, "title": title}))
            }
            Self::RejectedBySite { status, messages } => {
                let reason = StatusCode::from_u16(*status).ok().and_then(|code| code.canonical_reason());
                let mut error = format!(
                    "rejected_by_site: the site refused the submission (HTTP {status}{})",
                    reason.map(|reason| format!(" {reason}")).unwrap_or_default()
                );
                if !messages.is_empty() {
                    error.push_str(": ");
                    error.push_str(&messages.join(" | "));
                }
                Err(error)
            }
            Self::RefusedByGateway { reason, .. } => Err(format!(
                "refused_by_gateway: the gateway did not send the submission to the site ({reason})"
            )),
        }
    }

    /// `accepted` or `rejected_by_site`, for audit records and metrics.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Accepted { .. } => "accepted",
            Self::RejectedBySite { .. } => "rejected_by_site",
            Self::RefusedByGateway { .. } => "refused_by_gateway",
        }
    }

    /// The status the site answered with.
    pub fn status(&self) -> u16 {
        match self {
            Self::Accepted { status, .. }
            | Self::RejectedBySite { status, .. }
            | Self::RefusedByGateway { status, .. } => *status,
        }
    }
}

/// The submission a response answers: its method, and its path and query as sent.
#[derive(Debug, Clone, Copy)]
pub struct Submitted<'a> {
    /// `GET` or `POST`.
    pub method: &'a Method,
    /// The request target's path and query.
    pub target: &'a str,
}

/// Classifies a response. `location` is the redirect target as the browser sees it; `page` is
/// what the probe read when the response was a page.
pub fn classify(
    status: StatusCode,
    location: Option<&str>,
    page: Option<&PageAnswer>,
    submitted: Submitted<'_>,
) -> SiteAnswer {
    let messages = || page.map(|page| page.errors.clone()).unwrap_or_default();
    if status.is_client_error() || status.is_server_error() {
        return SiteAnswer::RejectedBySite { status: status.as_u16(), messages: messages() };
    }
    if status.is_success()
        && let Some(page) = page
        && !page.errors.is_empty()
        && shows_form_again(page, submitted)
    {
        return SiteAnswer::RejectedBySite { status: status.as_u16(), messages: messages() };
    }
    let title = page.map(|page| page.title.clone()).filter(|title| !title.is_empty());
    let url = match location {
        Some(location) if status.is_redirection() => location.to_owned(),
        _ => submitted.target.to_owned(),
    };
    SiteAnswer::Accepted { status: status.as_u16(), url: Some(url), title }
}

/// Whether the page shows a form that submits the same way to the same path again (its action
/// resolved as the form rules resolve it, `injector::resolve_action_path`).
fn shows_form_again(page: &PageAnswer, submitted: Submitted<'_>) -> bool {
    let path = submitted.target.split(['?', '#']).next().unwrap_or("/");
    page.forms.iter().any(|form| {
        form.method.eq_ignore_ascii_case(submitted.method.as_str())
            && injector::resolve_action_path(path, form.action.as_deref()) == path
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use injector::FormSeen;

    fn page(forms: &[(&str, Option<&str>)], errors: &[&str]) -> PageAnswer {
        PageAnswer {
            title: "Add employee".into(),
            forms: forms
                .iter()
                .map(|(method, action)| FormSeen {
                    method: (*method).into(),
                    action: action.map(Into::into),
                    hidden: Vec::new(),
                })
                .collect(),
            errors: errors.iter().map(|error| (*error).to_owned()).collect(),
        }
    }

    const POST_ADD: Submitted<'static> = Submitted { method: &Method::POST, target: "/staff/add/?_popup=1" };

    #[test]
    fn the_same_form_again_with_errors_is_a_refusal() {
        for action in
            [None, Some(""), Some("."), Some("/staff/add/"), Some("?x=1"), Some("http://other/staff/add/")]
        {
            let shown = page(&[("post", action)], &["Employee with this Email already exists."]);
            assert_eq!(
                classify(StatusCode::OK, None, Some(&shown), POST_ADD),
                SiteAnswer::RejectedBySite { status: 200, messages: vec![shown.errors[0].clone()] },
                "{action:?}"
            );
        }
    }

    #[test]
    fn other_pages_and_redirects_are_success() {
        let landing = SiteAnswer::Accepted { status: 302, url: Some("/staff/".into()), title: None };
        assert_eq!(classify(StatusCode::FOUND, Some("/staff/"), None, POST_ADD), landing);
        // Errors without the form (a flash message elsewhere), or the form without errors (an
        // "add another" page), or another form with errors: the site took it.
        for shown in [
            page(&[("post", Some("/logout/"))], &["Saved"]),
            page(&[("post", None)], &[]),
            page(&[("get", None)], &["x"]),
            page(&[("post", Some("/staff/1/change/"))], &["x"]),
        ] {
            let answer = classify(StatusCode::OK, None, Some(&shown), POST_ADD);
            assert_eq!(
                answer,
                SiteAnswer::Accepted {
                    status: 200,
                    url: Some(POST_ADD.target.into()),
                    title: Some("Add employee".into())
                },
                "{shown:?}"
            );
        }
    }

    #[test]
    fn client_and_server_errors_are_refusals_with_or_without_a_page() {
        let answer = classify(StatusCode::CONFLICT, None, None, POST_ADD);
        assert_eq!(answer, SiteAnswer::RejectedBySite { status: 409, messages: vec![] });
        assert_eq!(
            answer.tool_result(),
            Err("rejected_by_site: the site refused the submission (HTTP 409 Conflict)".into())
        );
        let shown = page(&[], &["Server is down", "try later"]);
        let answer = classify(StatusCode::INTERNAL_SERVER_ERROR, None, Some(&shown), POST_ADD);
        assert_eq!(
            answer.tool_result(),
            Err("rejected_by_site: the site refused the submission (HTTP 500 Internal Server Error): \
                 Server is down | try later"
                .into())
        );
        assert_eq!(answer.label(), "rejected_by_site");
    }
}
