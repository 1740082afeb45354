//! Lookup structures built at load time so a decision touches only what can match.
//!
//! [`RuleIndex`] finds the rules for (site, user, groups) without scanning every rule;
//! [`PatternIndex`] finds the entries whose pattern can match a name: exact names by hash, and
//! wildcard patterns by their literal prefix (one hash probe per distinct prefix length).

use std::collections::HashMap;

use crate::ids::{GroupName, SiteId, UserId};
use crate::model::{Entry, Rule};
use crate::subject::Subject;

/// Rule indices by site and principal.
#[derive(Debug, Default)]
pub(crate) struct RuleIndex {
    every_site: PrincipalIndex,
    by_site: HashMap<SiteId, PrincipalIndex>,
}

#[derive(Debug, Default)]
struct PrincipalIndex {
    everyone: Vec<usize>,
    users: HashMap<UserId, Vec<usize>>,
    groups: HashMap<GroupName, Vec<usize>>,
}

impl RuleIndex {
    pub(crate) fn new(rules: &[Rule]) -> Self {
        let mut index = Self::default();
        for (position, rule) in rules.iter().enumerate() {
            match &rule.sites {
                None => index.every_site.add(position, rule),
                Some(sites) => {
                    for site in sites {
                        index.by_site.entry(site.clone()).or_default().add(position, rule);
                    }
                }
            }
        }
        index
    }

    /// Calls `found` with every rule applying to `subject` on `site` (a rule may come twice).
    pub(crate) fn for_each(&self, subject: &Subject, site: &SiteId, mut found: impl FnMut(usize)) {
        self.every_site.for_each(subject, &mut found);
        if let Some(principals) = self.by_site.get(site) {
            principals.for_each(subject, &mut found);
        }
    }
}

impl PrincipalIndex {
    fn add(&mut self, position: usize, rule: &Rule) {
        if rule.users.is_empty() && rule.groups.is_empty() {
            self.everyone.push(position);
        }
        for user in &rule.users {
            self.users.entry(user.clone()).or_default().push(position);
        }
        for group in &rule.groups {
            self.groups.entry(group.clone()).or_default().push(position);
        }
    }

    fn for_each(&self, subject: &Subject, found: &mut impl FnMut(usize)) {
        self.everyone.iter().copied().for_each(&mut *found);
        if let Some(rules) = self.users.get(&subject.user) {
            rules.iter().copied().for_each(&mut *found);
        }
        if self.groups.is_empty() {
            return;
        }
        for group in &subject.groups {
            if let Some(rules) = self.groups.get(group) {
                rules.iter().copied().for_each(&mut *found);
            }
        }
    }
}

/// Entry indices by the names their patterns can match.
#[derive(Debug, Default)]
pub(crate) struct PatternIndex {
    exact: HashMap<String, Vec<usize>>,
    by_prefix: HashMap<String, Vec<usize>>,
    /// Distinct lengths of the keys of `by_prefix`, ascending.
    prefix_lengths: Vec<usize>,
}

impl PatternIndex {
    pub(crate) fn new(entries: &[Entry]) -> Self {
        let mut index = Self::default();
        for (position, entry) in entries.iter().enumerate() {
            if entry.glob.is_exact() {
                index.exact.entry(entry.glob.as_str().to_owned()).or_default().push(position);
            } else {
                let prefix = entry.glob.literal_prefix().to_owned();
                index.by_prefix.entry(prefix).or_default().push(position);
            }
        }
        index.prefix_lengths = index.by_prefix.keys().map(String::len).collect();
        index.prefix_lengths.sort_unstable();
        index.prefix_lengths.dedup();
        index
    }

    /// The buckets of entries whose pattern may match `name` (the caller still checks the
    /// glob; exact entries are certain). Each bucket is in document order.
    pub(crate) fn buckets(&self, name: &str) -> Vec<&[usize]> {
        let mut buckets = Vec::new();
        if let Some(entries) = self.exact.get(name) {
            buckets.push(entries.as_slice());
        }
        for &length in &self.prefix_lengths {
            if length > name.len() {
                break;
            }
            let Some(prefix) = name.get(..length) else {
                continue;
            };
            if let Some(entries) = self.by_prefix.get(prefix) {
                buckets.push(entries.as_slice());
            }
        }
        buckets
    }
}
