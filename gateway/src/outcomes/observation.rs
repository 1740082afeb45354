//! One watched request, held by the proxy while the site answers: it settles the call's entry
//! in the registry, with the answer the response gives, or with the status alone when the
//! response never ends well (the client left, the page failed).

use super::answer::{Submitted, classify};
use super::{Mark, Outcomes, SiteAnswer};
use http::{Method, StatusCode};
use injector::AnswerProbe;
use std::sync::Arc;

/// What is told the answer once it is known.
type Report = Box<dyn FnOnce(&SiteAnswer) + Send>;

/// One submission (or landing request) being watched. Settle it with [`finish`](Self::finish)
/// or [`redirected`](Self::redirected); dropped unsettled (the client left, the page failed),
/// it settles with its fallback, the answer the status alone gives.
pub struct Observation {
    outcomes: Arc<Outcomes>,
    owner: String,
    call_id: String,
    landing: bool,
    fallback: Option<SiteAnswer>,
    /// Told the answer once, however it settles (the proxy audits it).
    on_settle: Option<Report>,
}

impl Observation {
    pub(super) fn new(outcomes: Arc<Outcomes>, owner: &str, call_id: &str, landing: bool) -> Self {
        Self {
            outcomes,
            owner: owner.to_owned(),
            call_id: call_id.to_owned(),
            landing,
            fallback: None,
            on_settle: None,
        }
    }

    /// The call this observes.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Whether this is the landing request of a redirect.
    pub fn is_landing(&self) -> bool {
        self.landing
    }

    /// Calls `report` with the answer once it is known.
    pub fn on_settle(&mut self, report: impl FnOnce(&SiteAnswer) + Send + 'static) {
        self.on_settle = Some(Box::new(report));
    }

    fn report(&mut self, answer: &SiteAnswer) {
        if let Some(report) = self.on_settle.take() {
            report(answer);
        }
    }

    /// What the answer is if nothing better is learnt (the response's status alone).
    pub fn set_fallback(&mut self, answer: SiteAnswer) {
        self.fallback = Some(answer);
    }

    /// The site's answer.
    pub fn finish(mut self, answer: SiteAnswer) {
        self.fallback = None;
        self.report(&answer);
        self.outcomes.settle(&self.owner, &self.call_id, answer, self.landing);
    }

    /// The site redirected the submission to `landing`, which the proxy marked; its page may
    /// still add a title.
    pub fn redirected(mut self, answer: SiteAnswer, landing: Mark) {
        self.fallback = None;
        self.report(&answer);
        if self.landing {
            // One step only: a landing page that redirects again ends the answer here.
            self.outcomes.settle(&self.owner, &self.call_id, answer, true);
        } else {
            self.outcomes.redirect(&self.owner, &self.call_id, answer, landing);
        }
    }
}

impl Drop for Observation {
    fn drop(&mut self) {
        if let Some(answer) = self.fallback.take() {
            self.report(&answer);
            self.outcomes.settle(&self.owner, &self.call_id, answer, self.landing);
        }
    }
}

/// An answer page being read: the probe goes into the page's rewriter, and when the page has
/// streamed whole, [`finish`](Self::finish) classifies what it read. Dropped before (a failed or
/// abandoned page), the observation's fallback answers.
pub struct PageWatch {
    observation: Observation,
    probe: AnswerProbe,
    status: StatusCode,
    method: Method,
    target: String,
}

impl PageWatch {
    /// Watches the page answering `method` `target` with `status`, with the site's own error
    /// selectors besides the built-in ones.
    pub fn new(
        observation: Observation,
        status: StatusCode,
        method: Method,
        target: String,
        error_selectors: Vec<String>,
    ) -> Self {
        Self { observation, probe: AnswerProbe::new(error_selectors), status, method, target }
    }

    /// The probe to hand to the page's rewriter.
    pub fn probe(&self) -> AnswerProbe {
        self.probe.clone()
    }

    /// The page streamed whole: settles the call with what it showed.
    pub fn finish(self) {
        let page = self.probe.answer();
        let submitted = Submitted { method: &self.method, target: &self.target };
        self.observation.finish(classify(self.status, None, Some(&page), submitted));
    }
}
