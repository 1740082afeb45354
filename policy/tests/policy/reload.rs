//! Reload at this layer: a broken document yields errors and never a policy, so the gateway's
//! `Arc<Policy>` swap only ever happens with a good one.

use std::sync::Arc;

use policy::{Policy, SiteId, Subject, ToolDecision, ToolRef, UserId};

const GOOD: &str = r#"
[[rule]]
id = "wiki"
sites = ["wiki"]
tools.allow = ["search"]
"#;

const BROKEN: &str = r#"
[[rule]]
id = "wiki"
sites = ["wiki"]
tools.allow = ["search", "bad pattern"]
"#;

/// What the gateway does on reload: parse, and swap only on success.
fn reload(current: &mut Arc<Policy>, text: &str) -> Result<(), policy::PolicyErrors> {
    let next = Policy::parse(text, "policy.toml", &[SiteId::new("wiki")])?;
    *current = Arc::new(next);
    Ok(())
}

#[test]
fn a_broken_document_does_not_replace_the_good_policy() {
    let subject = Subject { user: UserId::new("u"), email: None, groups: vec![] };
    let site = SiteId::new("wiki");
    let mut current = Arc::new(
        Policy::parse(GOOD, "policy.toml", std::slice::from_ref(&site)).unwrap_or_else(|e| panic!("{e}")),
    );
    let before = Arc::clone(&current);

    let errors = reload(&mut current, BROKEN).err().unwrap_or_else(|| panic!("broken policy parsed"));
    assert_eq!(errors.len(), 1);
    let error = &errors.errors[0];
    assert_eq!(
        (error.file.as_str(), error.line, error.key.as_str()),
        ("policy.toml", 5, "rule[0].tools.allow[1]")
    );
    assert!(Arc::ptr_eq(&before, &current), "the old policy stays in force");
    let (decision, _) = current.view(&subject, &site).tool(&ToolRef::named("search"));
    assert_eq!(decision, ToolDecision::Allow);

    let replaced = GOOD.replace("tools.allow", "tools.deny");
    assert!(reload(&mut current, &replaced).is_ok());
    assert!(!Arc::ptr_eq(&before, &current));
    let (decision, _) = current.view(&subject, &site).tool(&ToolRef::named("search"));
    assert!(decision.is_deny());
}

#[test]
fn errors_render_as_file_line_key_message() {
    let errors = Policy::parse(BROKEN, "policy.toml", &[SiteId::new("wiki")])
        .err()
        .unwrap_or_else(|| panic!("parsed"));
    assert_eq!(
        errors.to_string(),
        "policy.toml:5: rule[0].tools.allow[1]: bad pattern: invalid character ' ' in pattern \"bad pattern\": \
         use letters, digits, '_', '.', '-', and the wildcards '*' and '?'"
    );
}
