//! The compiled policy: typed defaults, rules and pattern entries, ready for evaluation.
//!
//! [`compile`](crate::compile) builds these once from a [`Document`](crate::document); they are
//! immutable afterwards and shared behind an `Arc` by every [`PolicyView`](crate::PolicyView), so
//! a reload swaps one pointer and in-flight requests keep the policy they started with.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

use crate::condition::Condition;
use crate::decision::Approver;
use crate::glob::Glob;
use crate::ids::{GroupName, RuleId, SiteId, UserId};
use crate::redact::RedactionSet;

/// What a rule list or a default does, ordered by strictness: deny beats approve beats allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Permit.
    Allow,
    /// Permit after a human approves.
    Approve,
    /// Refuse.
    Deny,
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Allow => "allow",
            Self::Approve => "approve",
            Self::Deny => "deny",
        })
    }
}

/// How a page's own `consequentialHint` is treated for tools no rule mentions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsequentialHint {
    /// A hinted tool needs the user's approval even where the default would allow it.
    Approve,
    /// The hint changes nothing.
    Ignore,
}

/// The rule list an entry came from, as written in the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum List {
    /// `tools.allow`.
    #[serde(rename = "tools.allow")]
    ToolsAllow,
    /// `tools.approve`.
    #[serde(rename = "tools.approve")]
    ToolsApprove,
    /// `tools.approve_by.tools`.
    #[serde(rename = "tools.approve_by")]
    ToolsApproveBy,
    /// `tools.deny`.
    #[serde(rename = "tools.deny")]
    ToolsDeny,
    /// `contexts.allow`.
    #[serde(rename = "contexts.allow")]
    ContextsAllow,
    /// `contexts.deny`.
    #[serde(rename = "contexts.deny")]
    ContextsDeny,
}

impl List {
    /// The effect of a match in this list.
    pub fn effect(self) -> Effect {
        match self {
            Self::ToolsAllow | Self::ContextsAllow => Effect::Allow,
            Self::ToolsApprove | Self::ToolsApproveBy => Effect::Approve,
            Self::ToolsDeny | Self::ContextsDeny => Effect::Deny,
        }
    }

    /// The list's key as written in a rule.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolsAllow => "tools.allow",
            Self::ToolsApprove => "tools.approve",
            Self::ToolsApproveBy => "tools.approve_by",
            Self::ToolsDeny => "tools.deny",
            Self::ContextsAllow => "contexts.allow",
            Self::ContextsDeny => "contexts.deny",
        }
    }
}

impl fmt::Display for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[defaults]`, with the built-in defaults filled in.
#[derive(Debug)]
pub(crate) struct Defaults {
    pub(crate) unknown_tools: Effect,
    /// Only `Allow` or `Deny`.
    pub(crate) unknown_contexts: Effect,
    pub(crate) consequential_hint: ConsequentialHint,
    pub(crate) redact: RedactionSet,
}

/// `[sites.<id>]`: overrides of the defaults for one site.
#[derive(Debug, Default)]
pub(crate) struct SiteDefaults {
    pub(crate) unknown_tools: Option<Effect>,
    pub(crate) unknown_contexts: Option<Effect>,
}

/// One compiled `[[rule]]`.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) id: RuleId,
    /// `None`: every site.
    pub(crate) sites: Option<Vec<SiteId>>,
    pub(crate) users: Vec<UserId>,
    pub(crate) groups: Vec<GroupName>,
    pub(crate) when: Option<Condition>,
    pub(crate) redact: RedactionSet,
    /// This rule's entries in `Compiled::tool_entries` (contiguous: compiled rule by rule).
    pub(crate) tool_entries: Range<usize>,
    /// This rule's entries in `Compiled::context_entries`.
    pub(crate) context_entries: Range<usize>,
}

/// One pattern of one rule list.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) rule: usize,
    pub(crate) list: List,
    pub(crate) glob: Glob,
    /// For approve lists: who approves.
    pub(crate) approver: Option<Approver>,
    /// For `approve_by`: its own condition, on top of the rule's.
    pub(crate) when: Option<Arc<Condition>>,
}
