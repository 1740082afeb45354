//! Which form actions are approval-gated: learnt from the agent API (a catalog report that shows
//! a form tool needing approval, and every approval requested for a form tool), bounded per site
//! and forgotten when no page reports them for a week. The proxy's form enforcement asks it.
//!
//! Every replica guards every gated action, wherever it was learnt: a new one is written to the
//! store (`Table::GatedForms`) and announced, the others add it when they hear of it and load
//! them all at start and after missed notices; and a replica asked about a state-changing
//! request (not GET, HEAD, OPTIONS) to a path it does not know reads the store before letting
//! the request pass unchecked (a store that does not answer counts as gated: the body is
//! checked, which an unmarked submission passes).

use super::FormTarget;
use crate::store::{StoreHandle, Table};
use std::collections::HashMap;
use std::sync::RwLock;

/// Most gated actions remembered per site; past it the least recently reported one goes.
pub const MAX_GATED_PER_SITE: usize = 256;
/// A gated action nobody reported for this long is forgotten (the page no longer has it).
pub const GATE_LIFETIME_SECONDS: u64 = 7 * 24 * 3600;
/// Longest action path remembered (as `FormTarget` allows).
const MAX_ACTION_PATH: usize = 2048;
/// A known gate is written to the store again (its last report refreshed) at most this often.
const STORE_REFRESH_SECONDS: u64 = 3600;
/// The form actions (site, path) whose agent-marked submissions need an approval. In memory,
/// bounded per site; sites are the configured ones, so the whole is bounded too. Any method
/// matches: a method override (`_method`) may turn a POST into the approved DELETE, and the
/// approval's own target decides the method.
#[derive(Default)]
pub struct GatedForms {
    /// Site id → action path → when it was last reported (UNIX seconds).
    sites: RwLock<HashMap<String, HashMap<String, u64>>>,
    /// Where every replica's gates are kept; `None`: this process's memory only (unit tests).
    store: Option<StoreHandle>,
}

impl GatedForms {
    /// The gates kept in `store`, shared with every replica on it.
    pub fn new(store: StoreHandle) -> Self {
        Self { sites: RwLock::default(), store: Some(store) }
    }

    /// [`GatedForms::register`], and, unless this replica stored it within the hour, writes it
    /// to the store and tells the other replicas (awaited: the gate is shared before the
    /// approval it guards is asked for).
    pub async fn remember(&self, site: &str, target: &FormTarget, now: u64) {
        let path = target.action_path.as_str();
        if !is_site_path(path) {
            return;
        }
        let stored_recently =
            self.last_seen(site, path).is_some_and(|seen| seen + STORE_REFRESH_SECONDS > now);
        self.register_path(site, path, now);
        let Some(store) = self.store.as_ref().filter(|_| !stored_recently) else { return };
        let written = match store.put(Table::GatedForms, &gate_key(site, path), &now.to_be_bytes()).await {
            Ok(()) => store.announce("gate", site).await,
            Err(error) => Err(error),
        };
        if let Err(error) = written {
            tracing::error!(error = %error, site, "a gated form action could not be shared with the other replicas");
        }
    }

    /// Whether a request with `method` to `path` on `site` is checked: a gate this replica
    /// knows, or (a state-changing method on a shared store) one the store knows.
    pub async fn is_guarded(&self, method: &http::Method, site: &str, path: &str, now: u64) -> bool {
        if self.is_gated(site, path, now) {
            return true;
        }
        let Some(store) = self.store.as_ref().filter(|store| store.is_shared()) else { return false };
        if method.is_safe() || !is_site_path(path) {
            return false;
        }
        // Boxed: the store's read is rare, and inline it would grow every request's future.
        Box::pin(self.is_stored_gate(store, site, path, now)).await
    }

    /// Whether the store knows a live gate for `path` on `site` (learnt here if so); unreadable
    /// counts as gated, so the request's body is checked.
    async fn is_stored_gate(&self, store: &StoreHandle, site: &str, path: &str, now: u64) -> bool {
        match store.get(Table::GatedForms, &gate_key(site, path)).await {
            Ok(Some(bytes)) => match seen_at(&bytes) {
                Some(seen) if seen.saturating_add(GATE_LIFETIME_SECONDS) > now => {
                    self.register_path(site, path, seen);
                    true
                }
                _ => false,
            },
            Ok(None) => false,
            Err(error) => {
                tracing::warn!(error = %error, site, "gated form actions unreadable; checking the request's body");
                true
            }
        }
    }

    /// Adds every gate the store knows (other replicas' included) that is still reported.
    pub async fn load(&self) {
        let Some(store) = &self.store else { return };
        let now = crate::support::clock::unix_now();
        let mut from = Vec::new();
        loop {
            let page = match store.range(Table::GatedForms, &from, 512).await {
                Ok(page) => page,
                Err(error) => {
                    tracing::error!(error = %error, "gated form actions could not be loaded");
                    return;
                }
            };
            for (key, value) in &page {
                let text = String::from_utf8_lossy(key);
                if let (Some((site, path)), Some(seen)) = (text.split_once('\0'), seen_at(value))
                    && seen.saturating_add(GATE_LIFETIME_SECONDS) > now
                    && is_site_path(path)
                {
                    self.register_path(site, path, seen);
                }
            }
            let Some((last, _)) = page.last() else { return };
            if page.len() < 512 {
                return;
            }
            from = last.clone();
            from.push(0);
        }
    }

    /// Removes the stored gates nobody reported for a week; returns how many.
    pub async fn sweep(&self, now: u64) -> Result<usize, crate::store::StoreError> {
        let Some(store) = &self.store else { return Ok(0) };
        store
            .sweep(Table::GatedForms, move |bytes| {
                seen_at(bytes).is_none_or(|seen| seen.saturating_add(GATE_LIFETIME_SECONDS) <= now)
            })
            .await
    }

    fn last_seen(&self, site: &str, path: &str) -> Option<u64> {
        let sites = self.sites.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        sites.get(site).and_then(|paths| paths.get(path)).copied()
    }

    /// Remembers that `target` on `site` is an approval-gated form action (refreshes it when
    /// known). Paths that are not absolute on the site itself are ignored.
    pub fn register(&self, site: &str, target: &FormTarget, now: u64) {
        let path = target.action_path.as_str();
        if is_site_path(path) {
            self.register_path(site, path, now);
        }
    }

    fn register_path(&self, site: &str, path: &str, now: u64) {
        let mut sites = self.sites.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let paths = sites.entry(site.to_owned()).or_default();
        if !paths.contains_key(path) && paths.len() >= MAX_GATED_PER_SITE {
            paths.retain(|_, seen| seen.saturating_add(GATE_LIFETIME_SECONDS) > now);
            if paths.len() >= MAX_GATED_PER_SITE
                && let Some(oldest) =
                    paths.iter().min_by_key(|(_, seen)| **seen).map(|(oldest, _)| oldest.clone())
            {
                paths.remove(&oldest);
            }
        }
        let seen = paths.entry(path.to_owned()).or_insert(now);
        *seen = (*seen).max(now);
    }

    /// Whether requests to `path` on `site` are checked.
    pub fn is_gated(&self, site: &str, path: &str, now: u64) -> bool {
        let sites = self.sites.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        sites
            .get(site)
            .and_then(|paths| paths.get(path))
            .is_some_and(|seen| seen.saturating_add(GATE_LIFETIME_SECONDS) > now)
    }
}

/// A gate's store key: the site and the path.
fn gate_key(site: &str, path: &str) -> Vec<u8> {
    format!("{site}\0{path}").into_bytes()
}

/// When a stored gate was last reported.
fn seen_at(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

/// A form target from the page's report, if it is one the proxy can guard: an upper-case method
/// and an absolute path on the site itself.
pub fn reported_target(method: &str, action: &str) -> Option<FormTarget> {
    let method = method.trim().to_ascii_uppercase();
    let method_ok = (1..=16).contains(&method.len()) && method.bytes().all(|byte| byte.is_ascii_uppercase());
    (method_ok && is_site_path(action)).then(|| FormTarget { method, action_path: action.to_owned() })
}

/// An absolute path on the site itself (not `//host`, no query or fragment).
fn is_site_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.starts_with("//")
        && path.len() <= MAX_ACTION_PATH
        && !path.contains(['?', '#'])
        && path.bytes().all(|byte| byte.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str) -> FormTarget {
        FormTarget { method: "POST".into(), action_path: path.into() }
    }

    #[test]
    fn gated_actions_are_per_site_bounded_and_expire() {
        let gates = GatedForms::default();
        gates.register("expenses", &target("/submit"), 100);
        assert!(gates.is_gated("expenses", "/submit", 101));
        assert!(!gates.is_gated("tasks", "/submit", 101), "another site");
        assert!(!gates.is_gated("expenses", "/submit/", 101), "another path");
        assert!(!gates.is_gated("expenses", "/submit", 100 + GATE_LIFETIME_SECONDS), "forgotten");
        for index in 0..MAX_GATED_PER_SITE {
            gates.register("expenses", &target(&format!("/form/{index}")), 200 + index as u64);
        }
        assert!(!gates.is_gated("expenses", "/submit", 300), "the least recently reported one went");
        assert!(gates.is_gated("expenses", "/form/0", 300) && gates.is_gated("expenses", "/form/255", 300));
        let count = gates.sites.read().map(|sites| sites["expenses"].len()).unwrap_or_default();
        assert_eq!(count, MAX_GATED_PER_SITE);
    }

    #[test]
    fn only_paths_on_the_site_are_targets() {
        assert_eq!(reported_target("post", "/submit"), Some(target("/submit")));
        for (method, action) in [
            ("POST", "https://elsewhere.example/submit"),
            ("POST", "//elsewhere.example/submit"),
            ("POST", "/submit?x=1"),
            ("POST", "submit"),
            ("", "/submit"),
            ("PO ST", "/submit"),
            ("POST", &format!("/{}", "a".repeat(MAX_ACTION_PATH))),
        ] {
            assert_eq!(reported_target(method, action), None, "{method} {action}");
        }
    }
}
