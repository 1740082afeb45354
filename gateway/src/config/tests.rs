//! Configuration parsing: good files convert, bad ones report every problem with line and key.

use super::*;

const GOOD: &str = r#"
public_url = "https://gateway.example"

[server]
listen = "127.0.0.1:8080"
admin_listen = "127.0.0.1:9090"
trusted_proxies = ["10.0.0.0/8", "192.168.1.1"]
log_format = "json"
insecure_no_sso = true

[timeouts]
header_read = "5s"
body_idle = "250ms"

[limits]
max_header_bytes = 9000

[sites.tasks]
host = "Tasks.Example"
upstream = "http://127.0.0.1:3000"
"#;

#[test]
fn good_file_converts_with_defaults() {
    let config = Config::parse(GOOD, "good.toml").expect("valid");
    assert_eq!(config.server.log_format, LogFormat::Json);
    assert_eq!(config.server.trusted_proxies.len(), 2);
    assert_eq!(config.timeouts.header_read, Duration::from_secs(5));
    assert_eq!(config.timeouts.body_idle, Duration::from_millis(250));
    assert_eq!(config.timeouts.upstream_connect, Duration::from_secs(5));
    assert_eq!(config.limits.max_header_bytes, 9000);
    assert_eq!(config.sites[0].host, "tasks.example");
    assert_eq!(config.sites[0].upstream.authority.as_str(), "127.0.0.1:3000");
    assert!(config.site_for_host("tasks.example").is_some());
}

#[test]
fn unknown_key_names_line_and_key() {
    let text = GOOD.replace("upstream = \"http", "upstreams = \"http");
    let error = Config::parse(&text, "bad.toml").expect_err("unknown key");
    assert_eq!(error.problems.len(), 2, "{error}");
    let problem = &error.problems[1];
    assert_eq!(problem.line, Some(20));
    assert_eq!(problem.key, "sites.tasks.upstreams", "{problem}");
    assert!(problem.message.contains("unknown field `upstreams`"), "{problem}");
    // The misspelt key leaves the real one missing, and the site's table says so.
    assert_eq!(error.problems[0].key, "sites.tasks", "{error}");
    assert!(error.problems[0].message.contains("missing field `upstream`"), "{error}");
}

#[test]
fn every_semantic_problem_is_reported() {
    let text = GOOD
        .replace("\"5s\"", "\"5 fortnights\"")
        .replace("127.0.0.1:8080", "localhost")
        .replace("http://127.0.0.1:3000", "ftp://x/y")
        .replace("\"10.0.0.0/8\"", "\"10.0.0.0/99\"");
    let error = Config::parse(&text, "bad.toml").expect_err("four problems");
    let rendered = error.to_string();
    assert_eq!(error.problems.len(), 4, "{rendered}");
    assert!(rendered.contains("bad.toml: line 5: server.listen:"), "{rendered}");
    assert!(rendered.contains("line 7: server.trusted_proxies[0]:"), "{rendered}");
    assert!(rendered.contains("line 12: timeouts.header_read:"), "{rendered}");
    assert!(rendered.contains("line 20: sites.tasks.upstream: must start with http"), "{rendered}");
}

#[test]
fn syntax_error_has_a_line() {
    let error = Config::parse("public_url = \"x\"\n[server\nlisten = 1", "x.toml").expect_err("syntax");
    assert_eq!(error.problems.len(), 1);
    assert_eq!(error.problems[0].line, Some(2), "{error}");
}

#[test]
fn duplicate_hosts_and_missing_sites_are_refused() {
    let twice =
        format!("{GOOD}\n[sites.other]\nhost = \"tasks.example\"\nupstream = \"http://127.0.0.1:1\"\n");
    let error = Config::parse(&twice, "x.toml").expect_err("duplicate host");
    assert!(error.to_string().contains("another site already uses this host"));

    let none = GOOD.split("[sites.tasks]").next().unwrap_or_default();
    let error = Config::parse(none, "x.toml").expect_err("no sites");
    assert!(error.to_string().contains("no site is configured"));
}

#[test]
fn values_refuse_nonsense() {
    assert!(values::duration("0s").is_err());
    assert!(values::duration("10").is_err());
    assert_eq!(values::duration("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(values::duration("1h30m"), Ok(Duration::from_secs(5400)));
    assert_eq!(values::duration("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(values::duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
    assert!(values::duration("soon").is_err());
    assert!(values::upstream("http://user:pw@host").is_err());
    assert!(values::upstream("http://host/path").is_err());
    assert!(values::host_name("host:80").is_err());
    assert!(values::site_id("Bad Id").is_err());
}

#[test]
fn form_rules_and_page_tools_convert_and_default() {
    let config = Config::parse(GOOD, "good.toml").expect("valid");
    assert!(config.sites[0].page_tools, "page tools are on unless switched off");
    assert!(config.sites[0].forms.is_empty());
    let text = format!(
        "{GOOD}page_tools = false\n[sites.tasks.forms]\nauto = true\n[[sites.tasks.forms.rule]]\n\
         selector = \"form#expense\"\nname = \"submit_expense\"\ndescription = \"Submit a claim\"\n\
         params = {{ amount = \"Amount\" }}\nautosubmit = true\n"
    );
    let config = Config::parse(&text, "forms.toml").expect("valid");
    assert!(!config.sites[0].page_tools);
    assert!(config.sites[0].forms.auto());
    assert!(!config.sites[0].forms.is_empty());
}

#[test]
fn form_rules_are_scoped_to_pages_by_path_globs() {
    let text = format!(
        "{GOOD}[[sites.tasks.forms.rule]]\nselector = \"form#employee_form\"\nname = \"add_employee\"\n\
         description = \"Create an employee\"\npath = \"/admin/staff/employee/add/\"\n\
         [[sites.tasks.forms.rule]]\nselector = \"form#search\"\nname = \"search\"\ndescription = \"Find\"\n\
         path = [\"/tickets/*/edit\", \"/search\"]\n\
         [[sites.tasks.forms.rule]]\nselector = \"form#any\"\nname = \"anywhere\"\ndescription = \"d\"\n"
    );
    let config = Config::parse(&text, "forms.toml").expect("valid");
    let scopes = &config.sites[0].form_scopes;
    assert_eq!(scopes.len(), 3);
    assert!(scopes[0].applies_to("/admin/staff/employee/add/"));
    assert!(!scopes[0].applies_to("/admin/staff/employee/1/change/"), "the change page is not the add page");
    assert!(scopes[1].applies_to("/tickets/42/edit") && scopes[1].applies_to("/search"));
    assert!(!scopes[1].applies_to("/tickets/42/edit/more") && !scopes[1].applies_to("/search/x"));
    assert!(scopes[2].paths.is_empty() && scopes[2].applies_to("/anything"), "no path: every page");

    let bad = format!(
        "{GOOD}[[sites.tasks.forms.rule]]\nselector = \"form\"\nname = \"n\"\ndescription = \"d\"\n\
         path = [\"/ok\", \"relative/path\", \"/q?x=1\"]\n"
    );
    let error = Config::parse(&bad, "forms.toml").expect_err("bad paths");
    assert_eq!(error.problems.len(), 2, "{error}");
    assert_eq!(error.problems[0].key, "sites.tasks.forms.rule[0].path");
    assert!(error.problems[0].message.contains("must start with /"), "{}", error.problems[0]);
    assert_eq!(error.problems[0].line, Some(21), "the rule's line");
    assert!(error.problems[1].message.contains("no query"), "{}", error.problems[1]);
}

#[test]
fn a_bad_schema_fragment_in_a_rule_is_a_problem_with_its_line() {
    let text = format!(
        "{GOOD}[[sites.tasks.forms.rule]]\nselector = \"form\"\nname = \"n\"\ndescription = \"d\"\n\
         params = {{ hired = {{ format = \"day\" }}, name = {{ description = \"Name\", maxLength = 120 }} }}\n"
    );
    let error = Config::parse(&text, "forms.toml").expect_err("bad format");
    assert_eq!(error.problems.len(), 1, "{error}");
    assert_eq!(error.problems[0].key, "sites.tasks.forms.rule[0].params.hired");
    assert_eq!(error.problems[0].line, Some(21), "the rule's line");
    assert!(error.problems[0].message.contains("format must be one of"), "{}", error.problems[0]);
    let fixed = text.replace("format = \"day\"", "format = \"date\"");
    Config::parse(&fixed, "forms.toml").expect("valid fragments");
}

#[test]
fn every_broken_form_rule_is_reported_with_its_line() {
    let text = format!(
        "{GOOD}[[sites.tasks.forms.rule]]\nselector = \"form[\"\nname = \"ok\"\ndescription = \"d\"\n\
         [[sites.tasks.forms.rule]]\nselector = \"form\"\nname = \"bad name!\"\ndescription = \"d\"\n"
    );
    let error = Config::parse(&text, "forms.toml").expect_err("broken rules");
    assert_eq!(error.problems.len(), 2, "{error}");
    assert_eq!(error.problems[0].key, "sites.tasks.forms.rule[0]");
    assert!(error.problems[0].message.contains("selector"), "{}", error.problems[0]);
    assert_eq!(error.problems[0].line, Some(21), "the line of the broken rule");
    assert_eq!(error.problems[1].key, "sites.tasks.forms.rule[1]");
    assert!(error.problems[1].message.contains("bad name!"), "{}", error.problems[1]);
    let unknown = format!(
        "{GOOD}[[sites.tasks.forms.rule]]\nselector = \"form\"\nname = \"n\"\ndescription = \"d\"\nsubmit = 1\n"
    );
    let error = Config::parse(&unknown, "forms.toml").expect_err("unknown key");
    assert!(error.to_string().contains("unknown field `submit`"), "{error}");
}

#[test]
fn a_bad_action_glob_or_error_selector_is_a_problem_with_its_line() {
    let text = format!(
        "{GOOD}[[sites.tasks.forms.rule]]\nselector = \"form\"\nname = \"n\"\ndescription = \"d\"\n\
         action = \"staff/*/add/\"\nerror_selector = \"ul.errors[\"\n"
    );
    let error = Config::parse(&text, "forms.toml").expect_err("bad action and selector");
    assert_eq!(error.problems.len(), 2, "{error}");
    let keys: Vec<&str> = error.problems.iter().map(|problem| problem.key.as_str()).collect();
    assert!(keys.contains(&"sites.tasks.forms.rule[0].error_selector"), "{keys:?}");
    assert!(keys.contains(&"sites.tasks.forms.rule[0]"), "{keys:?}");
    assert!(error.problems.iter().all(|problem| problem.line == Some(21)), "{error}");
    assert!(error.to_string().contains("action path \"staff/*/add/\" must start with /"), "{error}");
    let fixed = text
        .replace("action = \"staff/*/add/\"", "action = [\"/staff/*/add/\"]")
        .replace("ul.errors[", "ul.errors li");
    let config = Config::parse(&fixed, "forms.toml").expect("valid");
    assert!(config.sites[0].forms.scopes_actions());
    assert_eq!(config.sites[0].error_selectors("/anything"), ["ul.errors li"]);
}
