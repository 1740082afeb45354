//! Golden-file tests for the page rewriter: `tests/golden/<case>/input.html` must become
//! `expected.html` byte for byte, however the input is chunked.
//!
//! Each case runs three ways (whole input, byte by byte, 7-byte chunks). An optional
//! `settings.json` overrides the charset label, nonce, memory limit and expected outcome.
//! A case with a `policy.json` (users with their visible tools and contexts, form rules, auto
//! mode) is filtered once per user and compared with `expected_<user>.html` instead.
//! `UPDATE_GOLDEN=1 cargo test -p injector --test golden` rewrites the expected files from the
//! whole-input run; review every changed file by eye before committing it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use injector::{
    FormRuleSpec, FormRules, Outcome, PagePolicy, PageRewriter, PageSettings, ToolKind, Visibility,
};
use serde::Deserialize;

/// `policy.json` of a filtering case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CasePolicy {
    users: BTreeMap<String, UserVisibility>,
    #[serde(default)]
    rules: Vec<CaseRule>,
    #[serde(default)]
    auto: bool,
}

/// The names one user may see; everything else is refused.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserVisibility {
    #[serde(default)]
    tools: BTreeSet<String>,
    #[serde(default)]
    contexts: BTreeSet<String>,
}

impl Visibility for UserVisibility {
    fn tool(&self, name: &str, _kind: ToolKind) -> bool {
        self.tools.contains(name)
    }
    fn context(&self, name: &str) -> bool {
        self.contexts.contains(name)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseRule {
    selector: String,
    name: String,
    description: String,
    #[serde(default)]
    params: Vec<(String, String)>,
    #[serde(default)]
    autosubmit: bool,
}

/// Per-case overrides; unknown keys are an error so a typo cannot silently test the defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseSettings {
    declared_charset: Option<String>,
    nonce: Option<String>,
    memory_limit: Option<usize>,
    #[serde(default)]
    outcome: ExpectedOutcome,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ExpectedOutcome {
    #[default]
    Injected,
    PassedThrough,
}

/// How the input is split before it is fed to the rewriter.
#[derive(Debug, Clone, Copy)]
enum Chunking {
    Whole,
    ByteByByte,
    SevenBytes,
}

impl Chunking {
    const ALL: [Chunking; 3] = [Chunking::Whole, Chunking::ByteByByte, Chunking::SevenBytes];

    fn size(self, input_length: usize) -> usize {
        match self {
            Chunking::Whole => input_length.max(1),
            Chunking::ByteByByte => 1,
            Chunking::SevenBytes => 7,
        }
    }
}

#[test]
fn golden_cases() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|value| value == "1");
    let cases = case_directories();
    assert!(cases.len() >= 13, "expected the full golden corpus, found {} cases", cases.len());

    let mut failures = Vec::new();
    for case in &cases {
        if let Err(failure) = run_case(case, update) {
            failures.push(failure);
        }
    }
    assert!(failures.is_empty(), "{} golden case(s) failed:\n\n{}", failures.len(), failures.join("\n\n"));
}

fn case_directories() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let entries = match fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(error) => panic!("cannot read {}: {error}", root.display()),
    };
    let mut cases: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    cases
}

fn run_case(case: &Path, update: bool) -> Result<(), String> {
    let name = case
        .file_name()
        .map_or_else(|| case.display().to_string(), |name| name.to_string_lossy().into_owned());
    let input = read(&case.join("input.html"))?;
    let case_settings = read_settings(case)?;
    if case.join("policy.json").exists() {
        return run_filter_case(case, &name, &input, &case_settings, update);
    }
    let expected_path = case.join("expected.html");

    if update {
        let (output, _) = rewrite(&input, &case_settings, None, Chunking::Whole)
            .map_err(|error| format!("{name}: {error}"))?;
        fs::write(&expected_path, &output)
            .map_err(|error| format!("{name}: cannot write expected.html: {error}"))?;
    }
    let expected = read(&expected_path)?;

    for chunking in Chunking::ALL {
        let (output, outcome) = rewrite(&input, &case_settings, None, chunking)
            .map_err(|error| format!("{name} ({chunking:?}): {error}"))?;
        if output != expected {
            return Err(format!(
                "{name} ({chunking:?}): output differs from expected.html\n{}",
                describe_difference(&expected, &output)
            ));
        }
        let wanted = match case_settings.outcome {
            ExpectedOutcome::Injected => Outcome::Injected,
            ExpectedOutcome::PassedThrough => Outcome::PassedThrough,
        };
        if outcome != wanted {
            return Err(format!("{name} ({chunking:?}): outcome {outcome:?}, expected {wanted:?}"));
        }
        if outcome == Outcome::PassedThrough && output != input {
            return Err(format!("{name} ({chunking:?}): pass-through changed the bytes"));
        }
    }
    Ok(())
}

/// Filters the input once per user in `policy.json`, in every chunking.
fn run_filter_case(
    case: &Path,
    name: &str,
    input: &[u8],
    case_settings: &CaseSettings,
    update: bool,
) -> Result<(), String> {
    let path = case.join("policy.json");
    let policy: CasePolicy = serde_json::from_slice(&read(&path)?)
        .map_err(|error| format!("invalid {}: {error}", path.display()))?;
    let specs = policy
        .rules
        .into_iter()
        .map(|rule| FormRuleSpec {
            selector: rule.selector,
            name: rule.name,
            description: rule.description,
            params: rule.params,
            param_schemas: Vec::new(),
            autosubmit: rule.autosubmit,
            method: None,
            action: Vec::new(),
        })
        .collect();
    let forms = Arc::new(FormRules::new(specs, policy.auto).map_err(|error| format!("{name}: {error}"))?);
    if policy.users.len() < 2 {
        return Err(format!("{name}: a filtering case needs at least two users"));
    }
    for (user, visibility) in policy.users {
        let page = PagePolicy { visibility: Arc::new(visibility), forms: Arc::clone(&forms) };
        let expected_path = case.join(format!("expected_{user}.html"));
        if update {
            let (output, _) = rewrite(input, case_settings, Some(&page), Chunking::Whole)
                .map_err(|error| format!("{name} ({user}): {error}"))?;
            fs::write(&expected_path, &output).map_err(|error| format!("{name}: cannot write: {error}"))?;
        }
        let expected = read(&expected_path)?;
        for chunking in Chunking::ALL {
            let (output, _) = rewrite(input, case_settings, Some(&page), chunking)
                .map_err(|error| format!("{name} ({user}, {chunking:?}): {error}"))?;
            if output != expected {
                return Err(format!(
                    "{name} ({user}, {chunking:?}): output differs from expected_{user}.html\n{}",
                    describe_difference(&expected, &output)
                ));
            }
        }
    }
    Ok(())
}

fn rewrite(
    input: &[u8],
    case_settings: &CaseSettings,
    page: Option<&PagePolicy>,
    chunking: Chunking,
) -> Result<(Vec<u8>, Outcome), String> {
    let settings = PageSettings {
        script_src: "/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        integrity: "sha384-R29sZGVuVGVzdEludGVncml0eVZhbHVl".to_owned(),
        nonce: case_settings.nonce.clone().unwrap_or_else(|| "dG9vbGdhdGU=".to_owned()),
        script_url: "https://tasks.corp.example/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        declared_charset: case_settings.declared_charset.clone(),
        memory_limit: case_settings.memory_limit.unwrap_or(1024 * 1024),
        inject: true,
    };
    let mut rewriter = match page {
        Some(page) => PageRewriter::filtered(settings, page.clone()),
        None => PageRewriter::new(settings),
    };
    let mut output = Vec::new();
    for chunk in input.chunks(chunking.size(input.len())) {
        rewriter.write(chunk, &mut output).map_err(|error| format!("write failed: {error}"))?;
    }
    let summary = rewriter.end(&mut output).map_err(|error| format!("end failed: {error}"))?;
    Ok((output, summary.outcome))
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}

fn read_settings(case: &Path) -> Result<CaseSettings, String> {
    let path = case.join("settings.json");
    if !path.exists() {
        return Ok(CaseSettings::default());
    }
    serde_json::from_slice(&read(&path)?).map_err(|error| format!("invalid {}: {error}", path.display()))
}

/// Shows the first differing line of both outputs with two lines of context, escaped so that
/// invisible bytes (BOMs, high bytes, trailing spaces) are visible.
fn describe_difference(expected: &[u8], actual: &[u8]) -> String {
    let expected_lines: Vec<&[u8]> = expected.split(|byte| *byte == b'\n').collect();
    let actual_lines: Vec<&[u8]> = actual.split(|byte| *byte == b'\n').collect();
    let first_difference = expected_lines
        .iter()
        .zip(&actual_lines)
        .position(|(expected_line, actual_line)| expected_line != actual_line)
        .unwrap_or(expected_lines.len().min(actual_lines.len()));
    let context_start = first_difference.saturating_sub(2);
    let context_end = first_difference + 3;

    let mut description = format!("first difference at line {}:\n", first_difference + 1);
    for (label, lines) in [("expected", &expected_lines), ("actual  ", &actual_lines)] {
        for (index, line) in lines.iter().enumerate().take(context_end).skip(context_start) {
            let marker = if index == first_difference { '>' } else { ' ' };
            description.push_str(&format!("{marker} {label} {:>4} | {}\n", index + 1, line.escape_ascii()));
        }
    }
    description
}
