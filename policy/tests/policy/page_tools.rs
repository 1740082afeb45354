//! `PolicyView::offers_tools`: when page tools are switched off for a subject on a site.

use policy::{Policy, SiteId, Subject, UserId};

const POLICY: &str = r#"
groups = ["staff", "contractors"]

[sites.wiki]
unknown_tools = "allow"

[[rule]]
id = "staff"
sites = ["tasks"]
groups = ["staff"]
tools.allow = ["add_task"]

[[rule]]
id = "contractors"
sites = ["tasks"]
groups = ["contractors"]
tools.deny = ["*"]

[[rule]]
id = "example-only"
sites = ["tasks"]
tools.approve = ["close_task"]
when = "user.email.endsWith('@example.org')"
"#;

fn offers(user: &str, email: Option<&str>, groups: &[&str], site: &str) -> bool {
    let sites = [SiteId::new("tasks"), SiteId::new("wiki")];
    let policy = Policy::parse(POLICY, "policy.toml", &sites).unwrap_or_else(|e| panic!("{e}"));
    let subject = Subject {
        user: UserId::new(user),
        email: email.map(str::to_owned),
        groups: groups.iter().map(|group| (*group).into()).collect(),
    };
    policy.view(&subject, &SiteId::new(site)).offers_tools()
}

#[test]
fn a_rule_that_allows_or_approves_something_switches_tools_on() {
    assert!(offers("ann", Some("ann@corp.example"), &["staff"], "tasks"));
    assert!(offers("eve", Some("eve@example.org"), &["contractors"], "tasks"));
}

#[test]
fn only_denials_and_a_deny_default_switch_tools_off() {
    assert!(!offers("carl", Some("carl@corp.example"), &["contractors"], "tasks"));
    assert!(!offers("nobody", Some("n@corp.example"), &[], "tasks"));
    // A condition that fails to evaluate (no email) contributes nothing either.
    assert!(!offers("anon", None, &[], "tasks"));
}

#[test]
fn a_permissive_site_default_keeps_tools_on() {
    assert!(offers("carl", None, &["contractors"], "wiki"));
}
