//! The approval record as stored: what was asked (the binding and the canonical arguments the
//! approver sees), who may decide, and where the record is in its life
//! (`Pending → Approved | Denied | Expired`, `Approved → Consumed`). Records are JSON in
//! `Table::Approvals`, keyed by approval id; every state change is a compare-and-swap on the bytes.

use super::{ApprovalError, MAX_CANONICAL_ARGS, args_digest};
use crate::inventory::canonical_json;
use serde::{Deserialize, Serialize};

/// Longest identifier field of a binding (user, session, site, tool, call id).
const MAX_FIELD: usize = 256;
/// Longest form action path.
const MAX_ACTION_PATH: usize = 2048;

/// What an approval is bound to. A token is valid for exactly these values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The user who asked the agent (their stable id).
    pub user: String,
    /// The user's session as a keyed digest ([`super::Approvals::session_digest`]), never the
    /// raw session id.
    pub session: String,
    /// The site the call runs on.
    pub site: String,
    /// The tool the model called.
    pub tool: String,
    /// SHA-256 (hex) of the canonical arguments ([`super::args_digest`]).
    pub args_digest: String,
    /// The model's tool call id.
    pub call_id: String,
    /// After this instant (UNIX seconds) the approval is worthless.
    pub expires_at: u64,
}

/// Who decides.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "group", rename_all = "snake_case")]
pub enum Approver {
    /// The user who asked confirms the call themself.
    User,
    /// A member of this group, other than the user who asked (four eyes).
    Group(String),
}

impl From<&policy::Approver> for Approver {
    fn from(approver: &policy::Approver) -> Self {
        match approver {
            policy::Approver::User => Self::User,
            policy::Approver::Group(group) => Self::Group(group.as_str().to_owned()),
        }
    }
}

/// The form a form tool submits; the proxy refuses agent-marked submissions to it without a
/// valid, unused approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormTarget {
    /// The effective method (upper case, after any method override).
    pub method: String,
    /// The action's path on the site (no query).
    pub action_path: String,
}

/// Where an approval is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Approved; the call may run once.
    Approved {
        /// The decider's user id.
        by: String,
        /// When (UNIX seconds).
        at: u64,
        /// The decider's comment (≤ 1 KiB).
        comment: String,
    },
    /// Refused.
    Denied {
        /// The decider's user id.
        by: String,
        /// When (UNIX seconds).
        at: u64,
        /// The decider's comment (≤ 1 KiB).
        comment: String,
    },
    /// The approved call ran (its token was consumed); a second use is a replay.
    Consumed {
        /// When (UNIX seconds).
        at: u64,
    },
    /// Nobody decided in time.
    Expired,
}

impl ApprovalState {
    /// A bounded label (audit, metrics, the panel).
    pub fn label(&self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved { .. } => "approved",
            Self::Denied { .. } => "denied",
            Self::Consumed { .. } => "consumed",
            Self::Expired => "expired",
        }
    }
}

/// One approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// Random, unguessable id (22 characters, base64url).
    pub id: String,
    /// What it is bound to.
    pub binding: Binding,
    /// The arguments exactly as they will execute (canonical JSON, ≤ 64 KiB): what the
    /// approver is shown.
    pub canonical_args: String,
    /// Who decides.
    pub approver: Approver,
    /// Why approval is needed (the policy's explanation, ≤ 1 KiB).
    pub reason: String,
    /// When it was asked for (UNIX seconds).
    pub requested_at: u64,
    /// Where it is in its life.
    pub state: ApprovalState,
    /// The form a form tool submits, if the tool is a form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<FormTarget>,
}

impl ApprovalRecord {
    /// Whether nobody may act on it any more at `now` (past its expiry).
    pub fn is_expired(&self, now: u64) -> bool {
        now >= self.binding.expires_at
    }
}

/// Refuses a request that is too large or inconsistent (a caller bug: the digest must be of the
/// arguments, which must be canonical; the approval must not be born expired).
pub(super) fn validate(
    binding: &Binding,
    canonical: &str,
    approver: &Approver,
    form: Option<&FormTarget>,
    now: u64,
) -> Result<(), ApprovalError> {
    if canonical.len() > MAX_CANONICAL_ARGS {
        return Err(ApprovalError::ArgumentsTooLarge);
    }
    let fields = [&binding.user, &binding.session, &binding.site, &binding.tool, &binding.call_id];
    if fields.iter().any(|field| field.is_empty() || field.len() > MAX_FIELD) {
        return Err(ApprovalError::Invalid("a binding field is empty or longer than 256 bytes"));
    }
    let parsed: serde_json::Value =
        serde_json::from_str(canonical).map_err(|_| ApprovalError::Invalid("arguments are not JSON"))?;
    if canonical_json(&parsed) != canonical {
        return Err(ApprovalError::Invalid("arguments are not canonical JSON"));
    }
    if binding.args_digest != args_digest(canonical) {
        return Err(ApprovalError::Invalid("args_digest is not the digest of the arguments"));
    }
    if binding.expires_at <= now {
        return Err(ApprovalError::Invalid("the approval would be born expired"));
    }
    if matches!(approver, Approver::Group(group) if group.is_empty() || group.len() > MAX_FIELD) {
        return Err(ApprovalError::Invalid("approver group name is empty or too long"));
    }
    if let Some(form) = form {
        let method_ok = !form.method.is_empty()
            && form.method.len() <= 16
            && form.method.bytes().all(|byte| byte.is_ascii_uppercase());
        if !method_ok || !form.action_path.starts_with('/') || form.action_path.len() > MAX_ACTION_PATH {
            return Err(ApprovalError::Invalid(
                "form target needs an upper-case method and an absolute path",
            ));
        }
    }
    Ok(())
}
