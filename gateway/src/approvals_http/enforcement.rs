//! Server-side enforcement for approval-gated form tools: the proxy's half of "an approval is
//! used at most once". The runtime marks an agent's submission of a gated form with the call id
//! and the approval token (`approvals::form_guard`); here a request to a gated form action is
//! buffered (at most `MAX_GUARDED_BODY`), and a marked one goes on only if it consumes a valid,
//! unused approval for exactly this user, session, site, form and field values. A refused
//! submission sends nothing to the site; an unmarked (human) one is forwarded byte for byte.
//!
//! Which actions are gated is learnt from the agent API ([`GatedForms`](crate::approvals::GatedForms)): a catalog report that
//! shows a form tool needing approval, and every approval requested for a form tool.

use crate::approvals::form_guard::{self, AgentMark, GuardError, MAX_GUARDED_BODY};
use crate::approvals::{ApprovalError, FormSubmission};
use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::{self, IdleTimeout, ProxyBody};
use crate::http::errors::{ProxyError, error_response};
use crate::http::request_id::RequestId;
use crate::sso::identity::Identity;
use crate::sso::session::SessionId;
use crate::state::Gateway;
use crate::state::turns::Owner;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;

/// The user id of requests without SSO (as the agent API has it).
const ANONYMOUS: &str = "anonymous";

/// The request as it may go to the upstream, or the gateway's refusal. Requests to paths that
/// are not gated form actions pass with their body untouched (streamed); to a gated action, the
/// body is read first (413 beyond `MAX_GUARDED_BODY`) and checked.
pub async fn check(
    gateway: &Gateway,
    site: &Site,
    signed_in: Option<&(Identity, SessionId)>,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<Request<ProxyBody>, Response<ProxyBody>> {
    let now = crate::support::clock::unix_now();
    if !gateway.gated_forms.is_guarded(request.method(), site.id.as_str(), request.uri().path(), now).await {
        return Ok(request.map(|body| body.map_err(Into::into).boxed_unsync()));
    }
    // Boxed: inline, the checked submission's future would grow every request's.
    Box::pin(check_guarded(gateway, site, signed_in, request, request_id, now)).await
}

/// [`check`] for a request to a gated form action: its body read, its mark checked and its
/// approval consumed.
async fn check_guarded(
    gateway: &Gateway,
    site: &Site,
    signed_in: Option<&(Identity, SessionId)>,
    request: Request<Incoming>,
    request_id: &RequestId,
    now: u64,
) -> Result<Request<ProxyBody>, Response<ProxyBody>> {
    let refuse = Refusal { gateway, site, signed_in, path: request.uri().path().to_owned(), request_id };
    let declared = crate::http::body::declared_length(request.headers());
    if declared.is_some_and(|length| length > MAX_GUARDED_BODY as u64) {
        return Err(refuse.answer(ProxyError::SubmissionTooLarge(MAX_GUARDED_BODY)).await);
    }
    let (parts, incoming) = request.into_parts();
    let idle = IdleTimeout::new(incoming, gateway.config.timeouts.body_idle);
    let bytes = match Limited::new(idle, MAX_GUARDED_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            return Err(refuse.answer(ProxyError::SubmissionTooLarge(MAX_GUARDED_BODY)).await);
        }
        // The client went away or stalled: nothing to forward, nothing to audit.
        Err(_) => return Err(error_response(ProxyError::BadRequest, Some(&site.id), request_id.as_str())),
    };
    let mark = match find_mark(&parts, &bytes) {
        Ok(None) => return Ok(Request::from_parts(parts, body::full(bytes))),
        Ok(Some(mark)) => mark,
        Err(error) => return Err(refuse.answer(ProxyError::SubmissionUnapproved(error.reason())).await),
    };
    let owner = owner_of(gateway, site, signed_in);
    let submission = FormSubmission {
        user: &owner.user,
        session: &owner.session,
        site: site.id.as_str(),
        action_path: &refuse.path,
    };
    match gateway.approvals.consume_form(&mark, &submission, now).await {
        Ok(record) => {
            gateway.metrics.approvals.with_label_values(&["consumed"]).inc();
            tracing::info!(site = %site.id, tool = %record.binding.tool, "approved form submission");
            Ok(Request::from_parts(parts, body::full(bytes)))
        }
        Err(error @ (ApprovalError::Store(_) | ApprovalError::Corrupt(_) | ApprovalError::Contended)) => {
            tracing::warn!(site = %site.id, reason = error.reason(), "approval store failed");
            Err(refuse.answer(ProxyError::SubmissionUncheckable(error.reason())).await)
        }
        Err(error) => Err(refuse.answer(ProxyError::SubmissionUnapproved(error.reason())).await),
    }
}

/// Who an approval is bound to for this request: the same user and session digest the agent
/// API records.
fn owner_of(gateway: &Gateway, site: &Site, signed_in: Option<&(Identity, SessionId)>) -> Owner {
    let (user, session) = signed_in.map(|(identity, session)| (identity.user.as_str(), session)).unzip();
    gateway.owner(site.id.as_str(), user, session)
}

/// The agent's mark on the body (any encoding) or, for forms that send their fields in the URL,
/// on the query. Either one marks the request.
fn find_mark(parts: &http::request::Parts, bytes: &Bytes) -> Result<Option<AgentMark>, GuardError> {
    let in_body = form_guard::agent_submission(&parts.method, &parts.headers, bytes)?;
    let query = parts.uri.query().unwrap_or("");
    let in_query = form_guard::query_mark(&parts.method, &parts.headers, query)?;
    Ok(in_body.or(in_query))
}

/// What a refusal needs to be audited, counted and answered.
struct Refusal<'a> {
    gateway: &'a Gateway,
    site: &'a Site,
    signed_in: Option<&'a (Identity, SessionId)>,
    path: String,
    request_id: &'a RequestId,
}

impl Refusal<'_> {
    /// Audits (durably: no unaudited denial), counts and answers a refused submission.
    async fn answer(&self, refusal: ProxyError) -> Response<ProxyBody> {
        let reason = refusal.reason();
        let Self { gateway, site, signed_in, request_id, .. } = self;
        gateway.metrics.enforced_blocks.with_label_values(&[site.id.as_str(), reason]).inc();
        tracing::warn!(site = %site.id, reason, "form submission refused");
        let (user, email, groups) = match signed_in {
            Some((identity, _)) => {
                (identity.user.as_str(), identity.email.as_deref(), identity.groups.as_slice())
            }
            None => (ANONYMOUS, None, &[][..]),
        };
        let mut event = AuditEvent::new(EventKind::EnforcedBlock)
            .actor(user, email, groups)
            .site(site.id.as_str())
            .request(request_id.as_str())
            .resource(&format!("form:{}", shortened(&self.path, 512)))
            .decision("deny", reason);
        event.session = Some(owner_of(gateway, site, *signed_in).session);
        if gateway.audit.record(event).await.is_err() {
            return error_response(ProxyError::AuditUnavailable, Some(&site.id), request_id.as_str());
        }
        error_response(refusal, Some(&site.id), request_id.as_str())
    }
}

/// `text` cut to at most `limit` bytes on a character boundary.
fn shortened(text: &str, limit: usize) -> &str {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
