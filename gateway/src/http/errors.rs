//! Every way a proxied request can fail, and the one function that turns a failure into a
//! response: an HTTP status, a page a person can act on, and a low-cardinality reason that is
//! also the metric label and the log field.

use crate::config::SiteId;
use crate::http::body::{self, ProxyBody};
use crate::http::pages::error_page;
use http::{Response, StatusCode, header};

/// A failure on the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// No configured site has the requested host.
    #[error("no site is configured for this host")]
    UnknownHost,
    /// A reserved `/.toolgate/` path that does not exist.
    #[error("no such gateway resource")]
    NotFound,
    /// The request is malformed (no host, bad URI).
    #[error("malformed request")]
    BadRequest,
    /// The upstream refused the TCP connection.
    #[error("upstream refused the connection")]
    UpstreamRefused,
    /// The upstream's name did not resolve or the network is unreachable.
    #[error("upstream unreachable")]
    UpstreamUnreachable,
    /// The TLS handshake with the upstream failed.
    #[error("upstream TLS handshake failed")]
    UpstreamTls,
    /// No connection within the connect timeout.
    #[error("upstream connect timeout")]
    UpstreamConnectTimeout,
    /// No response headers within the time-to-headers timeout.
    #[error("upstream response timeout")]
    UpstreamHeadersTimeout,
    /// The upstream broke HTTP (closed early, garbage).
    #[error("upstream protocol error")]
    UpstreamProtocol,
    /// The upstream compressed HTML with an encoding the gateway cannot decode.
    #[error("upstream content encoding not supported")]
    UpstreamEncoding,
    /// The page needs more rewriter memory than allowed; it is refused, never passed unfiltered.
    #[error("page exceeds the rewriter memory limit")]
    RewriteMemory,
    /// The rewriter failed for another reason; the page is refused.
    #[error("page could not be rewritten")]
    RewriteFailed,
    /// The page is in an encoding the filter cannot parse (UTF-16); it is refused, never passed
    /// unfiltered.
    #[error("page encoding cannot be filtered")]
    PageEncoding,
    /// No valid session or bearer token, on a request that cannot be redirected to login.
    #[error("not signed in")]
    Unauthenticated,
    /// Signed in, but the site's access rules do not admit the user.
    #[error("not allowed on this site")]
    Forbidden,
    /// The sign-in could not be completed (bad state, expired login, provider refusal).
    #[error("sign-in failed")]
    LoginFailed,
    /// The identity provider or the session store is unavailable: nothing is let through.
    #[error("sign-in unavailable")]
    SsoUnavailable,
    /// The identity provider answers, but not as the configuration says (another issuer, no
    /// discovery document at the configured address): an operator must fix `sso.issuer`.
    #[error("sign-in misconfigured")]
    SsoMisconfigured,
    /// A state-changing request without a valid CSRF token.
    #[error("CSRF check failed")]
    CsrfFailed,
    /// An action that must be audited could not be recorded, so it was refused.
    #[error("audit log unavailable")]
    AuditUnavailable,
    /// An agent-marked submission to an approval-gated form without a valid unused approval
    /// (the reason names what was wrong: no token, changed fields, replay…).
    #[error("form submission without a valid approval")]
    SubmissionUnapproved(&'static str),
    /// A submission to an approval-gated form too large for the gateway to check (the limit, in
    /// bytes, is the form guard's).
    #[error("gated form submission too large to check")]
    SubmissionTooLarge(usize),
    /// The approval of a gated form submission could not be checked (store failure).
    #[error("gated form submission could not be checked")]
    SubmissionUncheckable(&'static str),
}

impl ProxyError {
    /// The low-cardinality reason: metric label, log field, and machine-readable code.
    pub fn reason(self) -> &'static str {
        match self {
            Self::UnknownHost => "unknown_host",
            Self::NotFound => "not_found",
            Self::BadRequest => "bad_request",
            Self::UpstreamRefused => "upstream_refused",
            Self::UpstreamUnreachable => "upstream_unreachable",
            Self::UpstreamTls => "upstream_tls",
            Self::UpstreamConnectTimeout => "upstream_connect_timeout",
            Self::UpstreamHeadersTimeout => "upstream_timeout",
            Self::UpstreamProtocol => "upstream_protocol",
            Self::UpstreamEncoding => "upstream_encoding",
            Self::RewriteMemory => "rewrite_memory",
            Self::RewriteFailed => "rewrite_failed",
            Self::PageEncoding => "page_encoding",
            Self::Unauthenticated => "unauthenticated",
            Self::Forbidden => "forbidden",
            Self::LoginFailed => "login_failed",
            Self::SsoUnavailable => "sso_unavailable",
            Self::SsoMisconfigured => "sso_misconfigured",
            Self::CsrfFailed => "csrf_failed",
            Self::AuditUnavailable => "audit_unavailable",
            Self::SubmissionUnapproved(reason) | Self::SubmissionUncheckable(reason) => reason,
            Self::SubmissionTooLarge(_) => "body_too_large",
        }
    }

    /// The HTTP status the user gets.
    pub fn status(self) -> StatusCode {
        match self {
            Self::UnknownHost | Self::NotFound => StatusCode::NOT_FOUND,
            Self::BadRequest => StatusCode::BAD_REQUEST,
            Self::Unauthenticated | Self::LoginFailed => StatusCode::UNAUTHORIZED,
            Self::Forbidden | Self::CsrfFailed | Self::SubmissionUnapproved(_) => StatusCode::FORBIDDEN,
            Self::SubmissionTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::SsoUnavailable
            | Self::SsoMisconfigured
            | Self::AuditUnavailable
            | Self::SubmissionUncheckable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::UpstreamConnectTimeout | Self::UpstreamHeadersTimeout => StatusCode::GATEWAY_TIMEOUT,
            Self::UpstreamRefused
            | Self::UpstreamUnreachable
            | Self::UpstreamTls
            | Self::UpstreamProtocol
            | Self::UpstreamEncoding
            | Self::RewriteMemory
            | Self::RewriteFailed
            | Self::PageEncoding => StatusCode::BAD_GATEWAY,
        }
    }

    /// True when the failure is the upstream's, so it counts as an upstream error.
    pub fn is_upstream(self) -> bool {
        Self::UPSTREAM_FAILURES.contains(&self)
    }

    /// Every failure that is the upstream's (`toolgate_upstream_errors_total`, by reason).
    pub const UPSTREAM_FAILURES: [Self; 7] = [
        Self::UpstreamRefused,
        Self::UpstreamUnreachable,
        Self::UpstreamTls,
        Self::UpstreamConnectTimeout,
        Self::UpstreamHeadersTimeout,
        Self::UpstreamProtocol,
        Self::UpstreamEncoding,
    ];

    fn explain(self, site: Option<&SiteId>) -> (&'static str, String) {
        let site = site.map_or_else(|| "the site".to_owned(), |site| format!("the site “{site}”"));
        match self {
            Self::UnknownHost => (
                "Unknown site",
                "This gateway does not serve this host name. Check the address, or ask the \
                 gateway's operators to add the site."
                    .into(),
            ),
            Self::NotFound => ("Not found", "There is no gateway resource at this address.".into()),
            Self::BadRequest => ("Bad request", "The request could not be understood.".into()),
            Self::UpstreamRefused => (
                "Site not answering",
                format!(
                    "{site} refused the connection: it is probably down or restarting. Try again in a minute."
                ),
            ),
            Self::UpstreamUnreachable => (
                "Site unreachable",
                format!(
                    "{site} could not be reached from the gateway (name or network). Tell the site's operators."
                ),
            ),
            Self::UpstreamTls => (
                "Site certificate problem",
                format!(
                    "The secure connection to {site} failed (certificate or TLS settings). Tell the site's operators."
                ),
            ),
            Self::UpstreamConnectTimeout => {
                ("Site timed out", format!("{site} did not accept a connection in time. Try again later."))
            }
            Self::UpstreamHeadersTimeout => (
                "Site timed out",
                format!("{site} accepted the request but did not answer in time. Try again later."),
            ),
            Self::UpstreamProtocol => (
                "Bad answer from site",
                format!(
                    "{site} sent a broken response. Try again; if it persists, tell the site's operators."
                ),
            ),
            Self::UpstreamEncoding => (
                "Unsupported page encoding",
                format!(
                    "{site} sent a page compressed in a way the gateway cannot read. Tell the site's operators."
                ),
            ),
            Self::RewriteMemory => (
                "Page too complex",
                format!(
                    "A page from {site} needs more memory to check than the gateway allows, so it was not shown."
                ),
            ),
            Self::PageEncoding => (
                "Page encoding not supported",
                format!(
                    "A page from {site} uses a text encoding (such as UTF-16) the gateway cannot check, so it \
                     was not shown. The site's owners can serve it as UTF-8."
                ),
            ),
            Self::RewriteFailed => (
                "Page could not be checked",
                format!("A page from {site} could not be processed by the gateway, so it was not shown."),
            ),
            Self::Unauthenticated => (
                "Sign-in required",
                "This request needs a signed-in session or a valid bearer token. Open the site in a \
                 browser to sign in, or send a token from the corporate identity provider."
                    .into(),
            ),
            Self::Forbidden => (
                "Not allowed",
                format!(
                    "Your account is signed in but not allowed to open {site}. Ask its owners for access."
                ),
            ),
            Self::LoginFailed => (
                "Sign-in failed",
                "The sign-in could not be completed (it may have expired or been started in another \
                 browser). Open the site again to start over."
                    .into(),
            ),
            Self::SsoUnavailable => (
                "Sign-in unavailable",
                "The corporate sign-in service cannot be reached right now, so nothing can be opened. \
                 Try again in a minute."
                    .into(),
            ),
            Self::SsoMisconfigured => (
                "Sign-in misconfigured",
                "The corporate sign-in service answers, but not as this gateway is configured to expect \
                 (a configuration mismatch, not an outage), so nobody can sign in. The gateway's operators \
                 have the details in its log."
                    .into(),
            ),
            Self::AuditUnavailable => (
                "Temporarily refused",
                "This action must be recorded in the audit log, and the log cannot be written right now, \
                 so the action was not carried out. The gateway's operators have been alerted; try again later."
                    .into(),
            ),
            Self::SubmissionUnapproved(reason) => (
                "Submission refused",
                format!(
                    "The assistant submitted this form without a valid approval ({reason}), so nothing was \
                     sent to {site}. Ask the assistant again and approve the action in its panel."
                ),
            ),
            Self::SubmissionTooLarge(limit) => (
                "Submission refused",
                format!(
                    "This form's submissions are checked by the gateway, and this one is larger than \
                     {limit} bytes, so it was not sent to {site}."
                ),
            ),
            Self::SubmissionUncheckable(_) => (
                "Submission refused",
                format!(
                    "The gateway could not check the approval for this submission right now, so it was \
                     not sent to {site}. Try again in a minute."
                ),
            ),
            Self::CsrfFailed => (
                "Request refused",
                "This form was not sent from a gateway page (missing or wrong security token). Reload the \
                 page and try again."
                    .into(),
            ),
        }
    }
}

/// The response for a failure: status, an HTML page a person can act on, the reason header.
pub fn error_response(error: ProxyError, site: Option<&SiteId>, request_id: &str) -> Response<ProxyBody> {
    let (title, detail) = error.explain(site);
    let page = error_page(error.status().as_u16(), title, &detail, request_id);
    let mut response = Response::new(body::full(page));
    *response.status_mut() = error.status();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    headers.insert("x-toolgate-reason", header::HeaderValue::from_static(error.reason()));
    response
}
