//! The state lol_html's output sink and the filtering handlers share for one page.
//!
//! Handlers and the sink are separate closures that lol_html owns, so they meet here, behind one
//! mutex (the rewriter must be `Send`; one rewriter runs on one thread at a time, so the lock is
//! never contended). Nothing here holds the lock across a call back into lol_html.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::form_names::NameRegistry;
use super::form_rules::FormRules;
use super::forms::state::FormState;
use super::leaks::scan::RawTextScan;
use super::output::Output;
use super::policy::{PagePolicy, PageSummary, Visibility};

/// Everything shared by the sink and the handlers of one rewriter.
#[derive(Default)]
pub(super) struct PageState {
    pub(super) output: Output,
    /// Present only for filtering rewriters.
    pub(super) filter: Option<FilterState>,
}

/// The per-page filtering state.
pub(super) struct FilterState {
    pub(super) visibility: Arc<dyn Visibility>,
    pub(super) rules: Arc<FormRules>,
    pub(super) names: NameRegistry,
    pub(super) counts: Counts,
    /// How many refused `<tool>`/`<context>` elements are open: their content is being removed,
    /// so nothing inside may feed a form description.
    pub(super) suppressed: u32,
    pub(super) forms: FormState,
    /// The raw-text element (`<noscript>`, data `<script>`, …) being scanned, if any.
    pub(super) raw_text: Option<RawTextScan>,
}

/// What was removed or added so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) tools_removed: u32,
    pub(super) contexts_removed: u32,
    pub(super) forms_tooled: u32,
    pub(super) leaks_removed: u32,
}

impl Counts {
    pub(super) fn summary(self, summary: PageSummary) -> PageSummary {
        PageSummary {
            tools_removed: self.tools_removed,
            contexts_removed: self.contexts_removed,
            forms_tooled: self.forms_tooled,
            leaks_removed: self.leaks_removed,
            ..summary
        }
    }
}

impl FilterState {
    pub(super) fn new(policy: &PagePolicy) -> Self {
        Self {
            visibility: Arc::clone(&policy.visibility),
            rules: Arc::clone(&policy.forms),
            names: NameRegistry::default(),
            counts: Counts::default(),
            suppressed: 0,
            forms: FormState::default(),
            raw_text: None,
        }
    }
}

/// The shared state as handlers hold it.
pub(super) type SharedState = Arc<Mutex<PageState>>;

/// Locks the shared state. A poisoned lock only means a panic elsewhere while it was held; the
/// rewriter is failing anyway, so carry on rather than panic inside lol_html.
pub(super) fn lock(state: &SharedState) -> MutexGuard<'_, PageState> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}
