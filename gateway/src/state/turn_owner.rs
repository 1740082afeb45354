//! Who an agent turn belongs to ([`Owner`]: user, session digest, site) and why one may not
//! start ([`Refusal`]): shared by the turn registry (`turns.rs`) and the per-user limits
//! (`turn_leases.rs`).

use serde::{Deserialize, Serialize};

/// Who a turn belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The user id.
    pub user: String,
    /// A keyed digest of the session (never the id).
    pub session: String,
    /// The site id.
    pub site: String,
}

impl Owner {
    /// One string for the three, as registries key by it.
    pub fn key(&self) -> String {
        format!("{}\n{}\n{}", self.user, self.session, self.site)
    }
}

/// Why a turn could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The user already has the maximum number of turns running.
    TooManyTurns(usize),
    /// The user used up their tokens for this hour.
    TokenBudget(u64),
    /// The store holding the limits did not answer (fail closed: no turn without its limits).
    Unavailable,
}

impl Refusal {
    /// What the user is told (the panel and API clients show it as is).
    pub fn message(&self) -> String {
        match self {
            Self::TooManyTurns(max) => {
                format!("you already have {max} agent requests running; wait for one to finish")
            }
            Self::TokenBudget(tokens) => {
                format!("you used your {tokens} model tokens for this hour; try again later")
            }
            Self::Unavailable => {
                "the gateway cannot check your agent limits right now; try again shortly".to_owned()
            }
        }
    }

    /// The HTTP status: 429 for a limit, 503 when the limits cannot be checked.
    pub fn status(&self) -> http::StatusCode {
        match self {
            Self::Unavailable => http::StatusCode::SERVICE_UNAVAILABLE,
            _ => http::StatusCode::TOO_MANY_REQUESTS,
        }
    }
}
