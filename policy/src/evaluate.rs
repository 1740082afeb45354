//! Decisions: matching entries, conditions, precedence, defaults.
//!
//! Deny beats approve beats allow. Among matches of the winning effect the most specific one is
//! reported as deciding: a rule naming the site beats one for every site, then a rule naming the
//! user beats one naming a group beats one for everyone, then document order. For approvals a
//! group approver beats self-approval (the stricter gate wins). Any matching entry whose
//! condition fails to evaluate makes the decision deny: conditions fail closed.

use std::cmp::Reverse;

use serde_json::Value as Json;

use crate::condition::{Bindings, Condition};
use crate::decision::{Approver, ContextDecision, DenyReason, ToolDecision};
use crate::explain::{
    ConditionCheck, ConditionOutcome, DecidedBy, Explanation, Principal, RuleMatch, Target,
};
use crate::ids::ContextName;
use crate::model::{ConsequentialHint, Effect, Entry};
use crate::subject::ToolRef;
use crate::view::PolicyView;

/// The decisions a view gives, evaluated here so that `view` does not import `evaluate`.
impl PolicyView {
    /// The catalog decision for `tool`, without arguments (see the `view` module docs for
    /// pending conditions). Use it to filter what the page and the model are shown.
    pub fn tool(&self, tool: &ToolRef) -> (ToolDecision, Explanation) {
        self::tool(self, tool, None)
    }

    /// The enforcement decision for a call of `tool` with `args`; every condition is evaluated,
    /// and one that fails to evaluate denies.
    pub fn tool_call(&self, tool: &ToolRef, args: &Json) -> (ToolDecision, Explanation) {
        self::tool(self, tool, Some(args))
    }

    /// The decision for a context, with the redactions to apply when allowed.
    pub fn context(&self, name: &ContextName) -> (ContextDecision, Explanation) {
        self::context(self, name)
    }
}

/// The tool decision; `args` is `None` for the catalog, `Some` at the enforcement point.
pub(crate) fn tool(view: &PolicyView, tool: &ToolRef, args: Option<&Json>) -> (ToolDecision, Explanation) {
    let compiled = &view.compiled;
    let mut scope = Scope::new(view, Call::Tool { tool, args });
    let name = tool.name.as_str();
    let buckets = compiled.tool_index.buckets(name);
    let rule_entries = |rule: usize| compiled.rules[rule].tool_entries.clone();
    let matches: Vec<RuleMatch> =
        matching(view, &compiled.tool_entries, &buckets, view.tool_entries, rule_entries, name)
            .into_iter()
            .map(|entry| scope.check(entry))
            .collect();

    let (decision, decided_by) = decide_tool(view, tool, args.is_none(), &matches);
    let explanation =
        Explanation { site: view.site.clone(), target: Target::Tool(tool.name.clone()), decided_by, matches };
    (decision, explanation)
}

/// The context decision. Contexts have no call: `tool` is null and `args` an empty map.
pub(crate) fn context(view: &PolicyView, name: &ContextName) -> (ContextDecision, Explanation) {
    let compiled = &view.compiled;
    let mut scope = Scope::new(view, Call::Context);
    let buckets = compiled.context_index.buckets(name.as_str());
    let rule_entries = |rule: usize| compiled.rules[rule].context_entries.clone();
    let matches: Vec<RuleMatch> = matching(
        view,
        &compiled.context_entries,
        &buckets,
        view.context_entries,
        rule_entries,
        name.as_str(),
    )
    .into_iter()
    .map(|entry| scope.check(entry))
    .collect();

    let (decision, decided_by) = if let Some((rule, error)) = first_error(&matches) {
        let reason = DenyReason::Condition { rule: rule.clone(), error: error.clone() };
        (ContextDecision::Deny { reason }, DecidedBy::Condition { rule, error })
    } else if let Some(deny) = most_specific(&matches, Effect::Deny) {
        let reason = DenyReason::Rule { rule: deny.rule.clone(), pattern: deny.pattern.clone() };
        (ContextDecision::Deny { reason }, decided_by_rule(deny))
    } else if let Some(allow) = most_specific(&matches, Effect::Allow) {
        let redactions = view.redactions().clone();
        (ContextDecision::Allow { redactions }, decided_by_rule(allow))
    } else {
        let site_default = compiled.sites.get(&view.site).and_then(|s| s.unknown_contexts);
        let effect = site_default.unwrap_or(compiled.defaults.unknown_contexts);
        let decided_by = default_source(view, site_default.is_some(), effect);
        let decision = match effect {
            Effect::Allow => ContextDecision::Allow { redactions: view.redactions().clone() },
            Effect::Approve | Effect::Deny => {
                ContextDecision::Deny { reason: default_reason(view, site_default.is_some()) }
            }
        };
        (decision, decided_by)
    };
    let explanation =
        Explanation { site: view.site.clone(), target: Target::Context(name.clone()), decided_by, matches };
    (decision, explanation)
}

/// The entries of applicable rules whose pattern matches `name`, in document order.
///
/// Two ways to find them, whichever touches fewer entries: the index buckets for `name`
/// (filtered by the view's applicability bits), or every entry of the view's applicable rules.
/// A pattern shared by most rules (`delete_*`) makes the buckets large while a view usually
/// holds a few dozen rules; a rare name makes the buckets tiny.
fn matching<'e>(
    view: &PolicyView,
    entries: &'e [Entry],
    buckets: &[&[usize]],
    view_entries: usize,
    rule_entries: impl Fn(usize) -> std::ops::Range<usize>,
    name: &str,
) -> Vec<&'e Entry> {
    let bucket_entries: usize = buckets.iter().map(|bucket| bucket.len()).sum();
    if view_entries < bucket_entries {
        return view
            .rules
            .iter()
            .flat_map(|&rule| entries.get(rule_entries(rule)).unwrap_or_default())
            .filter(|entry| entry.glob.matches(name))
            .collect();
    }
    let mut found: Vec<usize> = buckets
        .iter()
        .flat_map(|bucket| bucket.iter().copied())
        .filter(|&index| {
            entries.get(index).is_some_and(|entry| view.applies(entry.rule) && entry.glob.matches(name))
        })
        .collect();
    found.sort_unstable();
    found.into_iter().filter_map(|index| entries.get(index)).collect()
}

fn decide_tool(
    view: &PolicyView,
    tool: &ToolRef,
    catalog: bool,
    matches: &[RuleMatch],
) -> (ToolDecision, DecidedBy) {
    if let Some((rule, error)) = first_error(matches) {
        let reason = DenyReason::Condition { rule: rule.clone(), error: error.clone() };
        return (ToolDecision::Deny { reason }, DecidedBy::Condition { rule, error });
    }
    if let Some(deny) = most_specific(matches, Effect::Deny) {
        let reason = DenyReason::Rule { rule: deny.rule.clone(), pattern: deny.pattern.clone() };
        return (ToolDecision::Deny { reason }, decided_by_rule(deny));
    }
    if let Some(approve) = approval(matches.iter().filter(|m| m.applied)) {
        let approver = approve.approver.clone().unwrap_or(Approver::User);
        return (ToolDecision::AskApproval { approver }, decided_by_rule(approve));
    }
    if let Some(allow) = most_specific(matches, Effect::Allow) {
        return (ToolDecision::Allow, decided_by_rule(allow));
    }
    let pending = |effect| matches.iter().filter(move |m| catalog && m.effect == effect && is_pending(m));
    if let Some(allow) = best(pending(Effect::Allow)) {
        return (ToolDecision::Allow, decided_by_rule(allow));
    }

    let compiled = &view.compiled;
    let site_default = compiled.sites.get(&view.site).and_then(|s| s.unknown_tools);
    let default = site_default.unwrap_or(compiled.defaults.unknown_tools);
    if default == Effect::Deny {
        if let Some(approve) = approval(pending(Effect::Approve)) {
            let approver = approve.approver.clone().unwrap_or(Approver::User);
            return (ToolDecision::AskApproval { approver }, decided_by_rule(approve));
        }
        let reason = default_reason(view, site_default.is_some());
        return (ToolDecision::Deny { reason }, default_source(view, site_default.is_some(), default));
    }
    let hinted =
        compiled.defaults.consequential_hint == ConsequentialHint::Approve && tool.annotations.consequential;
    match default {
        Effect::Allow if hinted => {
            (ToolDecision::AskApproval { approver: Approver::User }, DecidedBy::ConsequentialHint { default })
        }
        Effect::Allow => (ToolDecision::Allow, default_source(view, site_default.is_some(), default)),
        _ => (
            ToolDecision::AskApproval { approver: Approver::User },
            default_source(view, site_default.is_some(), default),
        ),
    }
}

fn default_source(view: &PolicyView, from_site: bool, effect: Effect) -> DecidedBy {
    if from_site {
        DecidedBy::SiteDefault { site: view.site.clone(), effect }
    } else {
        DecidedBy::Default { effect }
    }
}

fn default_reason(view: &PolicyView, from_site: bool) -> DenyReason {
    if from_site { DenyReason::SiteDefault { site: view.site.clone() } } else { DenyReason::Default }
}

fn decided_by_rule(rule_match: &RuleMatch) -> DecidedBy {
    DecidedBy::Rule {
        rule: rule_match.rule.clone(),
        list: rule_match.list,
        pattern: rule_match.pattern.clone(),
    }
}

fn first_error(matches: &[RuleMatch]) -> Option<(crate::ids::RuleId, String)> {
    matches.iter().find_map(|m| match &m.condition {
        Some(ConditionCheck { outcome: ConditionOutcome::Error(error), .. }) => {
            Some((m.rule.clone(), error.clone()))
        }
        _ => None,
    })
}

fn is_pending(rule_match: &RuleMatch) -> bool {
    matches!(rule_match.condition, Some(ConditionCheck { outcome: ConditionOutcome::Pending, .. }))
}

/// The most specific applied match with `effect`.
fn most_specific(matches: &[RuleMatch], effect: Effect) -> Option<&RuleMatch> {
    best(matches.iter().filter(|m| m.applied && m.effect == effect))
}

/// The approval to ask for among `candidates`: group approvers first, then the most specific.
fn approval<'m>(candidates: impl Iterator<Item = &'m RuleMatch>) -> Option<&'m RuleMatch> {
    candidates
        .filter(|m| m.effect == Effect::Approve)
        .enumerate()
        .min_by_key(|(order, m)| {
            let by_group = matches!(m.approver, Some(Approver::Group(_)));
            (Reverse(by_group), Reverse(m.site_specific), Reverse(m.principal.rank()), *order)
        })
        .map(|(_, m)| m)
}

/// The most specific of `candidates`; document order breaks ties.
fn best<'m>(candidates: impl Iterator<Item = &'m RuleMatch>) -> Option<&'m RuleMatch> {
    candidates
        .enumerate()
        .min_by_key(|(order, m)| (Reverse(m.site_specific), Reverse(m.principal.rank()), *order))
        .map(|(_, m)| m)
}

/// What a decision is about, for condition bindings.
#[derive(Clone, Copy)]
enum Call<'a> {
    Tool { tool: &'a ToolRef, args: Option<&'a Json> },
    Context,
}

/// Per-decision state: lazily built bindings and the outcomes of rule conditions already seen.
struct Scope<'a> {
    view: &'a PolicyView,
    call: Call<'a>,
    bindings: Option<Result<Bindings, String>>,
    /// Outcomes by condition source: within one decision the same text gives the same result.
    outcomes: Vec<(&'a str, ConditionOutcome)>,
}

impl<'a> Scope<'a> {
    fn new(view: &'a PolicyView, call: Call<'a>) -> Self {
        Self { view, call, bindings: None, outcomes: Vec::new() }
    }

    /// The match record for `entry`, with its conditions evaluated.
    fn check(&mut self, entry: &'a Entry) -> RuleMatch {
        let view = self.view;
        let compiled = &view.compiled;
        let rule = &compiled.rules[entry.rule];
        let rule_check = rule.when.as_ref().map(|condition| ConditionCheck {
            source: condition.source().to_owned(),
            outcome: self.rule_outcome(entry.rule, condition),
        });
        let entry_check = entry.when.as_ref().map(|condition| ConditionCheck {
            source: condition.source().to_owned(),
            outcome: self.outcome(condition),
        });
        // Both conditions gate the entry: report the one that decides (an error first, then a
        // false, then a pending), else the entry's own, else the rule's.
        let condition = match (rule_check, entry_check) {
            (Some(rule), Some(entry)) => Some(combine(rule, entry)),
            (rule, entry) => entry.or(rule),
        };
        let applied = condition.as_ref().is_none_or(|c| c.outcome == ConditionOutcome::True);
        let subject = &view.subject;
        let principal = if rule.users.contains(&subject.user) {
            Principal::User
        } else if let Some(group) = rule.groups.iter().find(|g| subject.groups.contains(g)) {
            Principal::Group(group.clone())
        } else {
            Principal::Everyone
        };
        RuleMatch {
            rule: rule.id.clone(),
            list: entry.list,
            pattern: entry.glob.shared(),
            effect: entry.list.effect(),
            approver: entry.approver.clone(),
            site_specific: rule.sites.is_some(),
            principal,
            condition,
            applied,
        }
    }

    fn rule_outcome(&mut self, rule: usize, condition: &'a Condition) -> ConditionOutcome {
        if let Ok(found) = self.view.decided_conditions.binary_search_by_key(&rule, |(r, _)| *r) {
            return self.view.decided_conditions[found].1.clone();
        }
        self.outcome(condition)
    }

    fn outcome(&mut self, condition: &'a Condition) -> ConditionOutcome {
        if condition.reads_args() && matches!(self.call, Call::Tool { args: None, .. }) {
            return ConditionOutcome::Pending;
        }
        if let Some((_, outcome)) = self.outcomes.iter().find(|(source, _)| *source == condition.source()) {
            return outcome.clone();
        }
        let outcome = self.evaluate(condition);
        self.outcomes.push((condition.source(), outcome.clone()));
        outcome
    }

    fn evaluate(&mut self, condition: &Condition) -> ConditionOutcome {
        let environment = &self.view.compiled.environment;
        let (view, call) = (self.view, self.call);
        let bindings = self.bindings.get_or_insert_with(|| {
            let base = view.bindings()?;
            match call {
                Call::Tool { tool, args: Some(args) } => base.with_tool(tool)?.with_args(args),
                Call::Tool { tool, args: None } => base.with_tool(tool),
                Call::Context => base.with_empty_args(),
            }
        });
        let result = match bindings {
            Ok(bindings) => condition.evaluate(environment, bindings),
            Err(error) => Err(error.clone()),
        };
        match result {
            Ok(true) => ConditionOutcome::True,
            Ok(false) => ConditionOutcome::False,
            Err(error) => ConditionOutcome::Error(error),
        }
    }
}

fn combine(rule: ConditionCheck, entry: ConditionCheck) -> ConditionCheck {
    let severity = |outcome: &ConditionOutcome| match outcome {
        ConditionOutcome::Error(_) => 3,
        ConditionOutcome::False => 2,
        ConditionOutcome::Pending => 1,
        ConditionOutcome::True => 0,
    };
    if severity(&rule.outcome) > severity(&entry.outcome) { rule } else { entry }
}

#[cfg(test)]
mod tests {
    use crate::{DecidedBy, Policy, SiteId, Subject, ToolDecision, ToolRef, UserId};

    /// Many rules elsewhere share `delete_*`, so the view's own entries are scanned instead of
    /// the index bucket; a rare name takes the bucket. Both must give document order.
    #[test]
    fn both_lookup_strategies_agree() {
        let mut text = String::new();
        for rule in 0..40 {
            let site = if rule % 10 == 3 { "hr" } else { "wiki" };
            text.push_str(&format!(
                "[[rule]]\nid = \"r{rule}\"\nsites = [\"{site}\"]\ntools.allow = [\"delete_*\", \"only_{rule}\"]\n"
            ));
        }
        text.push_str("[[rule]]\nid = \"deny\"\nsites = [\"hr\"]\ntools.deny = [\"delete_all\"]\n");
        let sites = [SiteId::new("hr"), SiteId::new("wiki")];
        let policy = Policy::parse(&text, "t.toml", &sites).unwrap_or_else(|e| panic!("{e}"));
        let subject = Subject { user: UserId::new("u"), email: None, groups: vec![] };
        let view = policy.view(&subject, &sites[0]);

        let (decision, explanation) = view.tool(&ToolRef::named("delete_one"));
        assert_eq!(decision, ToolDecision::Allow);
        let ids: Vec<&str> = explanation.rule_ids().iter().map(|id| id.as_str()).collect();
        assert_eq!(ids, ["r3", "r13", "r23", "r33"]);

        let (decision, explanation) = view.tool(&ToolRef::named("delete_all"));
        assert!(decision.is_deny());
        assert!(
            matches!(explanation.decided_by, DecidedBy::Rule { ref rule, .. } if rule.as_str() == "deny")
        );

        let (decision, _) = view.tool(&ToolRef::named("only_13"));
        assert_eq!(decision, ToolDecision::Allow);
        let (decision, _) = view.tool(&ToolRef::named("only_14"));
        assert!(decision.is_deny());
    }
}
