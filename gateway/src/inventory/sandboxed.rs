//! Pages served without the runtime because their CSP sandboxes them into an opaque origin
//! (`sandbox` without `allow-same-origin`): their tools are off for the agent, and no page there
//! can report a catalog, so the inventory notes them per site instead (how many, when, the last
//! few paths). One small record per site, written at most once a minute per path.

use super::{Inventory, lock_map};
use crate::store::{StoreError, Table};
use serde::{Deserialize, Serialize};

/// Paths kept per site.
const RECENT_PATHS: usize = 10;
/// A path is noted again at most this often (seconds).
const NOTE_EVERY: u64 = 60;
/// Longest path kept.
const MAX_PATH: usize = 256;

/// A site's sandboxed pages, as the inventory shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxedPages {
    /// Sightings noted (at most one per path and minute).
    pub count: u64,
    /// Last sighting (UNIX seconds).
    pub last_seen: u64,
    /// The latest distinct paths, newest first.
    pub recent: Vec<String>,
}

impl Inventory {
    /// Notes that `path` of `site` was served sandboxed (blocking: call off the async workers).
    pub async fn note_sandboxed(&self, site: &str, path: &str, now: u64) -> Result<(), StoreError> {
        let path: String = path.chars().take(MAX_PATH).collect();
        {
            let mut noted = lock_map(&self.sandboxed_noted);
            let key = (site.to_owned(), path.clone());
            if noted.get(&key).is_some_and(|at| now.saturating_sub(*at) < NOTE_EVERY) {
                return Ok(());
            }
            if noted.len() >= super::MAX_THROTTLE_ENTRIES {
                noted.clear();
            }
            noted.insert(key, now);
        }
        let key = record_key(site);
        for _ in 0..super::CAS_ATTEMPTS {
            let stored = self.store.get(Table::Inventory, &key).await?;
            let mut pages = stored
                .as_deref()
                .and_then(|bytes| serde_json::from_slice::<SandboxedPages>(bytes).ok())
                .unwrap_or_default();
            pages.count = pages.count.saturating_add(1);
            pages.last_seen = now;
            pages.recent.retain(|known| *known != path);
            pages.recent.insert(0, path.clone());
            pages.recent.truncate(RECENT_PATHS);
            let bytes = serde_json::to_vec(&pages).map_err(|error| StoreError(error.to_string()))?;
            if self.store.compare_and_swap(Table::Inventory, &key, stored.as_deref(), Some(&bytes)).await? {
                return Ok(());
            }
        }
        Err(StoreError("the sandboxed-pages note kept changing under concurrent writes".into()))
    }

    /// What the inventory noted about `site`'s sandboxed pages.
    pub async fn sandboxed(&self, site: &str) -> Result<Option<SandboxedPages>, StoreError> {
        let stored = self.store.get(Table::Inventory, &record_key(site)).await?;
        Ok(stored.as_deref().and_then(|bytes| serde_json::from_slice(bytes).ok()))
    }
}

/// The record's key: it starts with a NUL byte, so it never falls under a site's `site\0`
/// prefix of tool and context entries.
fn record_key(site: &str) -> Vec<u8> {
    format!("\0sandboxed\0{site}").into_bytes()
}

/// Whether `key` is one of these records (not a tool or context entry).
pub(super) fn is_note(key: &[u8]) -> bool {
    key.first() == Some(&0)
}

#[cfg(test)]
mod tests {
    use crate::inventory::Inventory;
    use crate::store::SledStore;
    use crate::store::StoreHandle;
    use std::sync::Arc;

    #[tokio::test]
    async fn sandboxed_pages_are_noted_per_site_bounded_and_throttled() {
        let inventory =
            Inventory::new(StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store"))));
        for index in 0..15 {
            inventory.note_sandboxed("jupyter", &format!("/files/{index}.html"), 100).await.expect("noted");
        }
        inventory.note_sandboxed("jupyter", "/files/14.html", 120).await.expect("throttled");
        inventory.note_sandboxed("jupyter", "/files/3.html", 200).await.expect("noted again");
        let pages = inventory.sandboxed("jupyter").await.expect("read").expect("noted");
        assert_eq!((pages.count, pages.last_seen), (16, 200));
        assert_eq!(pages.recent.len(), 10);
        assert_eq!(pages.recent[..2], ["/files/3.html".to_owned(), "/files/14.html".to_owned()]);
        assert_eq!(inventory.sandboxed("other").await.expect("read"), None);
        assert!(inventory.list(None).await.expect("list").is_empty(), "not a tool or context entry");
    }
}
