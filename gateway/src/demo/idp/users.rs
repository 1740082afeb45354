//! The demo users the development provider signs in: four fake people in different groups, so
//! the demo can show one policy allowing, asking and denying. They have no passwords; anyone at
//! the sign-in page can pick any of them, which is exactly why this provider is development-only.

/// A fake person the development provider can sign in as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoUser {
    /// The stable subject (`sub`) of the user's tokens.
    pub id: &'static str,
    /// The display name (`name` claim).
    pub name: &'static str,
    /// The e-mail address (`email` claim), always in the reserved `demo.example` domain.
    pub email: &'static str,
    /// The groups (`groups` claim) that policies match on.
    pub groups: &'static [&'static str],
}

/// Every user of the development provider, in the order the sign-in page lists them.
pub const DEMO_USERS: &[DemoUser] = &[
    DemoUser { id: "alice", name: "Alice Andersen", email: "alice@demo.example", groups: &["engineering"] },
    DemoUser {
        id: "bob",
        name: "Bob Berg",
        email: "bob@demo.example",
        groups: &["finance", "finance-approvers"],
    },
    DemoUser {
        id: "carol",
        name: "Carol Chen",
        email: "carol@demo.example",
        groups: &["hr-staff", "security-auditors"],
    },
    DemoUser { id: "dave", name: "Dave Dunn", email: "dave@demo.example", groups: &[] },
    DemoUser { id: "erin", name: "Erin Eriksen", email: "erin@demo.example", groups: &["toolgate-admins"] },
];

/// The demo user with this id, if there is one.
pub fn find(id: &str) -> Option<&'static DemoUser> {
    DEMO_USERS.iter().find(|user| user.id == id)
}
