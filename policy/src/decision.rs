//! The answers the engine gives: tool and context decisions, approvers and deny reasons.
//!
//! Decisions are small values the gateway acts on; the *why* lives beside them in an
//! [`Explanation`](crate::Explanation). A deny reason also has a bounded [`DenyReason::label`]
//! so it can be a metric label without leaking rule ids or user data.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::ids::{GroupName, RuleId, SiteId};
use crate::redact::RedactionSet;

/// What the agent may do with a tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ToolDecision {
    /// The tool may be shown and called.
    Allow,
    /// A call needs a human's approval first.
    AskApproval {
        /// Who must approve.
        approver: Approver,
    },
    /// The tool must be hidden and any call refused.
    Deny {
        /// Why.
        reason: DenyReason,
    },
}

impl ToolDecision {
    /// The decision's name, for logs and metric labels: `allow`, `ask_approval` or `deny`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::AskApproval { .. } => "ask_approval",
            Self::Deny { .. } => "deny",
        }
    }

    /// True when the tool must not be shown or called.
    pub fn is_deny(&self) -> bool {
        matches!(self, Self::Deny { .. })
    }
}

impl fmt::Display for ToolDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allow => f.write_str("allow"),
            Self::AskApproval { approver } => write!(f, "ask approval from {approver}"),
            Self::Deny { reason } => write!(f, "deny ({reason})"),
        }
    }
}

/// What the agent may read of a context.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ContextDecision {
    /// The context may reach the model after these redactions.
    Allow {
        /// The recognizers to apply to the context's text.
        redactions: RedactionSet,
    },
    /// The context must be removed.
    Deny {
        /// Why.
        reason: DenyReason,
    },
}

impl ContextDecision {
    /// The decision's name, for logs and metric labels: `allow` or `deny`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Allow { .. } => "allow",
            Self::Deny { .. } => "deny",
        }
    }
}

impl fmt::Display for ContextDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allow { redactions } if redactions.is_empty() => f.write_str("allow"),
            Self::Allow { redactions } => write!(f, "allow, redacting {redactions}"),
            Self::Deny { reason } => write!(f, "deny ({reason})"),
        }
    }
}

/// Who approves a safety-critical call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "group", rename_all = "snake_case")]
pub enum Approver {
    /// The user who asked the agent confirms the call themself.
    User,
    /// A member of this group must approve (in the dashboard).
    Group(GroupName),
}

impl fmt::Display for Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::User => f.write_str("the user"),
            Self::Group(group) => write!(f, "group {group}"),
        }
    }
}

/// Why something was denied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DenyReason {
    /// A rule's `tools.deny` or `contexts.deny` pattern matched.
    Rule {
        /// The rule.
        rule: RuleId,
        /// The pattern that matched.
        pattern: Arc<str>,
    },
    /// No rule mentioned it and the site's `[sites.<id>]` default is deny.
    SiteDefault {
        /// The site.
        site: SiteId,
    },
    /// No rule mentioned it and the policy's `[defaults]` is deny.
    Default,
    /// A rule's condition could not be evaluated; the engine fails closed.
    Condition {
        /// The rule whose condition failed.
        rule: RuleId,
        /// The evaluation error.
        error: String,
    },
}

impl DenyReason {
    /// A bounded, data-free label for metrics: `rule`, `site_default`, `default`, `condition`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Rule { .. } => "rule",
            Self::SiteDefault { .. } => "site_default",
            Self::Default => "default",
            Self::Condition { .. } => "condition",
        }
    }
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rule { rule, pattern } => write!(f, "rule {rule} denies {pattern:?}"),
            Self::SiteDefault { site } => write!(f, "not mentioned by any rule; site {site} default is deny"),
            Self::Default => f.write_str("not mentioned by any rule; policy default is deny"),
            Self::Condition { rule, error } => {
                write!(f, "condition of rule {rule} failed: {error}")
            }
        }
    }
}
