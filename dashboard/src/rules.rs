//! The inventory page's rule writer: one click becomes one `[[rule]]` in the policy text.
//!
//! Edits go through `toml_edit`, so every other byte of the document (comments, order,
//! formatting) survives and every value written is escaped by the TOML writer. Rule ids are
//! deterministic, so a second click on the same (site, tool, group) replaces the rule instead
//! of piling up contradictions. The result is a candidate: the gateway validates it with
//! `policy::Policy::parse` before storing it, like any dashboard edit.

use std::fmt::Write as _;

use thiserror::Error;
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, value};

/// Whether an inventory entry is a tool or a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A tool the agent may call.
    Tool,
    /// A context the agent may read.
    Context,
}

impl EntryKind {
    /// `tool` or `context` (the form value and the policy's list prefix without the `s`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Context => "context",
        }
    }

    /// Reads a form value (`tool` or `context`).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "tool" => Some(Self::Tool),
            "context" => Some(Self::Context),
            _ => None,
        }
    }

    fn table(self) -> &'static str {
        match self {
            Self::Tool => "tools",
            Self::Context => "contexts",
        }
    }
}

/// What the generated rule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// `tools.allow` / `contexts.allow`.
    Allow,
    /// `tools.approve` (the user approves their own call); tools only.
    Approve,
    /// `tools.deny` / `contexts.deny`.
    Deny,
}

impl Effect {
    /// `allow`, `approve` or `deny` (the form value and the list name).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Approve => "approve",
            Self::Deny => "deny",
        }
    }

    /// Reads a form value (`allow`, `approve` or `deny`).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "approve" => Some(Self::Approve),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// One click on the inventory page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedRule {
    /// The site id.
    pub site: String,
    /// Tool or context.
    pub kind: EntryKind,
    /// The tool's or context's exact name (never a pattern).
    pub name: String,
    /// A declared group, or `None` for everyone.
    pub group: Option<String>,
    /// What it does.
    pub effect: Effect,
}

/// Why the rule could not be written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RuleEditError {
    /// The policy text is not TOML (the policy in force always is; a stale draft may not be).
    #[error("the policy is not valid TOML: {0}")]
    Parse(String),
    /// The name is not a tool or context name; wildcards would widen the rule.
    #[error("{name:?} is not a tool or context name (1 to 128 of A-Z a-z 0-9 _ . -; no wildcards)")]
    InvalidName {
        /// The refused name.
        name: String,
    },
    /// The site is not a site id.
    #[error("{site:?} is not a site id (lower-case letters, digits, '-' and '_', at most 64)")]
    InvalidSite {
        /// The refused site.
        site: String,
    },
    /// Contexts are read or not; nobody approves a read.
    #[error("a context cannot require approval: choose allow or deny")]
    ApproveContext,
    /// Rules may only name groups in the top-level `groups` list; it is not extended silently.
    #[error(
        "group {group:?} is not declared in the policy's top-level `groups` list; declare it there first"
    )]
    UndeclaredGroup {
        /// The group.
        group: String,
    },
    /// `rule` exists but is not written as `[[rule]]` tables.
    #[error("`rule` is not written as [[rule]] tables; edit the policy by hand")]
    RulesNotTables,
}

/// The description every generated rule carries.
pub const DESCRIPTION: &str = "Written by the dashboard's inventory page";

/// The rule's deterministic id: `dashboard-{site}-{tool|context}-{name}-{group|everyone}-{hash}`.
///
/// Characters outside `A-Z a-z 0-9 _ . -` become `_`; the 8-hex-digit FNV-1a hash of the exact
/// (site, kind, name, group) keeps ids distinct where `-` in names or that replacement would
/// make two different rules read alike (`a-b` + `c` against `a` + `b-c`).
pub fn rule_id(rule: &GeneratedRule) -> String {
    let group = rule.group.as_deref();
    let mut id = String::from("dashboard");
    for part in [rule.site.as_str(), rule.kind.as_str(), rule.name.as_str(), group.unwrap_or("everyone")] {
        id.push('-');
        id.extend(
            part.chars()
                .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' }),
        );
    }
    let mut hash = Fnv::new();
    for part in [rule.site.as_str(), rule.kind.as_str(), rule.name.as_str()] {
        hash.write(part.as_bytes());
        hash.write(&[0]);
    }
    match group {
        Some(group) => {
            hash.write(b"g");
            hash.write(group.as_bytes());
        }
        None => hash.write(b"*"),
    }
    let folded = (hash.0 >> 32) ^ (hash.0 & 0xFFFF_FFFF);
    let _ = write!(id, "-{folded:08x}");
    id
}

/// `policy_text` with the rule for `rule` replaced in place (same id) or added after the last
/// `[[rule]]` (at the end when there is none). Nothing else in the text changes.
pub fn upsert(policy_text: &str, rule: &GeneratedRule) -> Result<String, RuleEditError> {
    if !is_name(&rule.name) {
        return Err(RuleEditError::InvalidName { name: rule.name.clone() });
    }
    if !is_site_id(&rule.site) {
        return Err(RuleEditError::InvalidSite { site: rule.site.clone() });
    }
    if rule.kind == EntryKind::Context && rule.effect == Effect::Approve {
        return Err(RuleEditError::ApproveContext);
    }
    let mut document: DocumentMut = policy_text
        .parse()
        .map_err(|error: toml_edit::TomlError| RuleEditError::Parse(one_line(&error.to_string())))?;
    if let Some(group) = &rule.group {
        let declared = document
            .get("groups")
            .and_then(Item::as_array)
            .is_some_and(|groups| groups.iter().any(|g| g.as_str() == Some(group.as_str())));
        if !declared {
            return Err(RuleEditError::UndeclaredGroup { group: group.clone() });
        }
    }
    let id = rule_id(rule);
    let rules = document.entry("rule").or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
    let rules = rules.as_array_of_tables_mut().ok_or(RuleEditError::RulesNotTables)?;
    let existing = rules.iter().position(|table| table.get("id").and_then(Item::as_str) == Some(id.as_str()));
    let mut table = rule_table(rule, &id);
    match existing {
        Some(index) => {
            if let Some(old) = rules.get(index) {
                *table.decor_mut() = old.decor().clone();
                table.set_position(old.position());
            }
            rules.replace(index, table);
        }
        None => {
            // A blank line before the new header, unless the document was empty. (The writer
            // ends the line before it, even when the text had no final newline.)
            table.decor_mut().set_prefix(if policy_text.trim().is_empty() { "" } else { "\n" });
            rules.push(table);
        }
    }
    Ok(document.to_string())
}

fn rule_table(rule: &GeneratedRule, id: &str) -> Table {
    let mut table = Table::new();
    table.insert("id", value(id));
    table.insert("description", value(DESCRIPTION));
    table.insert("sites", value(Array::from_iter([rule.site.as_str()])));
    if let Some(group) = &rule.group {
        table.insert("groups", value(Array::from_iter([group.as_str()])));
    }
    let mut list = Table::new();
    list.set_dotted(true);
    list.insert(rule.effect.as_str(), value(Array::from_iter([rule.name.as_str()])));
    table.insert(rule.kind.table(), Item::Table(list));
    table
}

/// A tool or context name as pages may declare it (docs/design.md §6); no glob characters.
fn is_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A site id as the gateway configuration accepts it.
fn is_site_id(site: &str) -> bool {
    (1..=64).contains(&site.len())
        && site.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_'))
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// 64-bit FNV-1a: tiny, stable across versions and platforms, good enough to keep ids apart.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests;
