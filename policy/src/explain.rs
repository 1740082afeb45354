//! Why a decision came out the way it did, for the CLI, the dashboard and the audit log.
//!
//! An [`Explanation`] lists every rule entry whose pattern matched (with the condition outcome
//! and whether it counted), what decided, and which conditions were left for call time. It is
//! plain data: `Display` renders it for people, `Serialize` for JSON.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::decision::Approver;
use crate::ids::{ContextName, GroupName, RuleId, SiteId, ToolName};
use crate::model::{Effect, List};

/// The explanation of one tool or context decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Explanation {
    /// The site the decision is for.
    pub site: SiteId,
    /// What was decided about.
    pub target: Target,
    /// What settled the decision.
    pub decided_by: DecidedBy,
    /// Every applicable rule entry whose pattern matched, in document order.
    pub matches: Vec<RuleMatch>,
}

impl Explanation {
    /// The matches whose condition was left for call time (catalog decisions only).
    pub fn pending(&self) -> impl Iterator<Item = &RuleMatch> {
        self.matches.iter().filter(|m| {
            matches!(m.condition, Some(ConditionCheck { outcome: ConditionOutcome::Pending, .. }))
        })
    }

    /// The ids of the rules that matched, in document order, without repeats.
    pub fn rule_ids(&self) -> Vec<&RuleId> {
        let mut ids: Vec<&RuleId> = Vec::new();
        for rule_match in &self.matches {
            if !ids.contains(&&rule_match.rule) {
                ids.push(&rule_match.rule);
            }
        }
        ids
    }
}

/// The tool or context a decision is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Target {
    /// A tool.
    Tool(ToolName),
    /// A context.
    Context(ContextName),
}

/// What settled a decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DecidedBy {
    /// The most specific matching entry of the winning effect.
    Rule {
        /// The rule.
        rule: RuleId,
        /// The list its pattern is in.
        list: List,
        /// The pattern.
        pattern: Arc<str>,
    },
    /// No rule applied; the site's `[sites.<id>]` default.
    SiteDefault {
        /// The site.
        site: SiteId,
        /// Its default.
        effect: Effect,
    },
    /// No rule applied; the policy's `[defaults]`.
    Default {
        /// The default.
        effect: Effect,
    },
    /// No rule applied; the default was `default`, and the tool's `consequentialHint` raised
    /// it to approval (`[defaults] consequential_hint = "approve"`).
    ConsequentialHint {
        /// The default before the hint.
        default: Effect,
    },
    /// A matching entry's condition failed to evaluate; the decision fails closed.
    Condition {
        /// The rule.
        rule: RuleId,
        /// The evaluation error.
        error: String,
    },
}

/// One matching entry of one applicable rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleMatch {
    /// The rule.
    pub rule: RuleId,
    /// The list the pattern is in.
    pub list: List,
    /// The pattern that matched.
    pub pattern: Arc<str>,
    /// The list's effect.
    pub effect: Effect,
    /// For approve lists: who approves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approver: Option<Approver>,
    /// Whether the rule names this site (rather than every site); specific rules win ties.
    pub site_specific: bool,
    /// How the rule reached the subject.
    pub principal: Principal,
    /// The rule's (and for `approve_by`, the entry's) condition, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionCheck>,
    /// Whether the entry counted towards the decision.
    pub applied: bool,
}

/// How a rule reached the subject.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum Principal {
    /// The rule names the user.
    User,
    /// The rule names one of the user's groups.
    Group(GroupName),
    /// The rule names no user or group: it applies to everyone.
    Everyone,
}

impl Principal {
    /// Specificity for tie-breaking: user over group over everyone.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Self::User => 2,
            Self::Group(_) => 1,
            Self::Everyone => 0,
        }
    }
}

/// A condition and how it came out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConditionCheck {
    /// The CEL source.
    pub source: String,
    /// The outcome.
    pub outcome: ConditionOutcome,
}

/// How a condition came out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "error", rename_all = "snake_case")]
pub enum ConditionOutcome {
    /// It held: the entry applies.
    True,
    /// It did not hold: the entry does not apply.
    False,
    /// It reads `args` and the decision has none (a catalog decision): decided at call time.
    Pending,
    /// It failed to evaluate: the decision is deny.
    Error(String),
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Tool(name) => writeln!(f, "tool {name} on site {}", self.site)?,
            Target::Context(name) => writeln!(f, "context {name} on site {}", self.site)?,
        }
        writeln!(f, "decided by: {}", self.decided_by)?;
        if self.matches.is_empty() {
            return writeln!(f, "matching rules: none");
        }
        writeln!(f, "matching rules:")?;
        for rule_match in &self.matches {
            writeln!(f, "  {rule_match}")?;
        }
        Ok(())
    }
}

impl fmt::Display for DecidedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rule { rule, list, pattern } => write!(f, "rule {rule}, {list} {pattern:?}"),
            Self::SiteDefault { site, effect } => {
                write!(f, "no rule mentions it; site {site} default is {effect}")
            }
            Self::Default { effect } => write!(f, "no rule mentions it; policy default is {effect}"),
            Self::ConsequentialHint { default } => write!(
                f,
                "no rule mentions it; the page marks it consequential, so approve (default was {default})"
            ),
            Self::Condition { rule, error } => {
                write!(f, "condition of rule {rule} failed, failing closed: {error}")
            }
        }
    }
}

impl fmt::Display for RuleMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {}: {} {:?} -> {}", self.rule, self.list, self.pattern, self.effect)?;
        if let Some(approver) = &self.approver {
            write!(f, " by {approver}")?;
        }
        let site = if self.site_specific { "this site" } else { "every site" };
        let principal = match &self.principal {
            Principal::User => "the user".to_owned(),
            Principal::Group(group) => format!("group {group}"),
            Principal::Everyone => "everyone".to_owned(),
        };
        write!(f, " [{site}, {principal}]")?;
        if let Some(check) = &self.condition {
            let outcome = match &check.outcome {
                ConditionOutcome::True => "true".to_owned(),
                ConditionOutcome::False => "false".to_owned(),
                ConditionOutcome::Pending => "decided at call time".to_owned(),
                ConditionOutcome::Error(error) => format!("error: {error}"),
            };
            write!(f, " when `{}`: {outcome}", check.source)?;
        }
        if !self.applied {
            f.write_str(" (not applied)")?;
        }
        Ok(())
    }
}
