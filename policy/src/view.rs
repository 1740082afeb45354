//! The per-request view: the policy narrowed to one (subject, site).
//!
//! Built once per page or agent turn, a [`PolicyView`] knows which rules apply, has already
//! decided the conditions that read only `user` and `site`, and holds the redaction set; its
//! tool and context questions then touch only the entries whose patterns can match the name.
//! It owns its data (an `Arc` of the compiled policy plus a few small vectors), so it can be
//! moved into a streaming rewriter or an async task freely.
//!
//! Catalog versus call: [`PolicyView::tool`] has no arguments. A condition that reads `args` is
//! then *pending*: a pending allow counts as allow, a pending deny or approve does not count, and
//! when nothing else matched a pending approve makes the tool ask for approval instead of falling
//! to a deny default. So the catalog shows a tool whenever some call to it could go through, and
//! for every `args`, [`PolicyView::tool_call`] is at least as strict as [`PolicyView::tool`]: a
//! `Deny` from `tool` means every call is denied.

use std::sync::{Arc, OnceLock};

use crate::compiled::Compiled;
use crate::condition::Bindings;
use crate::explain::ConditionOutcome;
use crate::ids::SiteId;
use crate::model::Effect;
use crate::redact::{Counts, Placeholders, Redacted, RedactionSet};
use crate::subject::Subject;

/// The policy for one subject on one site.
pub struct PolicyView {
    pub(crate) compiled: Arc<Compiled>,
    pub(crate) subject: Subject,
    pub(crate) site: SiteId,
    /// One bit per rule of the policy: does it apply to this subject on this site.
    applicable: Vec<u64>,
    /// The applicable rules, ascending.
    pub(crate) rules: Vec<usize>,
    /// How many tool and context entries the applicable rules have.
    pub(crate) tool_entries: usize,
    pub(crate) context_entries: usize,
    /// Outcomes of the conditions that read only `user` and `site`, by rule index (sorted).
    pub(crate) decided_conditions: Vec<(usize, ConditionOutcome)>,
    bindings: OnceLock<Result<Bindings, String>>,
    redactions: RedactionSet,
}

impl PolicyView {
    pub(crate) fn new(compiled: Arc<Compiled>, subject: &Subject, site: &SiteId) -> Self {
        let mut view = Self {
            applicable: vec![0; compiled.rules.len().div_ceil(64)],
            redactions: compiled.defaults.redact.clone(),
            compiled: Arc::clone(&compiled),
            subject: subject.clone(),
            site: site.clone(),
            decided_conditions: Vec::new(),
            bindings: OnceLock::new(),
            rules: Vec::new(),
            tool_entries: 0,
            context_entries: 0,
        };
        let mut fresh = Vec::new();
        compiled.rule_index.for_each(subject, site, |rule| {
            let (word, bit) = (rule / 64, 1u64 << (rule % 64));
            if view.applicable[word] & bit == 0 {
                view.applicable[word] |= bit;
                fresh.push(rule);
            }
        });
        fresh.sort_unstable();
        for &rule_index in &fresh {
            let rule = &compiled.rules[rule_index];
            view.tool_entries += rule.tool_entries.len();
            view.context_entries += rule.context_entries.len();
            view.redactions.extend_from(&rule.redact);
            if let Some(condition) = rule.when.as_ref().filter(|c| c.reads_only_subject()) {
                let result =
                    view.bindings().and_then(|bindings| condition.evaluate(&compiled.environment, bindings));
                let outcome = match result {
                    Ok(true) => ConditionOutcome::True,
                    Ok(false) => ConditionOutcome::False,
                    Err(error) => ConditionOutcome::Error(error),
                };
                view.decided_conditions.push((rule_index, outcome));
            }
        }
        view.rules = fresh;
        view
    }

    /// The subject this view is for.
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    /// The site this view is for.
    pub fn site(&self) -> &SiteId {
        &self.site
    }

    /// Whether any tool could be shown to this subject on this site. It is false only when
    /// tools no rule mentions are denied (site default, else `[defaults]`) and no applicable rule
    /// that is not already decided false allows or approves any tool: then page tools are off
    /// for this subject, and the gateway tells the browser so (`Permissions-Policy: tools=()`).
    pub fn offers_tools(&self) -> bool {
        let site_default = self.compiled.sites.get(&self.site).and_then(|site| site.unknown_tools);
        if site_default.unwrap_or(self.compiled.defaults.unknown_tools) != Effect::Deny {
            return true;
        }
        self.rules.iter().any(|&rule| {
            let decided_false = self
                .decided_conditions
                .binary_search_by_key(&rule, |(index, _)| *index)
                .is_ok_and(|found| self.decided_conditions[found].1 != ConditionOutcome::True);
            !decided_false
                && self.compiled.rules[rule]
                    .tool_entries
                    .clone()
                    .any(|entry| self.compiled.tool_entries[entry].list.effect() != Effect::Deny)
        })
    }

    /// The kinds to redact from everything this subject sends to the model on this site:
    /// `[defaults] redact` plus the `redact` of every applicable rule (whatever its condition).
    pub fn redactions(&self) -> &RedactionSet {
        &self.redactions
    }

    /// Redacts `text` (a context, a tool result, a user message) with this view's set, numbering
    /// placeholders in `scope` (one scope per turn or per `/v1` request).
    pub fn redact(&self, text: &str, scope: &mut Placeholders) -> Redacted {
        self.compiled.redactor.redact_in(text, &self.redactions, scope)
    }

    /// Redacts every string inside `value` (a tool result, an input schema) with this view's set.
    pub fn redact_json(&self, value: &mut serde_json::Value, scope: &mut Placeholders) -> Counts {
        self.compiled.redactor.redact_json(value, &self.redactions, scope)
    }

    pub(crate) fn applies(&self, rule: usize) -> bool {
        self.applicable.get(rule / 64).is_some_and(|word| word & (1u64 << (rule % 64)) != 0)
    }

    /// The CEL bindings for `user` and `site`, built on first use.
    pub(crate) fn bindings(&self) -> Result<&Bindings, String> {
        self.bindings.get_or_init(|| Bindings::new(&self.subject, &self.site)).as_ref().map_err(Clone::clone)
    }
}
