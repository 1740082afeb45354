//! What a decision is asked about: the subject (who), the tool (what it calls).
//!
//! These are the engine's inputs, filled by the gateway from SSO claims and from the page's
//! catalog. The engine trusts the subject (the gateway authenticated it) but treats a tool's
//! annotations as the page's claims, used only to make defaults stricter, never looser.

use serde::{Deserialize, Serialize};

use crate::ids::{GroupName, ToolName, UserId};

/// The signed-in person a decision is for, as the identity provider describes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// The user's stable id.
    pub user: UserId,
    /// The user's email address, when the identity provider gives one.
    #[serde(default)]
    pub email: Option<String>,
    /// The identity-provider groups the user belongs to.
    #[serde(default)]
    pub groups: Vec<GroupName>,
}

/// The page dialect a tool was declared in; carried for explanations and conditions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolSource {
    /// A VOIX `<tool>` element.
    Voix,
    /// A WebMCP `registerTool` call (`document.modelContext` or `navigator.modelContext`).
    WebmcpImperative,
    /// A WebMCP declarative `<form toolname>`.
    WebmcpDeclarative,
    /// A legacy form the injector rewrote into a tool.
    Form,
    /// A component registry (`window.__ci4a__`) tool.
    Component,
    /// Not known (an API client that did not say).
    #[default]
    Unknown,
}

impl ToolSource {
    /// The dialect's name as used in CEL conditions (`tool.source`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Voix => "voix",
            Self::WebmcpImperative => "webmcp_imperative",
            Self::WebmcpDeclarative => "webmcp_declarative",
            Self::Form => "form",
            Self::Component => "component",
            Self::Unknown => "unknown",
        }
    }
}

/// The hints a page attaches to a tool (WebMCP `readOnlyHint`, `consequentialHint`,
/// `untrustedContentHint`). They are claims by the page, not facts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// `readOnlyHint`: the page says the tool changes nothing.
    #[serde(default)]
    pub read_only: bool,
    /// `consequentialHint`: the page says the tool has effects a human should confirm.
    #[serde(default)]
    pub consequential: bool,
    /// `untrustedContentHint`: the tool's results carry content from outside the site.
    #[serde(default)]
    pub untrusted_content: bool,
}

/// A tool as a decision sees it: its name, dialect and annotations.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolRef {
    /// The tool's name.
    pub name: ToolName,
    /// The dialect it was declared in.
    #[serde(default)]
    pub source: ToolSource,
    /// The page's hints about it.
    #[serde(default)]
    pub annotations: ToolAnnotations,
}

impl ToolRef {
    /// A tool with the given name, unknown dialect and no annotations.
    pub fn named(name: impl Into<ToolName>) -> Self {
        Self { name: name.into(), source: ToolSource::Unknown, annotations: ToolAnnotations::default() }
    }
}
