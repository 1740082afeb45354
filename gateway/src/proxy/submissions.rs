//! The proxy's half of honest form outcomes (`outcomes`): a request carrying the mark of an
//! agent's submission (or of the landing request after its redirect) is watched, and the
//! response says what the site answered.
//!
//! The mark is a gateway cookie, so sites never see it (`sso::cookies`). It counts only on the
//! request it names (method and path) and only once per call; the proxy expires it in the
//! response that answers it. A redirect to the same origin marks the landing request, whose page
//! adds its title; any other response settles the call here, or, for a page, when it has
//! streamed whole (`outcomes::PageWatch`).

use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::outcomes::{Mark, Observation, PageWatch, SiteAnswer, Submitted, classify};
use crate::sso::cookies::{self, CookieKind};
use crate::sso::identity::Identity;
use crate::sso::session::SessionId;
use crate::state::Gateway;
use crate::state::turns::Owner;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};

/// How long the landing cookie may wait for the browser to follow the redirect.
const LANDING_COOKIE_SECONDS: u64 = 60;

/// A request being watched.
pub struct Watch {
    observation: Observation,
    kind: CookieKind,
    secure: bool,
    method: Method,
    /// Path and query, as requested.
    target: String,
}

/// Who made the watched request, for its owner and its audit record.
pub struct Requester<'a> {
    /// The site.
    pub site: &'a Site,
    /// The signed-in user and session, if any.
    pub signed_in: Option<&'a (Identity, SessionId)>,
    /// The request's id.
    pub request_id: &'a str,
}

/// The watch for this request, when it carries a mark that names it and its call was not
/// observed before. The submission's answer is audited (`form_outcome`) when it settles. A
/// request without a mark costs a cookie lookup, nothing more (its owner is never computed).
pub fn watch<B>(
    gateway: &Gateway,
    requester: &Requester<'_>,
    request: &Request<B>,
    secure: bool,
) -> Option<Watch> {
    let (method, path) = (request.method(), request.uri().path());
    for kind in [CookieKind::Submission, CookieKind::Landing] {
        let Some(mark) = cookies::read(request.headers(), kind, secure).and_then(|value| Mark::parse(&value))
        else {
            continue;
        };
        if !mark.matches(method, path) {
            continue;
        }
        let (user, session) =
            requester.signed_in.map(|(identity, session)| (identity.user.as_str(), session)).unzip();
        let owner_of_request = gateway.owner(requester.site.id.as_str(), user, session);
        let owner = &owner_of_request.key();
        let observation = match kind {
            CookieKind::Landing => gateway.outcomes.land(owner, &mark),
            _ => gateway.outcomes.begin(owner, &mark, replaces_document(request.headers())),
        };
        let target = request.uri().path_and_query().map_or(path, |target| target.as_str()).to_owned();
        return observation.map(|mut observation| {
            if kind == CookieKind::Submission {
                let event = audit_event(requester, &owner_of_request, &mark, path);
                let audit = gateway.audit.clone();
                observation.on_settle(move |answer| {
                    let event = event.decision(answer.label(), &answer.status().to_string());
                    // Settled from a body's end or drop: the record is written on its own task.
                    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                        runtime.spawn(async move { audit.record_or_log(event).await });
                    }
                });
            }
            // Until the site answers, the answer is that it did not.
            let unanswered = vec!["the site did not answer".to_owned()];
            observation.set_fallback(SiteAnswer::RejectedBySite { status: 502, messages: unanswered });
            Watch { observation, kind, secure, method: method.clone(), target }
        });
    }
    None
}

impl Watch {
    /// The response is on its way to the browser (headers already made public): the mark is
    /// expired, a same-origin redirect marks its landing request, and the call is settled now
    /// or, for a page (`is_page`), handed on to be settled when the page has streamed whole.
    pub fn answer(
        self,
        site: &Site,
        response: &mut Response<ProxyBody>,
        public: &str,
        is_page: bool,
    ) -> Option<PageWatch> {
        let Self { mut observation, kind, secure, method, target } = self;
        let headers = response.headers_mut();
        append_cookie(headers, cookies::set_cookie(kind, secure, "", 0));
        let status = response.status();
        let submitted = Submitted { method: &method, target: &target };
        let location = response.headers().get(header::LOCATION).and_then(|value| value.to_str().ok());
        if status.is_redirection()
            && let Some(location) = location
        {
            let answer = classify(status, Some(location), None, submitted);
            match landing_mark(observation.call_id(), &method, status, public, &target, location) {
                Some(landing) => {
                    let value = cookies::set_cookie(
                        CookieKind::Landing,
                        secure,
                        &landing.encode(),
                        LANDING_COOKIE_SECONDS,
                    );
                    append_cookie(response.headers_mut(), value);
                    observation.redirected(answer, landing);
                }
                None => observation.finish(answer),
            }
            return None;
        }
        let answer = classify(status, None, None, submitted);
        if !is_page {
            observation.finish(answer);
            return None;
        }
        observation.set_fallback(answer);
        let path = target.split('?').next().unwrap_or("/");
        let selectors = site.error_selectors(path);
        Some(PageWatch::new(observation, status, method, target, selectors))
    }
}

/// Whether the browser says this request replaces the document that sent it (a top-level
/// navigation, Fetch Metadata): then the page that submitted is going away.
fn replaces_document(headers: &http::HeaderMap) -> bool {
    let is = |name: &str, value: &str| {
        headers.get(name).is_some_and(|sent| sent.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
    };
    is("sec-fetch-mode", "navigate") && is("sec-fetch-dest", "document")
}

/// The audit record of a submission's answer, without the decision yet. No page text: the
/// answer's messages stay out of the audit.
fn audit_event(requester: &Requester<'_>, owner: &Owner, mark: &Mark, path: &str) -> AuditEvent {
    let (user, email, groups) = match requester.signed_in {
        Some((identity, _)) => {
            (identity.user.as_str(), identity.email.as_deref(), identity.groups.as_slice())
        }
        None => (owner.user.as_str(), None, &[][..]),
    };
    let path: String = path.chars().take(512).collect();
    let mut event = AuditEvent::new(EventKind::FormOutcome)
        .actor(user, email, groups)
        .site(&owner.site)
        .request(requester.request_id)
        .resource(&format!("form:{path}"));
    event.session = Some(owner.session.clone());
    event.explanation = Some(serde_json::json!({"call_id": mark.call_id, "method": mark.method.as_str()}));
    event
}

/// The mark of the request the browser makes to follow a redirect to `location`, when that stays
/// on this site (`public` is its origin). 307 and 308 keep the method; the others become GET.
fn landing_mark(
    call_id: &str,
    method: &Method,
    status: StatusCode,
    public: &str,
    target: &str,
    location: &str,
) -> Option<Mark> {
    let base = url::Url::parse(public).ok()?.join(target).ok()?;
    let landing = base.join(location).ok()?;
    if landing.origin() != base.origin() {
        return None;
    }
    let keeps_method = matches!(status, StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT);
    let landing_method = if keeps_method { method.clone() } else { Method::GET };
    Mark::new(call_id, landing_method, landing.path())
}

fn append_cookie(headers: &mut http::HeaderMap, value: Option<HeaderValue>) {
    if let Some(value) = value {
        headers.append(header::SET_COOKIE, value);
    }
}

impl Watch {
    /// The gateway refused the request before the site saw it (the refusal carries its reason
    /// in `X-Toolgate-Reason`): the mark is expired and the call settled as refused.
    pub fn refused(self, refusal: &mut Response<ProxyBody>) {
        append_cookie(refusal.headers_mut(), cookies::set_cookie(self.kind, self.secure, "", 0));
        let reason = refusal.headers().get("x-toolgate-reason").and_then(|value| value.to_str().ok());
        let answer = SiteAnswer::RefusedByGateway {
            status: refusal.status().as_u16(),
            reason: reason.unwrap_or("refused").to_owned(),
        };
        self.observation.finish(answer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landing_requests_stay_on_the_site() {
        let public = "https://hr.example";
        let mark = |status: u16, location: &str| {
            landing_mark(
                "c1",
                &Method::POST,
                StatusCode::from_u16(status).expect("status"),
                public,
                "/staff/add/",
                location,
            )
        };
        assert_eq!(mark(302, "/staff/"), Mark::new("c1", Method::GET, "/staff/"));
        assert_eq!(mark(303, "../../"), Mark::new("c1", Method::GET, "/"));
        assert_eq!(mark(302, "https://hr.example/staff/?q=1"), Mark::new("c1", Method::GET, "/staff/"));
        assert_eq!(mark(307, "/again/"), Mark::new("c1", Method::POST, "/again/"));
        assert_eq!(mark(302, "https://sso.example/login"), None);
        assert_eq!(mark(302, "//evil.example/"), None);
    }
}
