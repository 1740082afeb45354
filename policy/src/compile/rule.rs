//! Compiles one `[[rule]]`: its sites, users, groups, condition, redactions and pattern lists
//! become a [`Rule`] and the [`Entry`]s the pattern indexes point to.

use std::collections::BTreeSet;
use std::sync::Arc;

use toml::Spanned;

use super::Compiler;
use crate::decision::Approver;
use crate::document::RuleDocument;
use crate::glob::Glob;
use crate::ids::{GroupName, RuleId, SiteId, UserId};
use crate::model::{Entry, List, Rule};

impl Compiler<'_> {
    pub(super) fn rule(
        &mut self,
        index: usize,
        position: usize,
        raw: &RuleDocument,
        tool_entries: &mut Vec<Entry>,
        context_entries: &mut Vec<Entry>,
    ) -> Rule {
        let prefix = format!("rule[{index}]");
        let (first_tool, first_context) = (tool_entries.len(), context_entries.len());
        let sites = self.rule_sites(raw, &prefix);
        let mut users = Vec::new();
        for (i, user) in raw.users.iter().enumerate() {
            if user.get_ref().is_empty() {
                self.error(user.span(), format!("{prefix}.users[{i}]"), "empty user id");
            } else {
                users.push(UserId::new(user.get_ref().as_str()));
            }
        }
        let mut groups = Vec::new();
        for (i, group) in raw.groups.iter().enumerate() {
            let name = GroupName::new(group.get_ref().as_str());
            if self.groups.contains(&name) {
                groups.push(name);
            } else {
                let message = format!("undeclared group \"{name}\": add it to the top-level groups list");
                self.error(group.span(), format!("{prefix}.groups[{i}]"), message);
            }
        }
        let when = raw.when.as_ref().and_then(|w| self.condition(w, format!("{prefix}.when")));
        let redact = self.redaction_set(&raw.redact, &format!("{prefix}.redact"));

        let lists = [
            (List::ToolsAllow, &raw.tools.allow, "tools.allow"),
            (List::ToolsApprove, &raw.tools.approve, "tools.approve"),
            (List::ToolsDeny, &raw.tools.deny, "tools.deny"),
        ];
        for (list, patterns, key) in lists {
            let approver = (list == List::ToolsApprove).then_some(Approver::User);
            for (i, pattern) in patterns.iter().enumerate() {
                if let Some(glob) = self.glob(pattern, format!("{prefix}.{key}[{i}]")) {
                    tool_entries.push(Entry {
                        rule: position,
                        list,
                        glob,
                        approver: approver.clone(),
                        when: None,
                    });
                }
            }
        }
        if let Some(approve_by) = &raw.tools.approve_by {
            let approver = match &approve_by.group {
                None => Some(Approver::User),
                Some(group) => {
                    let name = GroupName::new(group.get_ref().as_str());
                    if self.groups.contains(&name) {
                        Some(Approver::Group(name))
                    } else {
                        let message = format!(
                            "undeclared approver group \"{name}\": add it to the top-level groups list"
                        );
                        self.error(group.span(), format!("{prefix}.tools.approve_by.group"), message);
                        None
                    }
                }
            };
            // One condition shared by all the patterns of this approve_by.
            let when = approve_by
                .when
                .as_ref()
                .and_then(|w| self.condition(w, format!("{prefix}.tools.approve_by.when")))
                .map(Arc::new);
            for (i, pattern) in approve_by.tools.iter().enumerate() {
                let glob = self.glob(pattern, format!("{prefix}.tools.approve_by.tools[{i}]"));
                if let (Some(glob), Some(approver)) = (glob, approver.clone()) {
                    tool_entries.push(Entry {
                        rule: position,
                        list: List::ToolsApproveBy,
                        glob,
                        approver: Some(approver),
                        when: when.clone(),
                    });
                }
            }
            if approve_by.tools.is_empty() {
                let span = approve_by.group.as_ref().map_or(raw.id.span(), Spanned::span);
                self.error(
                    span,
                    format!("{prefix}.tools.approve_by.tools"),
                    "approve_by needs at least one tool pattern",
                );
            }
        }
        let context_lists = [
            (List::ContextsAllow, &raw.contexts.allow, "contexts.allow"),
            (List::ContextsDeny, &raw.contexts.deny, "contexts.deny"),
        ];
        for (list, patterns, key) in context_lists {
            for (i, pattern) in patterns.iter().enumerate() {
                if let Some(glob) = self.glob(pattern, format!("{prefix}.{key}[{i}]")) {
                    context_entries.push(Entry { rule: position, list, glob, approver: None, when: None });
                }
            }
        }
        Rule {
            id: RuleId::new(raw.id.get_ref().as_str()),
            sites,
            users,
            groups,
            when,
            redact,
            tool_entries: first_tool..tool_entries.len(),
            context_entries: first_context..context_entries.len(),
        }
    }

    fn rule_sites(&mut self, raw: &RuleDocument, prefix: &str) -> Option<Vec<SiteId>> {
        let spanned = raw.sites.as_ref()?;
        let listed = spanned.get_ref();
        if listed.is_empty() {
            self.error(
                spanned.span(),
                format!("{prefix}.sites"),
                "empty sites list: leave sites out to mean every site",
            );
            return Some(Vec::new());
        }
        if listed.iter().any(|site| site.get_ref() == "*") {
            if listed.len() > 1 {
                let message = "\"*\" means every site and cannot be combined with site ids";
                self.error(listed[0].span(), format!("{prefix}.sites"), message);
            }
            return None;
        }
        let mut sites = BTreeSet::new();
        for (i, site) in listed.iter().enumerate() {
            let id = SiteId::new(site.get_ref().as_str());
            if self.known_sites.contains(&id) {
                sites.insert(id);
            } else {
                let message = format!("unknown site {:?}: not in the gateway configuration", site.get_ref());
                self.error(site.span(), format!("{prefix}.sites[{i}]"), message);
            }
        }
        Some(sites.into_iter().collect())
    }

    fn glob(&mut self, pattern: &Spanned<String>, key: String) -> Option<Glob> {
        match Glob::new(pattern.get_ref()) {
            Ok(glob) => Some(glob),
            Err(error) => {
                self.error(pattern.span(), key, format!("bad pattern: {error}"));
                None
            }
        }
    }
}
