//! Why an approval action was refused: one variant per cause, so audit records and the panel can
//! say exactly what went wrong, and a bounded `reason()` label for metrics.

use crate::store::StoreError;

/// Why an approval could not be requested, decided or consumed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// The store failed; the action is refused (503), never assumed done.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored record could not be read back.
    #[error("approval record {0} is unreadable")]
    Corrupt(String),
    /// No approval with that id.
    #[error("unknown approval")]
    Unknown,
    /// The token is not shaped like an approval token.
    #[error("malformed approval token")]
    MalformedToken,
    /// The submission carried no token where one is required.
    #[error("no approval token")]
    MissingToken,
    /// The token's tag does not match the approval it names (forged or tampered).
    #[error("approval token does not verify")]
    InvalidToken,
    /// The arguments differ from the approved ones.
    #[error("the arguments differ from the approved ones")]
    ArgumentsChanged,
    /// Another user than the one the approval was for.
    #[error("the approval belongs to another user")]
    OtherUser,
    /// Another session than the one the approval was for.
    #[error("the approval belongs to another session")]
    OtherSession,
    /// Another site than the one the approval was for.
    #[error("the approval is for another site")]
    OtherSite,
    /// Another tool than the approved one.
    #[error("the approval is for another tool")]
    OtherTool,
    /// Another tool call than the approved one.
    #[error("the approval is for another tool call")]
    OtherCall,
    /// The submission goes to another form than the approved one.
    #[error("the approval is for another form")]
    OtherForm,
    /// The approved call already ran once.
    #[error("the approval was already used")]
    Replayed,
    /// Past its expiry.
    #[error("the approval expired")]
    Expired,
    /// Still waiting for a decision.
    #[error("the call is not approved (yet)")]
    NotApproved,
    /// An approver refused the call.
    #[error("the call was denied")]
    Denied,
    /// Already decided; a decision is final.
    #[error("the approval was already decided")]
    AlreadyDecided,
    /// The decider may not decide this approval.
    #[error("not allowed to decide this approval")]
    NotAllowed,
    /// A group approval may not be decided by the user who asked for it.
    #[error("a group approval cannot be decided by the user who asked for it")]
    SelfApproval,
    /// The canonical arguments exceed 64 KiB.
    #[error("the arguments are too large to approve")]
    ArgumentsTooLarge,
    /// The comment exceeds 1 KiB.
    #[error("the comment is too long")]
    CommentTooLong,
    /// The request itself is inconsistent (a caller bug).
    #[error("invalid approval request: {0}")]
    Invalid(&'static str),
    /// The record kept changing under concurrent updates.
    #[error("the approval kept changing under concurrent updates")]
    Contended,
}

impl ApprovalError {
    /// Every value [`reason`](Self::reason) returns (metrics start each at 0).
    pub const REASONS: [&'static str; 24] = [
        "store_failed",
        "corrupt",
        "unknown_approval",
        "malformed_token",
        "missing_token",
        "invalid_token",
        "arguments_changed",
        "other_user",
        "other_session",
        "other_site",
        "other_tool",
        "other_call",
        "other_form",
        "replayed",
        "expired",
        "not_approved",
        "denied",
        "already_decided",
        "not_allowed",
        "self_approval",
        "arguments_too_large",
        "comment_too_long",
        "invalid_request",
        "contended",
    ];

    /// A bounded label for metrics and audit (`reason`).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Store(_) => "store_failed",
            Self::Corrupt(_) => "corrupt",
            Self::Unknown => "unknown_approval",
            Self::MalformedToken => "malformed_token",
            Self::MissingToken => "missing_token",
            Self::InvalidToken => "invalid_token",
            Self::ArgumentsChanged => "arguments_changed",
            Self::OtherUser => "other_user",
            Self::OtherSession => "other_session",
            Self::OtherSite => "other_site",
            Self::OtherTool => "other_tool",
            Self::OtherCall => "other_call",
            Self::OtherForm => "other_form",
            Self::Replayed => "replayed",
            Self::Expired => "expired",
            Self::NotApproved => "not_approved",
            Self::Denied => "denied",
            Self::AlreadyDecided => "already_decided",
            Self::NotAllowed => "not_allowed",
            Self::SelfApproval => "self_approval",
            Self::ArgumentsTooLarge => "arguments_too_large",
            Self::CommentTooLong => "comment_too_long",
            Self::Invalid(_) => "invalid_request",
            Self::Contended => "contended",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_lists_every_reason() {
        let every = [
            ApprovalError::Store(StoreError(String::new())),
            ApprovalError::Corrupt(String::new()),
            ApprovalError::Unknown,
            ApprovalError::MalformedToken,
            ApprovalError::MissingToken,
            ApprovalError::InvalidToken,
            ApprovalError::ArgumentsChanged,
            ApprovalError::OtherUser,
            ApprovalError::OtherSession,
            ApprovalError::OtherSite,
            ApprovalError::OtherTool,
            ApprovalError::OtherCall,
            ApprovalError::OtherForm,
            ApprovalError::Replayed,
            ApprovalError::Expired,
            ApprovalError::NotApproved,
            ApprovalError::Denied,
            ApprovalError::AlreadyDecided,
            ApprovalError::NotAllowed,
            ApprovalError::SelfApproval,
            ApprovalError::ArgumentsTooLarge,
            ApprovalError::CommentTooLong,
            ApprovalError::Invalid(""),
            ApprovalError::Contended,
        ];
        let reasons: Vec<_> = every.iter().map(ApprovalError::reason).collect();
        assert_eq!(reasons, ApprovalError::REASONS);
    }
}
