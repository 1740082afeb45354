//! Everything a running turn owns: who it belongs to, the policy view, the prepared prompt, the
//! model, the services it records and waits with, and its limits. Shared by the turn loop
//! (`turn.rs`) and the approval wait (`approval.rs`).

use super::deciders::Deciders;
use super::memory::Memory;
use super::prompt::Prepared;
use crate::approvals::{Approvals, GatedForms};
use crate::audit::AuditLog;
use crate::llm::LlmClient;
use crate::metrics::Metrics;
use crate::outcomes::Outcomes;
use crate::state::continuations::Continuations;
use crate::state::turns::Owner;
use policy::PolicyView;
use std::sync::Arc;
use std::time::Duration;

/// Everything a running turn needs, owned (it runs in its own task).
pub struct TurnContext {
    /// The turn's id.
    pub id: String,
    /// Whose turn it is.
    pub owner: Owner,
    /// The user's groups and email, for audit records.
    pub actor: (Option<String>, Vec<String>),
    /// The policy for this user on this site.
    pub view: PolicyView,
    /// The prompt and tools prepared for the model.
    pub prepared: Prepared,
    /// The model.
    pub llm: LlmClient,
    /// Approval records.
    pub approvals: Arc<Approvals>,
    /// Who else could decide a group approval (none without sign-in).
    pub deciders: Option<Deciders>,
    /// The form actions the proxy guards; an approval for a form tool adds its form.
    pub gated_forms: Arc<GatedForms>,
    /// What sites answered form submissions: a form tool's result comes from there.
    pub outcomes: Arc<Outcomes>,
    /// Where a turn whose page navigated away leaves its conversation for the next page.
    pub continuations: Arc<Continuations>,
    /// The conversation this turn goes on, and where it is kept for the next turn.
    pub memory: Memory,
    /// The audit log.
    pub audit: Arc<AuditLog>,
    /// Metrics.
    pub metrics: Metrics,
    /// Model rounds allowed.
    pub max_rounds: u32,
    /// How long a call may wait for a human.
    pub approval_timeout: Duration,
    /// How long the page may take to run a tool.
    pub tool_timeout: Duration,
    /// The request id of the `/turn` request.
    pub request_id: String,
}
