//! The last audit chain verification, so the overview can show it without walking the whole
//! log on every visit: a full verification runs in the background after start, when the Audit
//! page asks for one, and when the overview finds none younger than [`MAX_AGE`].
//!
//! Damage must not hide: each outcome also sets `toolgate_audit_chain_damaged`, turns `/readyz`
//! to 503 while the chain is damaged, and is logged.

use crate::audit::AuditLog;
use crate::metrics::Metrics;
use dashboard::ChainStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// How old a verification the overview still shows (seconds).
const MAX_AGE: u64 = 600;

/// The outcome of the last verification and when it ran.
#[derive(Default)]
pub struct ChainCache {
    last: Mutex<Option<(u64, ChainStatus)>>,
    damaged: AtomicBool,
}

impl ChainCache {
    /// The last outcome, verifying again first when it is missing or older than [`MAX_AGE`].
    pub async fn recent(&self, audit: &Arc<AuditLog>, metrics: &Metrics) -> ChainStatus {
        let now = crate::support::clock::unix_now();
        let cached = self.last.lock().unwrap_or_else(PoisonError::into_inner).clone();
        match cached {
            Some((at, status)) if now.saturating_sub(at) < MAX_AGE => status,
            _ => self.verify(audit, metrics).await,
        }
    }

    /// Whether the last full verification found the chain damaged.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    /// Verifies the whole chain now (on a blocking thread), keeps the outcome, and reports it:
    /// the metric, the readiness flag and a log line.
    pub async fn verify(&self, audit: &Arc<AuditLog>, metrics: &Metrics) -> ChainStatus {
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
        // A verification that could not run says nothing new: the last verdict stands.
        let verdict = match &status {
            ChainStatus::Verified { .. } => Some(false),
            ChainStatus::Broken { .. } => Some(true),
            ChainStatus::Unavailable(_) | ChainStatus::NotChecked => None,
        };
        match &status {
            ChainStatus::Verified { records, .. } => tracing::info!(records, "audit chain verified in full"),
            ChainStatus::Broken { at_seq, reason, .. } => tracing::error!(
                at_seq,
                reason = %reason,
                "audit chain damaged: `toolgate audit verify` names the first bad record; restore the store from a backup"
            ),
            ChainStatus::Unavailable(reason) => {
                tracing::warn!(reason = %reason, "audit chain could not be verified")
            }
            ChainStatus::NotChecked => {}
        }
        if let Some(damaged) = verdict {
            self.damaged.store(damaged, Ordering::Relaxed);
            metrics.audit_chain_damaged.set(i64::from(damaged));
        }
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
