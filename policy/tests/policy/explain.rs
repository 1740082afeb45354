//! The explanation as the CLI and the audit log see it: `Display` text and JSON shape.

use policy::{Policy, SiteId, Subject, ToolRef, UserId};

const POLICY: &str = r#"
groups = ["staff", "finance-approvers"]

[[rule]]
id = "staff"
sites = ["expenses"]
groups = ["staff"]
tools.allow = ["submit_*"]

[[rule]]
id = "big-expenses"
sites = ["expenses"]
tools.approve_by = { tools = ["submit_expense"], group = "finance-approvers", when = "args.amount > 1000" }
"#;

fn view() -> policy::PolicyView {
    let site = SiteId::new("expenses");
    let policy =
        Policy::parse(POLICY, "policy.toml", std::slice::from_ref(&site)).unwrap_or_else(|e| panic!("{e}"));
    let subject = Subject { user: UserId::new("ivan"), email: None, groups: vec!["staff".into()] };
    policy.view(&subject, &site)
}

#[test]
fn display_names_the_deciding_rule_and_every_match() {
    let view = view();
    let (decision, explanation) =
        view.tool_call(&ToolRef::named("submit_expense"), &serde_json::json!({"amount": 1500}));
    assert_eq!(decision.to_string(), "ask approval from group finance-approvers");
    assert_eq!(
        explanation.to_string(),
        "tool submit_expense on site expenses\n\
         decided by: rule big-expenses, tools.approve_by \"submit_expense\"\n\
         matching rules:\n  \
         rule staff: tools.allow \"submit_*\" -> allow [this site, group staff]\n  \
         rule big-expenses: tools.approve_by \"submit_expense\" -> approve by group finance-approvers [this site, everyone] when `args.amount > 1000`: true\n"
    );
}

#[test]
fn catalog_explanation_shows_pending_conditions() {
    let view = view();
    let (decision, explanation) = view.tool(&ToolRef::named("submit_expense"));
    assert_eq!(decision.to_string(), "allow");
    assert!(
        explanation.to_string().contains("when `args.amount > 1000`: decided at call time (not applied)")
    );
    assert_eq!(explanation.pending().count(), 1);
}

#[test]
fn json_shape() {
    let view = view();
    let (decision, explanation) =
        view.tool_call(&ToolRef::named("submit_expense"), &serde_json::json!({"amount": 5}));
    let decision = serde_json::to_value(&decision).unwrap_or_default();
    assert_eq!(decision, serde_json::json!({"decision": "allow"}));
    let json = serde_json::to_value(&explanation).unwrap_or_default();
    assert_eq!(json["site"], "expenses");
    assert_eq!(json["target"], serde_json::json!({"kind": "tool", "name": "submit_expense"}));
    assert_eq!(
        json["decided_by"],
        serde_json::json!({"kind": "rule", "rule": "staff", "list": "tools.allow", "pattern": "submit_*"})
    );
    assert_eq!(json["matches"][1]["condition"]["outcome"], serde_json::json!({"kind": "false"}));
    assert_eq!(
        json["matches"][1]["approver"],
        serde_json::json!({"kind": "group", "group": "finance-approvers"})
    );
}
