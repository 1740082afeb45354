//! The last audit chain verification, so the overview can show it without walking the whole
//! log on every visit: a verification runs when the Audit page asks for one, or when the
//! overview finds none younger than [`MAX_AGE`].

use crate::audit::AuditLog;
use dashboard::ChainStatus;
use std::sync::{Arc, Mutex, PoisonError};

/// How old a verification the overview still shows (seconds).
const MAX_AGE: u64 = 600;

/// The outcome of the last verification and when it ran.
#[derive(Default)]
pub struct ChainCache {
    last: Mutex<Option<(u64, ChainStatus)>>,
}

impl ChainCache {
    /// The last outcome, verifying again first when it is missing or older than [`MAX_AGE`].
    pub async fn recent(&self, audit: &Arc<AuditLog>) -> ChainStatus {
        let now = crate::support::clock::unix_now();
        let cached = self.last.lock().unwrap_or_else(PoisonError::into_inner).clone();
        match cached {
            Some((at, status)) if now.saturating_sub(at) < MAX_AGE => status,
            _ => self.verify(audit).await,
        }
    }

    /// Verifies the whole chain now (on a blocking thread) and keeps the outcome.
    pub async fn verify(&self, audit: &Arc<AuditLog>) -> ChainStatus {
        let audit = audit.clone();
        let checked =
            tokio::task::spawn_blocking(move || crate::audit::verify::verify(audit.store(), audit.key()))
                .await;
        let now = crate::support::clock::unix_now();
        let checked_at = crate::support::clock::utc(now);
        let status = match checked {
            Ok(Ok(Ok(verified))) => ChainStatus::Verified { records: verified.records, checked_at },
            Ok(Ok(Err(broken))) => {
                ChainStatus::Broken { at_seq: broken_at(&broken), reason: broken.to_string(), checked_at }
            }
            Ok(Err(error)) => ChainStatus::Unavailable(format!("the store failed: {error}")),
            Err(_) => ChainStatus::Unavailable("the verification did not finish".into()),
        };
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some((now, status.clone()));
        status
    }
}

fn broken_at(error: &crate::audit::verify::ChainError) -> u64 {
    use crate::audit::verify::ChainError;
    match error {
        ChainError::Tampered(seq)
        | ChainError::Broken(seq)
        | ChainError::Unreadable(seq)
        | ChainError::Truncated(seq) => *seq,
        ChainError::Gap { expected, .. } => *expected,
        _ => 0,
    }
}
