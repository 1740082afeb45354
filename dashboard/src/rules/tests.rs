//! The rule writer's tests: the output is a policy the engine accepts and decides as intended,
//! replacing keeps every other byte, and hostile values cannot change the document's shape.

use policy::{
    ContextDecision, ContextName, GroupName, Policy, SiteId, Subject, ToolDecision, ToolRef, UserId,
};
use toml_edit::DocumentMut;

use super::*;
use crate::diff::{DiffLine, lines};

const POLICY: &str = r#"# Company policy: edited by hand and by the dashboard.
groups = ["hr-staff", "finance"]

[defaults]
unknown_tools = "deny"   # nothing unless a rule says so
unknown_contexts = "deny"

# Search is open to everyone.
[[rule]]
id = "search"
sites = ["hr"]
tools.allow = ["search_*"]

[[redactor]]
name = "employee-id"
pattern = 'E\d{6}'
"#;

fn sites() -> Vec<SiteId> {
    vec![SiteId::new("hr"), SiteId::new("tasks")]
}

fn tool_rule(name: &str, group: Option<&str>, effect: Effect) -> GeneratedRule {
    GeneratedRule {
        site: "hr".into(),
        kind: EntryKind::Tool,
        name: name.into(),
        group: group.map(Into::into),
        effect,
    }
}

fn subject(groups: &[&str]) -> Subject {
    Subject {
        user: UserId::new("u1"),
        email: None,
        groups: groups.iter().map(|g| GroupName::new(*g)).collect(),
    }
}

fn tool_decision(text: &str, groups: &[&str], site: &str, tool: &str) -> ToolDecision {
    let policy = Policy::parse(text, "policy.toml", &sites()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    policy.view(&subject(groups), &SiteId::new(site)).tool(&ToolRef::named(tool)).0
}

fn rule_count(text: &str) -> usize {
    let document: DocumentMut = text.parse().unwrap_or_else(|e| panic!("{e}"));
    document.get("rule").and_then(|rules| rules.as_array_of_tables()).map_or(0, |rules| rules.len())
}

#[test]
fn an_appended_rule_parses_and_decides_for_its_group_only() {
    let out = upsert(POLICY, &tool_rule("submit_leave", Some("hr-staff"), Effect::Allow))
        .unwrap_or_else(|e| panic!("{e}"));
    let id = rule_id(&tool_rule("submit_leave", Some("hr-staff"), Effect::Allow));
    let block = format!(
        "[[rule]]\nid = \"{id}\"\ndescription = \"Written by the dashboard's inventory page\"\n\
         sites = [\"hr\"]\ngroups = [\"hr-staff\"]\ntools.allow = [\"submit_leave\"]\n\n"
    );
    // After the last rule; every other byte of the original, comments included, is kept.
    assert_eq!(out, POLICY.replace("[[redactor]]", &format!("{block}[[redactor]]")));
    assert_eq!(tool_decision(&out, &["hr-staff"], "hr", "submit_leave"), ToolDecision::Allow);
    assert!(tool_decision(&out, &["finance"], "hr", "submit_leave").is_deny());
    assert!(tool_decision(&out, &["hr-staff"], "tasks", "submit_leave").is_deny(), "other sites unchanged");
}

#[test]
fn everyone_rules_have_no_groups_and_approve_means_self_approval() {
    let out =
        upsert(POLICY, &tool_rule("submit_leave", None, Effect::Approve)).unwrap_or_else(|e| panic!("{e}"));
    assert!(!out[POLICY.len()..].contains("groups"));
    assert!(out.contains("tools.approve = [\"submit_leave\"]"));
    assert!(matches!(tool_decision(&out, &[], "hr", "submit_leave"), ToolDecision::AskApproval { .. }));
}

#[test]
fn a_deny_rule_beats_an_existing_allow() {
    assert_eq!(tool_decision(POLICY, &[], "hr", "search_salaries"), ToolDecision::Allow);
    let out =
        upsert(POLICY, &tool_rule("search_salaries", None, Effect::Deny)).unwrap_or_else(|e| panic!("{e}"));
    assert!(tool_decision(&out, &[], "hr", "search_salaries").is_deny());
    assert_eq!(tool_decision(&out, &[], "hr", "search_people"), ToolDecision::Allow);
}

#[test]
fn context_rules_write_the_contexts_list() {
    let rule = GeneratedRule {
        site: "hr".into(),
        kind: EntryKind::Context,
        name: "directory".into(),
        group: Some("finance".into()),
        effect: Effect::Allow,
    };
    let out = upsert(POLICY, &rule).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("contexts.allow = [\"directory\"]"));
    let policy = Policy::parse(&out, "policy.toml", &sites()).unwrap_or_else(|e| panic!("{e}"));
    let decide = |groups: &[&str]| {
        policy.view(&subject(groups), &SiteId::new("hr")).context(&ContextName::new("directory")).0
    };
    assert!(matches!(decide(&["finance"]), ContextDecision::Allow { .. }));
    assert!(matches!(decide(&[]), ContextDecision::Deny { .. }));
    let approve = GeneratedRule { effect: Effect::Approve, ..rule };
    assert_eq!(upsert(POLICY, &approve), Err(RuleEditError::ApproveContext));
}

#[test]
fn a_second_click_replaces_the_rule_in_place_and_keeps_every_other_byte() {
    let first = upsert(POLICY, &tool_rule("submit_leave", Some("hr-staff"), Effect::Allow))
        .unwrap_or_else(|e| panic!("{e}"));
    // Hand-written text after the dashboard's rule, with comments, must survive untouched.
    let before = format!(
        "{first}\n# Tasks are for finance.\n[[rule]]\nid = \"tasks\"  # trailing comment\nsites = [\"tasks\"]\ngroups = [\"finance\"]\ntools.allow = [\"*\"]\n"
    );
    let after = upsert(&before, &tool_rule("submit_leave", Some("hr-staff"), Effect::Deny))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rule_count(&after), rule_count(&before));
    let changes: Vec<DiffLine> =
        lines(&before, &after, 0).into_iter().filter(|line| !matches!(line, DiffLine::Skipped(_))).collect();
    assert_eq!(
        changes,
        vec![
            DiffLine::Removed("tools.allow = [\"submit_leave\"]".into()),
            DiffLine::Added("tools.deny = [\"submit_leave\"]".into())
        ]
    );
    assert!(tool_decision(&after, &["hr-staff"], "hr", "submit_leave").is_deny());
    // Another group is another rule.
    let other = upsert(&after, &tool_rule("submit_leave", Some("finance"), Effect::Allow))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rule_count(&other), rule_count(&after) + 1);
}

#[test]
fn a_replaced_rule_loses_hand_added_lists_but_keeps_its_leading_comment() {
    let rule = tool_rule("submit_leave", None, Effect::Allow);
    let id = rule_id(&rule);
    let text = format!(
        "[[rule]]\nid = \"search\"\n\n# Reviewed by HR in March.\n[[rule]]\nid = \"{id}\"\nsites = [\"hr\"]\ntools.deny = [\"other\"]\ntools.allow = [\"submit_leave\"]\n"
    );
    let out = upsert(&text, &rule).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("# Reviewed by HR in March.\n[[rule]]\nid = "), "{out}");
    assert!(!out.contains("other"), "{out}");
    assert_eq!(rule_count(&out), 2);
}

#[test]
fn hostile_names_and_sites_are_refused() {
    for name in ["a\"b", "x\n[[rule]]", "]]", "search_*", "a?", "", &"a".repeat(129), "naïve"] {
        let error = upsert(POLICY, &tool_rule(name, None, Effect::Allow));
        assert_eq!(error, Err(RuleEditError::InvalidName { name: name.to_owned() }));
    }
    for site in ["*", "", "HR", "hr\"]\n[[rule]]"] {
        let rule = GeneratedRule { site: site.into(), ..tool_rule("x", None, Effect::Allow) };
        assert_eq!(upsert(POLICY, &rule), Err(RuleEditError::InvalidSite { site: site.to_owned() }));
    }
}

#[test]
fn hostile_group_names_are_escaped_by_the_toml_writer() {
    let group = "evil\"]\ntools.allow = [\"*\"]\n[[rule]]\nid = \"x\" # ]]";
    let text = format!("groups = [{}]\n", toml_edit::Value::from(group));
    let out = upsert(&text, &tool_rule("submit_leave", Some(group), Effect::Deny))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rule_count(&out), 1, "exactly one rule, no injected one:\n{out}");
    let document: DocumentMut = out.parse().unwrap_or_else(|e| panic!("{e}"));
    let rule = &document["rule"][0];
    assert_eq!(rule["groups"][0].as_str(), Some(group));
    assert_eq!(rule["tools"].as_table_like().map(|t| t.len()), Some(1), "only the deny list");
    assert!(tool_decision(&out, &[group], "hr", "submit_leave").is_deny());
    assert!(tool_decision(&out, &[group], "hr", "anything").is_deny(), "no injected allow-all");
}

#[test]
fn groups_must_be_declared_and_documents_must_be_rule_tables() {
    let undeclared = upsert(POLICY, &tool_rule("x", Some("interns"), Effect::Allow));
    assert_eq!(undeclared, Err(RuleEditError::UndeclaredGroup { group: "interns".into() }));
    let inline = "rule = [{ id = \"a\" }]\n";
    assert_eq!(upsert(inline, &tool_rule("x", None, Effect::Allow)), Err(RuleEditError::RulesNotTables));
    assert!(matches!(
        upsert("groups = [", &tool_rule("x", None, Effect::Allow)),
        Err(RuleEditError::Parse(_))
    ));
}

#[test]
fn empty_and_unterminated_documents_get_a_well_formed_rule() {
    let out = upsert("", &tool_rule("add_task", None, Effect::Allow)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.starts_with("[[rule]]\n"), "{out}");
    assert_eq!(tool_decision(&out, &[], "hr", "add_task"), ToolDecision::Allow);
    let out =
        upsert("groups = []", &tool_rule("add_task", None, Effect::Allow)).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.starts_with("groups = []\n\n[[rule]]\n"), "{out}");
    assert_eq!(tool_decision(&out, &[], "hr", "add_task"), ToolDecision::Allow);
}

#[test]
fn rule_ids_are_deterministic_readable_and_distinct() {
    let id = rule_id(&tool_rule("search_docs", Some("hr staff/EU"), Effect::Allow));
    assert!(id.starts_with("dashboard-hr-tool-search_docs-hr_staff_EU-"), "{id}");
    assert_eq!(id.len(), "dashboard-hr-tool-search_docs-hr_staff_EU-".len() + 8);
    assert_eq!(
        id,
        rule_id(&tool_rule("search_docs", Some("hr staff/EU"), Effect::Deny)),
        "the effect is not part of the id"
    );
    let everyone = rule_id(&tool_rule("search_docs", None, Effect::Allow));
    assert!(everyone.starts_with("dashboard-hr-tool-search_docs-everyone-"));
    assert_ne!(everyone, rule_id(&tool_rule("search_docs", Some("everyone"), Effect::Allow)));
    // Same readable text, different rules.
    assert_ne!(
        rule_id(&tool_rule("a-b", Some("c"), Effect::Allow)),
        rule_id(&tool_rule("a", Some("b-c"), Effect::Allow))
    );
    assert_ne!(
        rule_id(&tool_rule("x", Some("a b"), Effect::Allow)),
        rule_id(&tool_rule("x", Some("a_b"), Effect::Allow))
    );
}

#[test]
fn form_values_parse() {
    assert_eq!(EntryKind::parse("tool"), Some(EntryKind::Tool));
    assert_eq!(EntryKind::parse("context"), Some(EntryKind::Context));
    assert_eq!(EntryKind::parse("Tool"), None);
    for effect in [Effect::Allow, Effect::Approve, Effect::Deny] {
        assert_eq!(Effect::parse(effect.as_str()), Some(effect));
    }
    assert_eq!(Effect::parse("ask"), None);
}
