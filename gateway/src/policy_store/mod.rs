//! The policy as the gateway keeps it: loading and reloading the policy file (`reload`), and the
//! signed history of every version that was in force (`versions`).
//!
//! Layer 3 of the gateway (ARCHITECTURE.md, "Code map"): may import `audit`, `config`, `inventory`,
//! `metrics`, `store`, `support`.

pub mod reload;
pub mod versions;
