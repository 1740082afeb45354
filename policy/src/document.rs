//! The policy document exactly as written: raw serde structs for the TOML format.
//!
//! Nothing here is trusted or interpreted; `deny_unknown_fields` turns typos into errors, and
//! `Spanned` keeps each value's position so [`compile`](crate::compile) can report lines. Enum-like
//! settings stay strings here so that a bad value is one collected error, not a serde stop.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A whole policy file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Document {
    /// The identity-provider groups rules may name.
    #[serde(default)]
    pub(crate) groups: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) defaults: Option<DefaultsDocument>,
    /// Per-site defaults, keyed by site id.
    #[serde(default)]
    pub(crate) sites: BTreeMap<String, Spanned<SiteDocument>>,
    #[serde(default, rename = "rule")]
    pub(crate) rules: Vec<Spanned<RuleDocument>>,
    #[serde(default, rename = "redactor")]
    pub(crate) redactors: Vec<RedactorDocument>,
    /// `[redaction]`: how the built-in recognizers read text.
    #[serde(default)]
    pub(crate) redaction: Option<RedactionDocument>,
}

/// `[redaction]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedactionDocument {
    /// ISO 3166 regions whose national phone formats are read (numbers with `+` always are).
    pub(crate) phone_regions: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `[defaults]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DefaultsDocument {
    pub(crate) unknown_tools: Option<Spanned<String>>,
    pub(crate) unknown_contexts: Option<Spanned<String>>,
    pub(crate) consequential_hint: Option<Spanned<String>>,
    /// Redactions applied on every site for every user.
    #[serde(default)]
    pub(crate) redact: Vec<Spanned<String>>,
}

/// `[sites.<id>]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SiteDocument {
    pub(crate) unknown_tools: Option<Spanned<String>>,
    pub(crate) unknown_contexts: Option<Spanned<String>>,
}

/// One `[[rule]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleDocument {
    pub(crate) id: Spanned<String>,
    /// Free text for the dashboard.
    #[serde(default)]
    #[allow(dead_code)]
    pub(crate) description: Option<String>,
    /// Absent means every site.
    pub(crate) sites: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub(crate) users: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) groups: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) tools: ToolsDocument,
    #[serde(default)]
    pub(crate) contexts: ContextsDocument,
    #[serde(default)]
    pub(crate) redact: Vec<Spanned<String>>,
    /// A CEL condition gating the whole rule.
    pub(crate) when: Option<Spanned<String>>,
}

/// `tools.*` of a rule.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolsDocument {
    #[serde(default)]
    pub(crate) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) approve: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) deny: Vec<Spanned<String>>,
    pub(crate) approve_by: Option<ApproveByDocument>,
}

/// `tools.approve_by = { tools, group, when }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApproveByDocument {
    pub(crate) tools: Vec<Spanned<String>>,
    /// Absent means the user approves their own call.
    pub(crate) group: Option<Spanned<String>>,
    pub(crate) when: Option<Spanned<String>>,
}

/// `contexts.*` of a rule.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextsDocument {
    #[serde(default)]
    pub(crate) allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) deny: Vec<Spanned<String>>,
}

/// One `[[redactor]]`: an admin regex with a name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedactorDocument {
    pub(crate) name: Spanned<String>,
    pub(crate) pattern: Spanned<String>,
}
