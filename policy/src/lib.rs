//! Toolgate's policy engine: which tools and contexts an agent may see and call, per user and site.
//!
//! Pure by design (no I/O, no async, no clock, no randomness) so every decision is reproducible
//! from its inputs and testable alone. The gateway parses a policy document with
//! [`Policy::parse`], keeps the result behind an `Arc` (a reload that fails keeps the old one),
//! and per request builds a [`PolicyView`] for (subject, site) that answers tool, call and context
//! questions cheaply and redacts text. See `policy/README.md` for the document format.

#![forbid(unsafe_code)]

mod compile;
mod compiled;
mod condition;
mod decision;
mod document;
mod error;
mod evaluate;
mod explain;
mod glob;
mod ids;
mod index;
mod location;
mod model;
pub mod redact;
mod subject;
mod view;

use std::sync::Arc;

pub use decision::{Approver, ContextDecision, DenyReason, ToolDecision};
pub use error::{PolicyError, PolicyErrors};
pub use explain::{ConditionCheck, ConditionOutcome, DecidedBy, Explanation, Principal, RuleMatch, Target};
pub use glob::{Glob, GlobError};
pub use ids::{ContextName, GroupName, RedactorName, RuleId, SiteId, ToolName, UserId};
pub use model::{ConsequentialHint, Effect, List};
pub use redact::{Counts, Placeholders, Redacted, RedactionKind, RedactionSet, Redactor};
pub use subject::{Subject, ToolAnnotations, ToolRef, ToolSource};
pub use view::PolicyView;

/// A loaded, compiled policy. Cloning is cheap (one `Arc`).
#[derive(Clone)]
pub struct Policy {
    compiled: Arc<compiled::Compiled>,
}

impl Policy {
    /// Parses and compiles a policy document.
    ///
    /// `source` names the document in error messages (its file name); `known_sites` are the site
    /// ids of the gateway configuration, the only ones rules may name. Every semantic problem is
    /// reported (unknown sites and groups, bad globs, CEL and regexes, duplicate rule ids, bad
    /// values); a structural TOML problem (syntax, unknown key, wrong type) stops at the first.
    pub fn parse(text: &str, source: &str, known_sites: &[SiteId]) -> Result<Policy, PolicyErrors> {
        let compiled = compile::compile(text, source, known_sites)?;
        Ok(Policy { compiled: Arc::new(compiled) })
    }

    /// The view of this policy for `subject` on `site`.
    pub fn view(&self, subject: &Subject, site: &SiteId) -> PolicyView {
        PolicyView::new(Arc::clone(&self.compiled), subject, site)
    }

    /// The ids of the policy's rules, in document order.
    pub fn rule_ids(&self) -> impl Iterator<Item = &RuleId> {
        self.compiled.rules.iter().map(|rule| &rule.id)
    }

    /// The groups the document declares (`groups = [...]`), the only ones rules may name when
    /// the list is present.
    pub fn declared_groups(&self) -> impl Iterator<Item = &GroupName> {
        self.compiled.groups.iter()
    }

    /// The policy's redactor (built-in recognizers plus its `[[redactor]]` regexes).
    pub fn redactor(&self) -> &Redactor {
        &self.compiled.redactor
    }
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("rules", &self.compiled.rules.len()).finish_non_exhaustive()
    }
}

/// The gateway shares policies and views across tasks and threads.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Policy>();
    shareable::<PolicyView>();
};
