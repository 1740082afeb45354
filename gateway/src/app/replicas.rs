//! Following the other replicas on a shared store: the changes they announce (see
//! `store/postgres/notify.rs`) reach this process's waiters at once. An approval decided
//! elsewhere wakes the turns waiting here; a tool result posted elsewhere for a turn running here
//! is taken into it; a form action gated elsewhere is guarded here too; a site's answer to a form
//! submission that went through another replica wakes the turn waiting for it; a policy version
//! saved elsewhere is put in force here. After a reconnection, or when this process fell behind
//! (notices may have been lost), all of them are looked at again.

use crate::state::Gateway;
use crate::store::postgres::RESYNC;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// Follows the announced changes until shutdown; returns at once on the embedded store.
pub async fn follow(gateway: Arc<Gateway>, shutdown: impl Future<Output = ()>) {
    let Some(mut notices) = gateway.store.subscribe() else { return };
    tokio::pin!(shutdown);
    loop {
        let (topic, key) = tokio::select! {
            () = &mut shutdown => return,
            notice = notices.recv() => match notice {
                Ok(notice) => (notice.topic, notice.key),
                // Fell behind: some notices are gone, so re-read everything.
                Err(RecvError::Lagged(_)) => (RESYNC.to_owned(), String::new()),
                Err(RecvError::Closed) => return,
            },
        };
        let resync = topic == RESYNC;
        match topic.as_str() {
            "result" => gateway.turns.collect(&key).await,
            _ if resync => gateway.turns.collect_all().await,
            _ => {}
        }
        if resync || topic == "gate" {
            gateway.gated_forms.load().await;
        }
        if resync || topic == "approval" {
            gateway.approvals.changed_elsewhere();
        }
        if resync || topic == "outcome" {
            gateway.outcomes.changed_elsewhere();
        }
        if (resync || topic == "policy")
            && let Some(versions) = &gateway.policy_versions
            && let Err(error) = versions.catch_up(&gateway.policy).await
        {
            tracing::error!(error = %error, "a policy version saved on another replica could not be put in force");
        }
    }
}
