//! The audit event: typed and versioned, one per security-relevant step. Field names follow
//! the OpenTelemetry semantic conventions where they exist (`user.id`, `gen_ai.tool.name`,
//! `gen_ai.request.model`, `gen_ai.usage.*`), `toolgate.*` where they do not. Prompts,
//! arguments and page text never appear: only keyed digests of them (`digest.rs`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the event schema this code writes.
pub const EVENT_VERSION: u32 = 1;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A user signed in.
    Login,
    /// A sign-in failed (provider refusal, bad state, unusable identity).
    LoginFailed,
    /// A user signed out.
    Logout,
    /// A signed-in user was refused a site by its access rules.
    AccessDenied,
    /// A new policy took effect.
    PolicyReload,
    /// A new policy file was rejected; the old one stays in force.
    PolicyRejected,
    /// A reloaded configuration took effect (SIGHUP).
    ConfigReload,
    /// A reloaded configuration was rejected; the running one stays.
    ConfigRejected,
    /// The listener's certificate was reloaded.
    CertificateReload,
    /// A new certificate or key was rejected; the previous pair stays in use.
    CertificateRejected,
    /// A page's tools or contexts changed (page-layer issue).
    InventoryChange,
    /// Tools and contexts shown to a model (agent issue).
    CatalogExposure,
    /// A model call (agent issue).
    LlmCall,
    /// A tool call and its decision (agent issue).
    ToolCall,
    /// An approval was requested (agent issue).
    ApprovalRequest,
    /// An approval was decided (agent issue).
    ApprovalDecision,
    /// The gateway blocked something on the policy's behalf (agent issue).
    EnforcedBlock,
    /// What a site answered an agent's form submission (`accepted`, `rejected_by_site`, …).
    FormOutcome,
    /// A policy edit in the dashboard (dashboard issue).
    PolicyChange,
    /// Records before this point were pruned (written by `audit prune`).
    Checkpoint,
    /// A copy of the whole store was handed out (`toolgate store backup` on a running gateway).
    StoreBackup,
}

impl EventKind {
    /// Every kind, for filters (the dashboard's audit search).
    pub const ALL: [EventKind; 21] = [
        Self::Login,
        Self::LoginFailed,
        Self::Logout,
        Self::AccessDenied,
        Self::PolicyReload,
        Self::PolicyRejected,
        Self::ConfigReload,
        Self::ConfigRejected,
        Self::CertificateReload,
        Self::CertificateRejected,
        Self::InventoryChange,
        Self::CatalogExposure,
        Self::LlmCall,
        Self::ToolCall,
        Self::ApprovalRequest,
        Self::ApprovalDecision,
        Self::EnforcedBlock,
        Self::FormOutcome,
        Self::PolicyChange,
        Self::Checkpoint,
        Self::StoreBackup,
    ];

    /// The name used in records, exports and filters.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Login => "login",
            Self::LoginFailed => "login_failed",
            Self::Logout => "logout",
            Self::AccessDenied => "access_denied",
            Self::PolicyReload => "policy_reload",
            Self::PolicyRejected => "policy_rejected",
            Self::ConfigReload => "config_reload",
            Self::ConfigRejected => "config_rejected",
            Self::CertificateReload => "certificate_reload",
            Self::CertificateRejected => "certificate_rejected",
            Self::InventoryChange => "inventory_change",
            Self::CatalogExposure => "catalog_exposure",
            Self::LlmCall => "llm_call",
            Self::ToolCall => "tool_call",
            Self::ApprovalRequest => "approval_request",
            Self::ApprovalDecision => "approval_decision",
            Self::EnforcedBlock => "enforced_block",
            Self::FormOutcome => "form_outcome",
            Self::PolicyChange => "policy_change",
            Self::Checkpoint => "checkpoint",
            Self::StoreBackup => "store_backup",
        }
    }
}

/// Who acted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// The user id (`user.id`).
    #[serde(rename = "user.id")]
    pub user_id: String,
    /// The email address (`user.email`).
    #[serde(rename = "user.email", default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The user's groups (`user.roles` in OpenTelemetry terms).
    #[serde(rename = "user.roles", default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// One audit event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// Schema version.
    #[serde(rename = "toolgate.event.version")]
    pub version: u32,
    /// What happened; `None` only while being built.
    #[serde(rename = "toolgate.event.kind")]
    pub kind: Option<EventKind>,
    /// Who, when a user acted.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Actor>,
    /// A keyed digest of the session id (never the id itself: it is a bearer credential).
    #[serde(rename = "session.id", default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The request that caused it.
    #[serde(rename = "toolgate.request.id", default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The site.
    #[serde(rename = "toolgate.site", default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// The resource acted on: a tool (`gen_ai.tool.name`), context, policy file…
    #[serde(rename = "toolgate.resource", default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The tool, when the resource is one.
    #[serde(rename = "gen_ai.tool.name", default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The decision (`allow`, `deny`, `approve`, `success`, `failure`…).
    #[serde(rename = "toolgate.decision", default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Why, in a short fixed vocabulary.
    #[serde(rename = "toolgate.reason", default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The policy engine's explanation, when a policy decided.
    #[serde(rename = "toolgate.explanation", default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<serde_json::Value>,
    /// The model called.
    #[serde(rename = "gen_ai.request.model", default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens in.
    #[serde(rename = "gen_ai.usage.input_tokens", default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens out.
    #[serde(rename = "gen_ai.usage.output_tokens", default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Latency in milliseconds.
    #[serde(rename = "toolgate.latency_ms", default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// Keyed digests (HMAC-SHA256, hex) of texts that must not be stored: name → digest.
    #[serde(rename = "toolgate.digests", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub digests: BTreeMap<String, String>,
    /// Captured content, only where the operator enabled it for the site.
    #[serde(rename = "toolgate.content", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub content: BTreeMap<String, String>,
}

impl AuditEvent {
    /// A new event of `kind`.
    pub fn new(kind: EventKind) -> Self {
        Self { version: EVENT_VERSION, kind: Some(kind), ..Self::default() }
    }

    /// Sets the actor.
    pub fn actor(mut self, user_id: &str, email: Option<&str>, groups: &[String]) -> Self {
        self.actor = Some(Actor {
            user_id: user_id.to_owned(),
            email: email.map(str::to_owned),
            groups: groups.to_vec(),
        });
        self
    }

    /// Sets the site.
    pub fn site(mut self, site: &str) -> Self {
        self.site = Some(site.to_owned());
        self
    }

    /// Sets the request id.
    pub fn request(mut self, request_id: &str) -> Self {
        self.request_id = Some(request_id.to_owned());
        self
    }

    /// Sets the decision and its reason.
    pub fn decision(mut self, decision: &str, reason: &str) -> Self {
        self.decision = Some(decision.to_owned());
        self.reason = Some(reason.to_owned());
        self
    }

    /// Sets the resource.
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.to_owned());
        self
    }
}
