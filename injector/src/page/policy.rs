//! What the gateway tells a filtering rewriter about the user: which tools and contexts they may
//! see ([`Visibility`]) and which legacy forms become tools ([`FormRules`]), plus what the
//! rewriter reports back ([`PageSummary`]).
//!
//! The injector never decides policy itself; it asks the `Visibility` once per name it meets.

use std::sync::Arc;

use super::Outcome;
use super::form_rules::FormRules;

/// Where a tool on the page comes from, for the visibility decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolKind {
    /// A `<tool>` element (VOIX markup).
    Voix,
    /// A `<form toolname>` the page declared itself (WebMCP declarative).
    Declarative,
    /// A legacy form the proxy turned into a tool (a form rule or auto mode).
    Form,
}

/// Answers "may this user see this tool / context?" for one response.
///
/// Called only with names that match `^[A-Za-z0-9_.-]{1,128}$`; anything else is refused
/// without asking.
pub trait Visibility: Send + Sync {
    /// Whether the tool `name` of `kind` stays in the page.
    fn tool(&self, name: &str, kind: ToolKind) -> bool;
    /// Whether the `<context name>` element stays in the page.
    fn context(&self, name: &str) -> bool;
    /// Whether this user may have page tools here at all. Only then are elements whose name a
    /// framework binds (`<context :name>`) kept for the runtime to report; by default they are
    /// refused like nameless ones.
    fn page_tools_on(&self) -> bool {
        false
    }
}

/// Everything a filtering rewriter needs to know about the user and the site.
#[derive(Clone)]
pub struct PagePolicy {
    /// The user's visibility decisions.
    pub visibility: Arc<dyn Visibility>,
    /// The site's compiled form rules (and whether auto mode is on).
    pub forms: Arc<FormRules>,
}

impl std::fmt::Debug for PagePolicy {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PagePolicy").field("forms", &self.forms).finish_non_exhaustive()
    }
}

/// What the rewriter did to one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSummary {
    /// Whether the runtime script was placed.
    pub outcome: Outcome,
    /// `<tool>` elements and tool forms removed (or stripped of their tool attributes) because
    /// the user may not see them or their name is invalid.
    pub tools_removed: u32,
    /// `<context>` elements removed.
    pub contexts_removed: u32,
    /// Legacy forms turned into tools (by a rule or auto mode) that the user may see.
    pub forms_tooled: u32,
    /// Tool or context markup removed from comments, `<noscript>`, `srcdoc` and data scripts.
    pub leaks_removed: u32,
}

impl PageSummary {
    pub(super) fn new(outcome: Outcome) -> Self {
        Self { outcome, tools_removed: 0, contexts_removed: 0, forms_tooled: 0, leaks_removed: 0 }
    }
}
