//! Whether anyone but the requester could decide a group approval right now.
//!
//! The gateway knows who is in a group only from the people signed in (each session carries the
//! user's groups). So, when a call waits for a group, it asks the session store whether anyone
//! else who may decide it is signed in: a member of the approver group, or an administrator
//! (administrators decide any call they did not ask for). When nobody is, the approval card says
//! so at once, instead of the call quietly expiring: four eyes forbid the requester to decide.

use crate::sso::session;
use crate::store::StoreHandle;
use std::time::Duration;

/// The session store, and the groups whose members administer.
pub struct Deciders {
    store: StoreHandle,
    admin_groups: Vec<String>,
}

impl Deciders {
    /// Looks in `store` for deciders; `admin_groups` are the dashboard's administrator groups.
    pub fn new(store: StoreHandle, admin_groups: Vec<String>) -> Self {
        Self { store, admin_groups }
    }

    /// What the card should say when nobody but `requester` (in `requester_groups`) who may
    /// decide for `group` is signed in; `None` when someone is, or the store cannot tell (the
    /// call waits as usual either way).
    pub async fn notice(
        &self,
        group: &str,
        (requester, requester_groups): (&str, &[String]),
        expires_in: Duration,
    ) -> Option<String> {
        let admins = &self.admin_groups;
        let now = crate::support::clock::unix_now();
        let found = session::find_sessions(&self.store, now, &|record| {
            let identity = &record.identity;
            identity.user != requester
                && identity.groups.iter().any(|member_of| *member_of == group || admins.contains(member_of))
        })
        .await;
        match found {
            Ok(others) if others.is_empty() => {
                Some(alone(group, requester_groups.iter().any(|member_of| member_of == group), expires_in))
            }
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(error = %error, "cannot tell who could decide an approval");
                None
            }
        }
    }
}

/// The card's text when nobody else who may decide is signed in.
fn alone(group: &str, requester_is_member: bool, expires_in: Duration) -> String {
    let minutes = expires_in.as_secs().div_ceil(60).max(1);
    let plural = if minutes == 1 { "" } else { "s" };
    let who = if requester_is_member {
        format!("You are the only member of {group} signed in, and nobody approves their own call")
    } else {
        format!("No member of {group} is signed in")
    };
    format!(
        "{who}; no administrator is signed in either. Ask another member of {group} or an \
         administrator to open the approvals page within {minutes} minute{plural}, or the call expires."
    )
}

#[cfg(test)]
mod tests {
    use super::alone;
    use std::time::Duration;

    #[test]
    fn the_notice_says_who_is_missing_and_how_long_the_call_waits() {
        let own = alone("finance-approvers", true, Duration::from_secs(300));
        assert!(own.starts_with("You are the only member of finance-approvers signed in"), "{own}");
        assert!(own.contains("within 5 minutes"), "{own}");
        let other = alone("finance-approvers", false, Duration::from_secs(30));
        assert!(
            other.starts_with("No member of finance-approvers is signed in") && other.contains("1 minute,")
        );
    }
}
