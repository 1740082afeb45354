//! Runs every `tests/cases/*.toml`: a policy, a subject, and checks (site, tool or context,
//! args) with the expected decision and explanation facts; or, for malformed policies, the
//! expected errors (line, key, message fragment).

use std::fmt::Write as _;
use std::path::Path;

use policy::{
    Approver, ContextDecision, ContextName, DecidedBy, Explanation, Policy, SiteId, Subject, ToolAnnotations,
    ToolDecision, ToolRef,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    policy: String,
    #[serde(default = "default_sites")]
    known_sites: Vec<String>,
    subject: Option<Subject>,
    #[serde(default)]
    check: Vec<Check>,
    #[serde(default)]
    error: Vec<ExpectedError>,
}

fn default_sites() -> Vec<String> {
    ["hr", "expenses", "wiki", "directory"].map(String::from).to_vec()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Check {
    /// What the check is about, printed on failure.
    name: String,
    site: String,
    tool: Option<String>,
    context: Option<String>,
    #[serde(default)]
    annotations: ToolAnnotations,
    /// Present: a call (`view.tool_call`); absent: the catalog (`view.tool`).
    args: Option<toml::Value>,
    /// Overrides the case's subject for this check.
    subject: Option<Subject>,
    /// `allow`, `ask_approval` or `deny`.
    expect: String,
    /// `user` or `group:<name>`, for `ask_approval`.
    approver: Option<String>,
    /// `rule:<id>`, `default`, `site_default`, `consequential_hint` or `condition:<id>`.
    decided_by: Option<String>,
    /// A fragment of the deny reason's text.
    reason_contains: Option<String>,
    /// Rule ids that must appear among the matches.
    #[serde(default)]
    matched: Vec<String>,
    /// Number of pending (call-time) conditions.
    pending: Option<usize>,
    /// The exact redaction set of an allowed context.
    redactions: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedError {
    line: usize,
    key: String,
    message_contains: String,
}

#[test]
fn golden_cases() {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut paths: Vec<_> = std::fs::read_dir(&directory)
        .unwrap_or_else(|e| panic!("{}: {e}", directory.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "expected the golden cases in {}", directory.display());
    let mut failures = String::new();
    let mut checks = 0;
    for path in &paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let case: Case = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        checks += run_case(&name, &case, &mut failures);
    }
    assert!(failures.is_empty(), "golden case failures:\n{failures}");
    assert!(checks >= 60, "only {checks} checks ran");
}

fn run_case(name: &str, case: &Case, failures: &mut String) -> usize {
    let sites: Vec<SiteId> = case.known_sites.iter().map(|s| SiteId::new(s.as_str())).collect();
    let parsed = Policy::parse(&case.policy, name, &sites);
    if !case.error.is_empty() {
        let errors = match parsed {
            Ok(_) => {
                let _ = writeln!(failures, "{name}: parsed, expected {} errors", case.error.len());
                return 1;
            }
            Err(errors) => errors,
        };
        let got: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        if errors.len() != case.error.len() {
            let _ = writeln!(
                failures,
                "{name}: {} errors, expected {}:\n  {}",
                errors.len(),
                case.error.len(),
                got.join("\n  ")
            );
        }
        for expected in &case.error {
            let found = errors.iter().any(|e| {
                e.file == name
                    && e.line == expected.line
                    && e.key == expected.key
                    && e.message.contains(&expected.message_contains)
            });
            if !found {
                let _ = writeln!(
                    failures,
                    "{name}: no error at line {} key {} containing {:?}; got:\n  {}",
                    expected.line,
                    expected.key,
                    expected.message_contains,
                    got.join("\n  ")
                );
            }
        }
        return case.error.len();
    }
    let policy = match parsed {
        Ok(policy) => policy,
        Err(errors) => {
            let _ = writeln!(failures, "{name}: policy did not parse:\n{errors}");
            return 0;
        }
    };
    for check in &case.check {
        let label = format!("{name} [{}]", check.name);
        let Some(subject) = check.subject.as_ref().or(case.subject.as_ref()) else {
            let _ = writeln!(failures, "{label}: no subject");
            continue;
        };
        let view = policy.view(subject, &SiteId::new(check.site.as_str()));
        if let Err(message) = run_check(&view, check) {
            let _ = writeln!(failures, "{label}: {message}");
        }
    }
    case.check.len()
}

fn run_check(view: &policy::PolicyView, check: &Check) -> Result<(), String> {
    match (&check.tool, &check.context) {
        (Some(tool), None) => {
            let tool = ToolRef { annotations: check.annotations, ..ToolRef::named(tool.as_str()) };
            let (decision, explanation) = match &check.args {
                Some(args) => {
                    let args = serde_json::to_value(args).map_err(|e| e.to_string())?;
                    view.tool_call(&tool, &args)
                }
                None => view.tool(&tool),
            };
            let context = || format!("decision {decision:?}\n{explanation}");
            expect(decision.label() == check.expect, || {
                format!("expected {}, got {}", check.expect, context())
            })?;
            if let Some(approver) = &check.approver {
                let got = match &decision {
                    ToolDecision::AskApproval { approver: Approver::User } => "user".to_owned(),
                    ToolDecision::AskApproval { approver: Approver::Group(group) } => {
                        format!("group:{group}")
                    }
                    _ => String::new(),
                };
                expect(&got == approver, || format!("expected approver {approver}, got {}", context()))?;
            }
            if let Some(fragment) = &check.reason_contains {
                let reason = match &decision {
                    ToolDecision::Deny { reason } => reason.to_string(),
                    _ => String::new(),
                };
                expect(reason.contains(fragment.as_str()), || {
                    format!("reason lacks {fragment:?}: {}", context())
                })?;
            }
            check_explanation(&explanation, check, &context())
        }
        (None, Some(name)) => {
            let (decision, explanation) = view.context(&ContextName::new(name.as_str()));
            let context = || format!("decision {decision:?}\n{explanation}");
            expect(decision.label() == check.expect, || {
                format!("expected {}, got {}", check.expect, context())
            })?;
            if let (Some(expected), ContextDecision::Allow { redactions }) = (&check.redactions, &decision) {
                let got: Vec<String> = redactions.iter().map(|k| k.to_string()).collect();
                expect(&got == expected, || format!("expected redactions {expected:?}, got {}", context()))?;
            }
            check_explanation(&explanation, check, &context())
        }
        _ => Err("a check names exactly one of tool or context".to_owned()),
    }
}

fn check_explanation(explanation: &Explanation, check: &Check, context: &str) -> Result<(), String> {
    if let Some(expected) = &check.decided_by {
        let got = match &explanation.decided_by {
            DecidedBy::Rule { rule, .. } => format!("rule:{rule}"),
            DecidedBy::SiteDefault { .. } => "site_default".to_owned(),
            DecidedBy::Default { .. } => "default".to_owned(),
            DecidedBy::ConsequentialHint { .. } => "consequential_hint".to_owned(),
            DecidedBy::Condition { rule, .. } => format!("condition:{rule}"),
            other => format!("{other:?}"),
        };
        expect(&got == expected, || format!("expected decided_by {expected}, got {got}: {context}"))?;
    }
    let ids: Vec<String> = explanation.rule_ids().iter().map(|id| id.to_string()).collect();
    for rule in &check.matched {
        expect(ids.contains(rule), || format!("rule {rule} not among matches: {context}"))?;
    }
    if let Some(pending) = check.pending {
        let got = explanation.pending().count();
        expect(got == pending, || format!("expected {pending} pending, got {got}: {context}"))?;
    }
    // The explanation must render both ways without losing the deciding fact.
    let json = serde_json::to_string(explanation).map_err(|e| e.to_string())?;
    expect(json.contains("decided_by"), || format!("JSON lacks decided_by: {json}"))
}

fn expect(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}
