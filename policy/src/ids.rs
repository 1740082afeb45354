//! Identifier newtypes: sites, users, groups, tools, contexts, rules and redactor names.
//!
//! They exist so a user id can never be passed where a group name is expected. All are plain
//! shared strings underneath (`Arc<str>`: decisions and explanations clone them freely), compared
//! exactly (case-sensitive), and serialize as strings.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

macro_rules! identifier {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl $name {
            /// Wraps a string as this identifier.
            pub fn new(value: impl AsRef<str>) -> Self {
                Self(Arc::from(value.as_ref()))
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(Arc::from(value))
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(Arc::from(value))
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

identifier!(
    /// A site as named in the gateway configuration (`[sites.<id>]`).
    SiteId
);
identifier!(
    /// A user's stable id from the identity provider (the `sub` claim or its mapping).
    UserId
);
identifier!(
    /// An identity-provider group a policy may reference (declared in `groups = [...]`).
    GroupName
);
identifier!(
    /// A tool's name as the page declares it (`[A-Za-z0-9_.-]{1,128}`).
    ToolName
);
identifier!(
    /// A context's name as the page declares it.
    ContextName
);
identifier!(
    /// A rule's `id`, unique within one policy.
    RuleId
);
identifier!(
    /// The name of an admin-defined `[[redactor]]`; also its placeholder (`[<name>]`).
    RedactorName
);
