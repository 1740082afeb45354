//! Which form actions are approval-gated: learnt from the agent API (a catalog report that shows
//! a form tool needing approval, and every approval requested for a form tool), bounded per site
//! and forgotten when no page reports them for a week. The proxy's form enforcement asks it.

use super::FormTarget;
use std::collections::HashMap;
use std::sync::RwLock;

/// Most gated actions remembered per site; past it the least recently reported one goes.
pub const MAX_GATED_PER_SITE: usize = 256;
/// A gated action nobody reported for this long is forgotten (the page no longer has it).
pub const GATE_LIFETIME_SECONDS: u64 = 7 * 24 * 3600;
/// Longest action path remembered (as `FormTarget` allows).
const MAX_ACTION_PATH: usize = 2048;
/// The form actions (site, path) whose agent-marked submissions need an approval. In memory,
/// bounded per site; sites are the configured ones, so the whole is bounded too. Any method
/// matches: a method override (`_method`) may turn a POST into the approved DELETE, and the
/// approval's own target decides the method.
#[derive(Default)]
pub struct GatedForms {
    /// Site id → action path → when it was last reported (UNIX seconds).
    sites: RwLock<HashMap<String, HashMap<String, u64>>>,
}

impl GatedForms {
    /// Remembers that `target` on `site` is an approval-gated form action (refreshes it when
    /// known). Paths that are not absolute on the site itself are ignored.
    pub fn register(&self, site: &str, target: &FormTarget, now: u64) {
        let path = target.action_path.as_str();
        if !is_site_path(path) {
            return;
        }
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
        paths.insert(path.to_owned(), now);
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
