//! Who may do what on the dashboard. Three roles, each from configured groups: administrators
//! (everything), auditors (read everything, change nothing) and approvers (the approvals queue).
//! The navigation hides what a role may not open, but this is where it is refused.

use crate::config::DashboardConfig;
use crate::sso::session::SessionId;
use dashboard::Roles;

/// What a page needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Need {
    /// Read policies, inventory, permissions and the audit log.
    Read,
    /// Change the policy (edits, rollbacks, inventory rules).
    Edit,
    /// See and decide approvals.
    Approve,
    /// See the approvals queue (auditors read it; they decide nothing).
    SeeApprovals,
}

/// The roles `groups` give.
pub(super) fn roles(config: &DashboardConfig, groups: &[String]) -> Roles {
    let member = |role_groups: &[String]| groups.iter().any(|group| role_groups.contains(group));
    Roles {
        admin: member(&config.admin_groups),
        auditor: member(&config.auditor_groups),
        approver: member(&config.approver_groups),
    }
}

/// Whether `roles` open the dashboard at all.
pub(super) fn any(roles: Roles) -> bool {
    roles.admin || roles.auditor || roles.approver
}

/// Whether `roles` may do what `need` names.
pub(super) fn allows(roles: Roles, need: Need) -> bool {
    match need {
        Need::Read => roles.admin || roles.auditor,
        Need::Edit => roles.admin,
        Need::Approve => roles.admin || roles.approver,
        Need::SeeApprovals => roles.admin || roles.approver || roles.auditor,
    }
}

/// What the dashboard's CSRF tokens are bound to: its purpose and the session. Other tokens
/// derived from the same session (the sign-out form's, which any site page can read on its own
/// host) never verify here.
pub(super) fn csrf_binding(session: &SessionId) -> Vec<u8> {
    let mut binding = b"dashboard\0".to_vec();
    binding.extend_from_slice(session);
    binding
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DashboardConfig {
        DashboardConfig {
            host: "admin.test".into(),
            admin_groups: vec!["admins".into()],
            auditor_groups: vec!["auditors".into()],
            approver_groups: vec!["approvers".into()],
        }
    }

    fn of(groups: &[&str]) -> Roles {
        roles(&config(), &groups.iter().map(|group| (*group).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn each_role_gets_exactly_its_rights() {
        let admin = of(&["admins"]);
        assert!(allows(admin, Need::Read) && allows(admin, Need::Edit) && allows(admin, Need::Approve));
        let auditor = of(&["auditors"]);
        assert!(
            allows(auditor, Need::Read) && !allows(auditor, Need::Edit) && !allows(auditor, Need::Approve)
        );
        let approver = of(&["approvers"]);
        assert!(
            !allows(approver, Need::Read) && !allows(approver, Need::Edit) && allows(approver, Need::Approve)
        );
        assert!(!any(of(&["engineering"])) && !any(of(&[])));
    }

    #[test]
    fn dashboard_tokens_are_bound_to_their_purpose() {
        let session: SessionId = [7; 32];
        assert_ne!(csrf_binding(&session), session.to_vec());
        assert!(csrf_binding(&session).starts_with(b"dashboard\0"));
    }
}
