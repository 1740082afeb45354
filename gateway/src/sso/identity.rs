//! Who a request is from: the identity taken from verified token claims (claim names are
//! configurable), handed to the policy engine as a subject and to sites as headers.

use crate::config::ClaimNames;
use serde::{Deserialize, Serialize};

/// Most groups kept from a token; the rest are dropped with a warning.
const MAX_GROUPS: usize = 256;
/// Longest user id, email or group name accepted.
const MAX_VALUE: usize = 256;

/// A signed-in user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The stable user id.
    pub user: String,
    /// The email address, when the provider gives one.
    pub email: Option<String>,
    /// The user's groups.
    pub groups: Vec<String>,
    /// The display name, when the provider gives one (sessions from older versions lack it).
    #[serde(default)]
    pub name: Option<String>,
}

/// Why claims do not make an identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The user-id claim is missing, not a string, empty, too long or has control characters.
    #[error("the token has no usable `{0}` claim")]
    MissingUser(String),
}

impl Identity {
    /// Reads an identity from verified claims.
    pub fn from_claims(
        claims: &serde_json::Map<String, serde_json::Value>,
        names: &ClaimNames,
    ) -> Result<Self, IdentityError> {
        let user = claims
            .get(&names.user)
            .and_then(serde_json::Value::as_str)
            .filter(|user| acceptable(user))
            .ok_or_else(|| IdentityError::MissingUser(names.user.clone()))?
            .to_owned();
        let email = claims
            .get(&names.email)
            .and_then(serde_json::Value::as_str)
            .filter(|email| acceptable(email))
            .map(str::to_owned);
        let name = claims
            .get(&names.name)
            .and_then(serde_json::Value::as_str)
            .filter(|name| acceptable(name))
            .map(str::to_owned);
        let groups = match claims.get(&names.groups) {
            Some(serde_json::Value::Array(values)) => values
                .iter()
                .filter_map(serde_json::Value::as_str)
                .filter(|g| acceptable(g))
                .map(str::to_owned)
                .collect(),
            // Some providers send a single group as a string.
            Some(serde_json::Value::String(group)) if acceptable(group) => vec![group.clone()],
            _ => Vec::new(),
        };
        let mut groups: Vec<String> = groups;
        if groups.len() > MAX_GROUPS {
            tracing::warn!(
                kept = MAX_GROUPS,
                given = groups.len(),
                "token lists too many groups; extra groups ignored"
            );
            groups.truncate(MAX_GROUPS);
        }
        Ok(Self { user, email, groups, name })
    }

    /// The subject the policy engine decides for.
    pub fn subject(&self) -> policy::Subject {
        policy::Subject {
            user: policy::UserId::new(self.user.clone()),
            email: self.email.clone(),
            groups: self.groups.iter().map(|group| policy::GroupName::new(group.clone())).collect(),
        }
    }

    /// Whether the user is in any of `groups`.
    pub fn in_any(&self, groups: &[String]) -> bool {
        self.groups.iter().any(|group| groups.contains(group))
    }
}

fn acceptable(value: &str) -> bool {
    !value.is_empty() && value.len() <= MAX_VALUE && !value.chars().any(char::is_control)
}

/// Encodes a value for an identity header: visible ASCII stays, `%`, `,` and everything else
/// become `%XX` (UTF-8), so header values are always valid and lists stay splittable.
pub fn header_encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_graphic() && byte != b'%' && byte != b',' || byte == b' ' {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn claims_make_an_identity_with_configured_names() {
        let names = ClaimNames {
            user: "preferred_username".into(),
            email: "mail".into(),
            groups: "roles".into(),
            name: "name".into(),
        };
        let identity = Identity::from_claims(
            &claims(json!({"preferred_username": "alice", "mail": "alice@corp", "roles": ["eng", 7, "ops"], "name": "Alice A."})),
            &names,
        )
        .expect("identity");
        assert_eq!(
            identity,
            Identity {
                user: "alice".into(),
                email: Some("alice@corp".into()),
                groups: vec!["eng".into(), "ops".into()],
                name: Some("Alice A.".into()),
            }
        );
        assert!(Identity::from_claims(&claims(json!({"sub": "alice"})), &names).is_err());
        assert!(Identity::from_claims(&claims(json!({"preferred_username": "a\r\nb"})), &names).is_err());
        let single =
            Identity::from_claims(&claims(json!({"preferred_username": "b", "roles": "eng"})), &names)
                .expect("identity");
        assert_eq!(single.groups, ["eng"]);
    }

    #[test]
    fn header_values_are_always_valid() {
        assert_eq!(header_encode("Zoë, HR%"), "Zo%C3%AB%2C HR%25");
        for text in ["a\r\nX-Injected: 1", "\u{1b}[31m", "\0"] {
            assert!(http::HeaderValue::from_str(&header_encode(text)).is_ok());
            assert!(!header_encode(text).contains('\n'));
        }
    }
}
