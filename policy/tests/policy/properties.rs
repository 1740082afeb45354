//! Property: for random policies and subjects, a tool matching a deny pattern of any rule that
//! applies to (subject, site) is never allowed, neither in the catalog nor at a call.

use std::fmt::Write as _;

use policy::{GroupName, Policy, SiteId, Subject, ToolAnnotations, ToolDecision, ToolRef, UserId};
use proptest::prelude::*;

const SITES: [&str; 3] = ["hr", "wiki", "expenses"];
const GROUPS: [&str; 3] = ["g1", "g2", "g3"];
const USERS: [&str; 3] = ["u1", "u2", "u3"];

#[derive(Debug, Clone)]
struct RandomRule {
    sites: Option<Vec<usize>>,
    users: Vec<usize>,
    groups: Vec<usize>,
    allow: Vec<String>,
    approve: Vec<String>,
    deny: Vec<String>,
    approve_by: Option<(Vec<String>, bool)>,
}

fn pattern() -> impl Strategy<Value = String> {
    "[ab_*?]{1,4}"
}

fn rule() -> impl Strategy<Value = RandomRule> {
    (
        proptest::option::of(proptest::collection::vec(0..3usize, 1..3)),
        proptest::collection::vec(0..3usize, 0..2),
        proptest::collection::vec(0..3usize, 0..2),
        proptest::collection::vec(pattern(), 0..3),
        proptest::collection::vec(pattern(), 0..2),
        proptest::collection::vec(pattern(), 0..2),
        proptest::option::of((proptest::collection::vec(pattern(), 1..2), any::<bool>())),
    )
        .prop_map(|(sites, users, groups, allow, approve, deny, approve_by)| RandomRule {
            sites,
            users,
            groups,
            allow,
            approve,
            deny,
            approve_by,
        })
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

fn names(indices: &[usize], table: &[&str]) -> Vec<String> {
    indices.iter().map(|&i| table[i].to_owned()).collect()
}

fn document(rules: &[RandomRule], default: &str, hint: bool) -> String {
    let mut text = String::from("groups = [\"g1\", \"g2\", \"g3\"]\n");
    let _ = writeln!(text, "[defaults]\nunknown_tools = {default:?}");
    if hint {
        text.push_str("consequential_hint = \"approve\"\n");
    }
    for (index, rule) in rules.iter().enumerate() {
        let _ = writeln!(text, "[[rule]]\nid = \"r{index}\"");
        if let Some(sites) = &rule.sites {
            let _ = writeln!(text, "sites = {}", list(&names(sites, &SITES)));
        }
        let _ = writeln!(text, "users = {}", list(&names(&rule.users, &USERS)));
        let _ = writeln!(text, "groups = {}", list(&names(&rule.groups, &GROUPS)));
        let _ = writeln!(text, "tools.allow = {}", list(&rule.allow));
        let _ = writeln!(text, "tools.approve = {}", list(&rule.approve));
        let _ = writeln!(text, "tools.deny = {}", list(&rule.deny));
        if let Some((tools, conditional)) = &rule.approve_by {
            let when = if *conditional { ", when = \"has(args.amount) && args.amount > 5\"" } else { "" };
            let _ = writeln!(text, "tools.approve_by = {{ tools = {}, group = \"g1\"{when} }}", list(tools));
        }
    }
    text
}

/// A reference matcher written independently of the crate's.
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            glob_matches(&pattern[1..], name) || (!name.is_empty() && glob_matches(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => glob_matches(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => glob_matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

fn applies(rule: &RandomRule, user: usize, groups: &[usize], site: usize) -> bool {
    let site_ok = rule.sites.as_ref().is_none_or(|sites| sites.contains(&site));
    let everyone = rule.users.is_empty() && rule.groups.is_empty();
    let subject_ok = everyone || rule.users.contains(&user) || rule.groups.iter().any(|g| groups.contains(g));
    site_ok && subject_ok
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_matching_deny_is_never_allowed(
        rules in proptest::collection::vec(rule(), 1..8),
        default in prop_oneof![Just("allow"), Just("approve"), Just("deny")],
        hint in any::<bool>(),
        user in 0..3usize,
        groups in proptest::collection::vec(0..3usize, 0..3),
        site in 0..3usize,
        tool in "[ab_]{1,4}",
        consequential in any::<bool>(),
        amount in 0..10i64,
    ) {
        let text = document(&rules, default, hint);
        let sites: Vec<SiteId> = SITES.iter().map(|s| SiteId::new(*s)).collect();
        let policy = Policy::parse(&text, "random.toml", &sites);
        let policy = match policy {
            Ok(policy) => policy,
            Err(errors) => return Err(TestCaseError::fail(format!("{errors}\n{text}"))),
        };
        let subject = Subject {
            user: UserId::new(USERS[user]),
            email: None,
            groups: groups.iter().map(|&g| GroupName::new(GROUPS[g])).collect(),
        };
        let denied = rules.iter().any(|rule| {
            applies(rule, user, &groups, site) && rule.deny.iter().any(|p| glob_matches(p.as_bytes(), tool.as_bytes()))
        });
        let view = policy.view(&subject, &SiteId::new(SITES[site]));
        let tool = ToolRef {
            annotations: ToolAnnotations { consequential, ..ToolAnnotations::default() },
            ..ToolRef::named(tool.as_str())
        };
        let (catalog, explanation) = view.tool(&tool);
        let (call, _) = view.tool_call(&tool, &serde_json::json!({ "amount": amount }));
        if denied {
            prop_assert!(catalog.is_deny(), "catalog {catalog:?}\n{explanation}\n{text}");
            prop_assert!(call.is_deny(), "call {call:?}\n{text}");
        }
        // The catalog is never stricter than a call: a catalog deny means every call is denied.
        if catalog.is_deny() {
            prop_assert!(call.is_deny(), "catalog denies but call {call:?}\n{text}");
        }
        if call == ToolDecision::Allow {
            prop_assert!(!denied);
        }
    }
}
