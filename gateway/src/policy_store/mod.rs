//! The policy as the gateway keeps it: loading and reloading the policy file (`reload`), and the
//! signed history of every version that was in force (`versions`).
//!
//! May import: `config`, `store`, `audit`, `support`; never HTTP handlers.

pub mod reload;
pub mod versions;
