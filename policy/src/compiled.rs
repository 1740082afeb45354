//! A compiled policy: the model's rules and entries (`model`) with the indexes built over them
//! (`index`), the redactor and the CEL environment. Built once by `compile`, then shared and
//! immutable.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ids::{GroupName, SiteId};
use crate::index::{PatternIndex, RuleIndex};
use crate::model::{Defaults, Entry, Rule, SiteDefaults};
use crate::redact::Redactor;

/// Everything a loaded policy holds; shared, immutable.
pub(crate) struct Compiled {
    pub(crate) defaults: Defaults,
    pub(crate) sites: HashMap<SiteId, SiteDefaults>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) tool_entries: Vec<Entry>,
    pub(crate) context_entries: Vec<Entry>,
    pub(crate) tool_index: PatternIndex,
    pub(crate) context_index: PatternIndex,
    pub(crate) rule_index: RuleIndex,
    pub(crate) redactor: Arc<Redactor>,
    pub(crate) environment: Arc<cel::Env>,
    /// The groups the document declares, in document order.
    pub(crate) groups: Vec<GroupName>,
}
