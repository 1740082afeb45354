//! Hot paths of the policy engine: one tool decision with 1,000 rules (budget 2 µs), building
//! the per-request view with 1,000 rules (20 µs), and redacting 1 MB of mixed text (100 MB/s).

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use policy::{GroupName, Policy, RedactionSet, Redactor, SiteId, Subject, ToolRef, UserId};

const SITES: usize = 50;
const GROUPS: usize = 40;

/// 1,000 rules over 50 sites and 40 groups, a few every-site rules, a few with CEL conditions.
fn policy_text(rules: usize) -> String {
    let mut text = String::from("groups = [");
    for group in 0..GROUPS {
        let _ = write!(text, "\"g{group}\", ");
    }
    text.push_str("]\n[defaults]\nunknown_tools = \"deny\"\nconsequential_hint = \"approve\"\n");
    for rule in 0..rules {
        let _ = writeln!(text, "[[rule]]\nid = \"r{rule}\"");
        if rule % 100 != 0 {
            let _ = writeln!(text, "sites = [\"s{}\"]", rule % SITES);
        }
        let _ = writeln!(text, "groups = [\"g{}\", \"g{}\"]", rule % GROUPS, (rule + 7) % GROUPS);
        let _ = writeln!(text, "tools.allow = [\"search_{rule}_*\", \"list_*\", \"tool_{rule}\"]");
        let _ = writeln!(text, "tools.approve = [\"submit_{rule}\"]");
        let _ = writeln!(text, "tools.deny = [\"delete_*\", \"admin_{rule}\"]");
        let _ = writeln!(text, "contexts.allow = [\"ctx_{rule}_*\"]");
        if rule % 50 == 0 {
            let _ = writeln!(
                text,
                "tools.approve_by = {{ tools = [\"pay_*\"], group = \"g1\", when = \"args.amount > 1000\" }}"
            );
        }
    }
    text
}

fn load(rules: usize) -> Policy {
    let sites: Vec<SiteId> = (0..SITES).map(|s| SiteId::new(format!("s{s}"))).collect();
    match Policy::parse(&policy_text(rules), "bench.toml", &sites) {
        Ok(policy) => policy,
        Err(errors) => panic!("{errors}"),
    }
}

fn subject() -> Subject {
    Subject {
        user: UserId::new("alice"),
        email: Some("alice@example.com".into()),
        groups: ["g7", "g14", "g21"].map(GroupName::new).to_vec(),
    }
}

fn decisions(c: &mut Criterion) {
    let policy = load(1000);
    let subject = subject();
    let site = SiteId::new("s7");
    let view = policy.view(&subject, &site);
    let mut group = c.benchmark_group("decision_1000_rules");
    let search = ToolRef::named("search_7_docs");
    group.bench_function("tool_allow", |b| b.iter(|| black_box(view.tool(black_box(&search)))));
    let delete = ToolRef::named("delete_user");
    group.bench_function("tool_deny_many_matches", |b| b.iter(|| black_box(view.tool(black_box(&delete)))));
    let unknown = ToolRef::named("unmentioned_tool");
    group.bench_function("tool_default", |b| b.iter(|| black_box(view.tool(black_box(&unknown)))));
    let pay = ToolRef::named("pay_invoice");
    let args = serde_json::json!({ "amount": 1500, "currency": "EUR" });
    group.bench_function("tool_call_with_cel", |b| {
        b.iter(|| black_box(view.tool_call(black_box(&pay), black_box(&args))))
    });
    let context = policy::ContextName::new("ctx_7_list");
    group.bench_function("context_allow", |b| b.iter(|| black_box(view.context(black_box(&context)))));
    group.finish();
}

fn views(c: &mut Criterion) {
    let policy = load(1000);
    let subject = subject();
    let site = SiteId::new("s7");
    c.bench_function("view_build_1000_rules", |b| {
        b.iter(|| black_box(policy.view(black_box(&subject), black_box(&site))))
    });
}

/// About 1 MB of intranet-like text: prose, numbers, dates, entities, and now and then personal
/// data of every kind (a deterministic sequence, so runs compare).
fn mixed_text() -> String {
    let words = [
        "the",
        "quarterly",
        "report",
        "shows",
        "growth",
        "in",
        "region",
        "north",
        "team",
        "meeting",
        "scheduled",
        "budget",
        "approved",
        "Müller",
        "naïve",
        "café",
        "invoice",
        "total",
        "EUR",
        "status:",
        "open",
        "ticket",
        "#4521",
        "version",
        "1.2.3",
        "on",
        "2024-01-15",
        "and",
        "15.01.2024",
        "room",
        "0123",
        "costs",
        "1,234.56",
        "&amp;",
        "&nbsp;",
        "<b>note</b>",
    ];
    let findings = [
        "jane.doe@corp.example.com",
        "+49 30 1234567",
        "(555) 123-4567",
        "DE89 3704 0044 0532 0130 00",
        "4111 1111 1111 1111",
        "123-45-6789",
        "a&#64;b.com",
        "4111 1111 1111 1112",
    ];
    let mut text = String::with_capacity(1 << 20);
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    while text.len() < 1 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if state.is_multiple_of(40) {
            text.push_str(findings[(state / 40 % findings.len() as u64) as usize]);
        } else {
            text.push_str(words[(state % words.len() as u64) as usize]);
        }
        text.push(if state.is_multiple_of(13) { '\n' } else { ' ' });
    }
    text
}

fn redaction(c: &mut Criterion) {
    let text = mixed_text();
    let redactor = Redactor::default();
    let set = RedactionSet::builtin();
    let mut group = c.benchmark_group("redact");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(20);
    group.bench_function("mixed_1mb", |b| b.iter(|| black_box(redactor.redact(black_box(&text), &set))));
    group.finish();
}

criterion_group!(benches, decisions, views, redaction);
criterion_main!(benches);
