//! The tool inventory: every tool and context that pages of a site reported, with its dialect,
//! description and schema digests, first and last sighting, and a flag when a tool's
//! description or schema changed since it was first seen (a changed tool may be a poisoned one).
//! A form tool is kept per target (where its form submits): one name on an "add" and a "change"
//! page is two entries marked "same name, different targets", not one tool that keeps changing.
//!
//! Reports come from the runtime in users' browsers, so they are claims, bounded in size and
//! number. Writes are throttled: an unchanged entry is rewritten at most once a minute.
//!
//! Layer 2 of the gateway (ARCHITECTURE.md, "Code map"): may import `http`, `store`.

pub mod sandboxed;

use crate::store::{StoreError, StoreHandle, Table};
use aws_lc_rs::digest;
use policy::SiteId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Most entries kept per site; reports of further new names are ignored (and counted).
pub const MAX_ENTRIES_PER_SITE: usize = 2000;
/// Longest description kept for display (the digest always covers the whole text).
const MAX_STORED_DESCRIPTION: usize = 2048;
/// Largest schema (serialized) kept for display.
const MAX_STORED_SCHEMA: usize = 16 * 1024;
/// An unchanged sighting is written at most this often (seconds).
const REFRESH_SECONDS: u64 = 60;
/// Bound on the in-memory throttle tables; each is cleared when full.
const MAX_THROTTLE_ENTRIES: usize = 20_000;
/// New entries one user may add to one site's inventory per hour.
pub const MAX_NEW_PER_USER_HOUR: usize = 300;
/// Tries of the read-merge-compare-and-swap cycle before giving up.
const CAS_ATTEMPTS: usize = 8;

/// Tool or context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A callable tool.
    Tool,
    /// A context (page data offered to the model).
    Context,
}

/// One sighting as a page reported it.
#[derive(Debug, Clone)]
pub struct Sighting<'a> {
    /// Tool or context.
    pub kind: EntryKind,
    /// Its name (already validated by the caller).
    pub name: &'a str,
    /// The dialect it came from (`voix`, `webmcp_imperative`, …).
    pub source: &'a str,
    /// Its description (tools) or empty (contexts).
    pub description: &'a str,
    /// Its input schema (tools) or `Null` (contexts).
    pub schema: &'a Value,
    /// For a form tool, where its form submits (`POST /staff/add/`): the same name submitting
    /// elsewhere is another entry.
    pub target: Option<&'a str>,
}

/// What the inventory holds about one tool or context of one site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InventoryEntry {
    /// The site.
    pub site: String,
    /// Tool or context.
    pub kind: EntryKind,
    /// The name.
    pub name: String,
    /// The dialect it was last reported in.
    pub source: String,
    /// The description as last reported (cut to 2 KiB for display).
    pub description: String,
    /// The input schema as last reported (`null` when too large to keep, or for contexts).
    pub schema: Value,
    /// SHA-256 (hex) of the full description.
    pub description_digest: String,
    /// SHA-256 (hex) of the canonical JSON of the schema.
    pub schema_digest: String,
    /// First sighting (UNIX seconds).
    pub first_seen: u64,
    /// Last sighting (UNIX seconds, refreshed at most once a minute).
    pub last_seen: u64,
    /// Set when the description or schema differs from an earlier sighting; stays set until an
    /// administrator reviews it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<Change>,
    /// For a form tool: where its form submits (method and action path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Another entry of this site has the same tool name and submits elsewhere (set when
    /// listing): usually one rule matching two kinds of page, never a changed tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub same_name_different_targets: bool,
}

/// A change to a known tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// When it was last seen changing (UNIX seconds).
    pub at: u64,
    /// The description changed.
    pub description: bool,
    /// The schema changed.
    pub schema: bool,
    /// How many times it changed.
    pub count: u32,
}

/// What a sighting meant for the inventory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// First time this site reported it.
    New,
    /// Known, with another description and/or schema than last time.
    Changed {
        /// The description differs.
        description: bool,
        /// The schema differs.
        schema: bool,
    },
    /// Known and the same.
    Unchanged,
    /// Not recorded: the site already has the maximum number of entries, or this user added
    /// too many new ones this hour.
    Ignored,
}

/// The inventory over the store.
pub struct Inventory {
    store: StoreHandle,
    /// (site, kind, name) → (digests, last write): skips rewriting unchanged entries.
    recent: Mutex<HashMap<String, (String, String, u64)>>,
    /// Entries per site, counted on first use of the site.
    counts: Mutex<HashMap<String, usize>>,
    /// (site, user) → (hour, new entries that user added in that hour).
    added: Mutex<HashMap<(String, String), (u64, usize)>>,
    /// (site, path) → when a sandboxed page was last noted (`sandboxed.rs`).
    sandboxed_noted: Mutex<HashMap<(String, String), u64>>,
}

impl Inventory {
    /// An inventory kept in `store`.
    pub fn new(store: StoreHandle) -> Self {
        Self {
            store,
            recent: Mutex::default(),
            counts: Mutex::default(),
            added: Mutex::default(),
            sandboxed_noted: Mutex::default(),
        }
    }

    /// Records one sighting by `user` at `now`; says whether it was new or changed. The entry
    /// is updated with compare-and-swap, so concurrent reports never lose a change flag.
    pub async fn observe(
        &self,
        site: &SiteId,
        user: &str,
        sighting: &Sighting<'_>,
        now: u64,
    ) -> Result<Observation, StoreError> {
        let key = entry_key(site.as_str(), sighting.kind, sighting.name, sighting.target);
        let throttle_key = String::from_utf8_lossy(&key).into_owned();
        let description_digest = sha256_hex(sighting.description.as_bytes());
        let schema_digest = sha256_hex(canonical_json(sighting.schema).as_bytes());
        if let Some((description, schema, written)) = self.lock_recent().get(&throttle_key)
            && *description == description_digest
            && *schema == schema_digest
            && now.saturating_sub(*written) < REFRESH_SECONDS
        {
            return Ok(Observation::Unchanged);
        }
        for _ in 0..CAS_ATTEMPTS {
            let stored = self.store.get(Table::Inventory, &key).await?;
            let previous =
                stored.as_deref().and_then(|bytes| serde_json::from_slice::<InventoryEntry>(bytes).ok());
            let is_new = previous.is_none();
            if is_new && !self.has_room(site, user, now).await? {
                return Ok(Observation::Ignored);
            }
            let (entry, observation) =
                merge(site, sighting, previous, description_digest.clone(), schema_digest.clone(), now);
            let bytes = serde_json::to_vec(&entry).map_err(|error| StoreError(error.to_string()))?;
            if !self.store.compare_and_swap(Table::Inventory, &key, stored.as_deref(), Some(&bytes)).await? {
                continue;
            }
            if is_new {
                self.count_new(site, user, now);
            }
            let mut recent = self.lock_recent();
            if recent.len() >= MAX_THROTTLE_ENTRIES {
                recent.clear();
            }
            recent.insert(throttle_key, (entry.description_digest, entry.schema_digest, now));
            return Ok(observation);
        }
        Err(StoreError("the inventory entry kept changing under concurrent reports".into()))
    }

    /// Every entry, or a site's entries, in (site, kind, name, target) order; tools of one name
    /// with several targets say so.
    pub async fn list(&self, site: Option<&str>) -> Result<Vec<InventoryEntry>, StoreError> {
        let mut entries = self.stored(site).await?;
        let mut targets: HashMap<(&str, &str), std::collections::HashSet<&str>> = HashMap::new();
        for entry in &entries {
            if let (EntryKind::Tool, Some(target)) = (entry.kind, &entry.target) {
                targets
                    .entry((entry.site.as_str(), entry.name.as_str()))
                    .or_default()
                    .insert(target.as_str());
            }
        }
        let shared: std::collections::HashSet<(String, String)> = targets
            .into_iter()
            .filter(|(_, targets)| targets.len() > 1)
            .map(|((site, name), _)| (site.to_owned(), name.to_owned()))
            .collect();
        for entry in &mut entries {
            entry.same_name_different_targets = entry.kind == EntryKind::Tool
                && entry.target.is_some()
                && shared.contains(&(entry.site.clone(), entry.name.clone()));
        }
        Ok(entries)
    }

    /// The entries as stored.
    async fn stored(&self, site: Option<&str>) -> Result<Vec<InventoryEntry>, StoreError> {
        let prefix = site.map(|site| format!("{site}\0").into_bytes()).unwrap_or_default();
        let mut entries = Vec::new();
        let mut from = prefix.clone();
        loop {
            let batch = self.store.range(Table::Inventory, &from, 256).await?;
            let Some((last_key, _)) = batch.last() else { break };
            let mut next = last_key.clone();
            next.push(0);
            let mut done = batch.len() < 256;
            for (key, value) in batch {
                if !key.starts_with(&prefix) {
                    done = true;
                    break;
                }
                if sandboxed::is_note(&key) {
                    continue;
                }
                if let Ok(entry) = serde_json::from_slice::<InventoryEntry>(&value) {
                    entries.push(entry);
                }
            }
            if done {
                break;
            }
            from = next;
        }
        Ok(entries)
    }

    /// Whether a new entry may be added for `site` by `user`: the site has fewer than
    /// [`MAX_ENTRIES_PER_SITE`] entries and the user added fewer than [`MAX_NEW_PER_USER_HOUR`] in
    /// the current hour (so one user cannot fill a site's inventory with made-up names).
    async fn has_room(&self, site: &SiteId, user: &str, now: u64) -> Result<bool, StoreError> {
        let known = self.lock_counts().get(site.as_str()).copied();
        let count = match known {
            Some(count) => count,
            None => {
                let count = self.stored(Some(site.as_str())).await?.len();
                self.lock_counts().insert(site.as_str().to_owned(), count);
                count
            }
        };
        let hour = now / 3600;
        let added = self
            .lock_added()
            .get(&(site.as_str().to_owned(), user.to_owned()))
            .filter(|(window, _)| *window == hour)
            .map_or(0, |(_, added)| *added);
        Ok(count < MAX_ENTRIES_PER_SITE && added < MAX_NEW_PER_USER_HOUR)
    }

    fn count_new(&self, site: &SiteId, user: &str, now: u64) {
        *self.lock_counts().entry(site.as_str().to_owned()).or_insert(0) += 1;
        let mut added = self.lock_added();
        if added.len() >= MAX_THROTTLE_ENTRIES {
            added.clear();
        }
        let hour = now / 3600;
        let slot = added.entry((site.as_str().to_owned(), user.to_owned())).or_insert((hour, 0));
        if slot.0 != hour {
            *slot = (hour, 0);
        }
        slot.1 += 1;
    }

    fn lock_counts(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        lock_map(&self.counts)
    }

    fn lock_added(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), (u64, usize)>> {
        lock_map(&self.added)
    }

    fn lock_recent(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, String, u64)>> {
        lock_map(&self.recent)
    }
}

/// The stored entry after a sighting, and what the sighting meant.
fn merge(
    site: &SiteId,
    sighting: &Sighting<'_>,
    previous: Option<InventoryEntry>,
    description_digest: String,
    schema_digest: String,
    now: u64,
) -> (InventoryEntry, Observation) {
    let schema_text = sighting.schema.to_string();
    let fresh = InventoryEntry {
        site: site.as_str().to_owned(),
        kind: sighting.kind,
        name: sighting.name.to_owned(),
        source: sighting.source.to_owned(),
        description: truncate(sighting.description, MAX_STORED_DESCRIPTION),
        schema: if schema_text.len() <= MAX_STORED_SCHEMA { sighting.schema.clone() } else { Value::Null },
        description_digest,
        schema_digest,
        first_seen: now,
        last_seen: now,
        changed: None,
        target: sighting.target.map(str::to_owned),
        same_name_different_targets: false,
    };
    let Some(previous) = previous else { return (fresh, Observation::New) };
    let description = previous.description_digest != fresh.description_digest;
    let schema = previous.schema_digest != fresh.schema_digest;
    let mut changed = previous.changed.clone();
    let observation = if description || schema {
        let count = changed.as_ref().map_or(0, |change| change.count).saturating_add(1);
        let earlier = changed.as_ref();
        changed = Some(Change {
            at: now,
            description: description || earlier.is_some_and(|change| change.description),
            schema: schema || earlier.is_some_and(|change| change.schema),
            count,
        });
        Observation::Changed { description, schema }
    } else {
        Observation::Unchanged
    };
    (InventoryEntry { first_seen: previous.first_seen, changed, ..fresh }, observation)
}

/// Locks one of the throttle maps (plain values: a panic while holding it leaves them usable).
fn lock_map<K, V>(map: &Mutex<HashMap<K, V>>) -> std::sync::MutexGuard<'_, HashMap<K, V>> {
    map.lock().unwrap_or_else(PoisonError::into_inner)
}

fn entry_key(site: &str, kind: EntryKind, name: &str, target: Option<&str>) -> Vec<u8> {
    let kind = match kind {
        EntryKind::Tool => "tool",
        EntryKind::Context => "context",
    };
    match target {
        Some(target) => format!("{site}\0{kind}\0{name}\0{target}").into_bytes(),
        None => format!("{site}\0{kind}\0{name}").into_bytes(),
    }
}

/// JSON with object keys sorted at every level, so equal schemas digest equally whatever order
/// the page wrote their keys in.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{}:{}", Value::from(key.as_str()), canonical_json(&map[key])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

/// SHA-256 of `bytes`, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::http::hex(digest::digest(&digest::SHA256, bytes).as_ref())
}

fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests;
