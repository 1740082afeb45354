//! Page rewriting throughput: the hot path of every HTML response.
//!
//! Six pages, all fed in 1 KiB chunks as the gateway receives them: a realistic 1 KB page
//! (the design budget is ≤ 10 µs CPU each), deterministic 20 KB and 100 KB "corpus-style"
//! pages with nested divs, links, tables, inline scripts, text, tools and forms, and the 20 KB
//! one without tools, contexts or forms (`article_20kb`), and a 20 KB report with its tools and
//! forms at the top and tables below (`report_20kb`, the shape of `bench/load.sh`'s page; also
//! with a form in its footer). Each page runs unfiltered, filtered
//! for one user, and filtered with form rules plus auto mode; `filtered_whole` is the filtered
//! page at hand whole, as a page its upstream sent in one go is rewritten.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use injector::{FormRuleSpec, FormRules, PagePolicy, PageRewriter, PageSettings, ToolKind, Visibility};

const CHUNK: usize = 1024;

fn settings() -> PageSettings {
    PageSettings {
        script_src: "/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        integrity: "sha384-R29sZGVuVGVzdEludGVncml0eVZhbHVl".to_owned(),
        nonce: "dG9vbGdhdGU=".to_owned(),
        script_url: "https://tasks.corp.example/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        declared_charset: Some("utf-8".to_owned()),
        memory_limit: 1024 * 1024,
        inject: true,
    }
}

/// A small intranet page: doctype, head with meta tags and a stylesheet, a short body.
fn small_page() -> Vec<u8> {
    let mut page = String::from(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<title>Tasks — Team board</title>\n<link rel=\"stylesheet\" href=\"/static/app.css\">\n",
        "</head>\n<body>\n<header><nav><a href=\"/\">Home</a> <a href=\"/tasks\">Tasks</a> ",
        "<a href=\"/people\">People</a></nav></header>\n<main>\n<h1>Open tasks</h1>\n<ul>\n",
    ));
    for index in 0..5 {
        page.push_str(&format!(
            "<li class=\"task\" data-id=\"{index}\"><a href=\"/tasks/{index}\">Review request {index}</a> <span>due Friday</span></li>\n"
        ));
    }
    page.push_str("</ul>\n<tool name=\"add_task\" description=\"Add a task\"></tool>\n<form id=\"search\"><input name=\"q\"><button>Find</button></form>\n");
    page.push_str("</main>\n<script>window.board = { ready: true };</script>\n</body>\n</html>\n");
    page.into_bytes()
}

/// A deterministic page of about `target_length` bytes shaped like crawled intranet pages; with
/// `tools`, each section also carries a tool, a context and a form.
fn corpus_page(target_length: usize, tools: bool) -> Vec<u8> {
    let mut page = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Corpus</title>\n</head>\n<body>\n",
    );
    let mut section = 0;
    while page.len() < target_length {
        page.push_str(&format!(
            "<div class=\"section s{section}\"><div class=\"inner\"><div class=\"card\">\n<h2 id=\"h{section}\">Section {section}</h2>\n<p>Lorem ipsum dolor sit amet, <a href=\"/docs/{section}?ref=nav&amp;page=2\">consectetur</a> adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n<table class=\"data\"><thead><tr><th>Name</th><th>Owner</th><th>Status</th></tr></thead><tbody>\n"
        ));
        for row in 0..5 {
            page.push_str(&format!(
                "<tr><td><a href=\"/items/{section}/{row}\">Item {section}.{row}</a></td><td>owner{row}@corp.example</td><td class=\"status\">open</td></tr>\n"
            ));
        }
        page.push_str("</tbody></table>\n");
        if tools {
            page.push_str(&format!(
                "<tool name=\"tool_{section}\"><p>Tool {section}</p></tool><context name=\"ctx_{section}\">c</context>\n<form class=\"f{section}\"><label>Query</label><input name=\"q\"><button>Go</button></form>"
            ));
        }
        page.push_str(&format!(
            "<!-- c{section} -->\n<script>window.metrics = window.metrics || []; window.metrics.push({{ section: {section}, rows: 5 }});</script>\n</div></div></div>\n"
        ));
        section += 1;
    }
    page.push_str("</body>\n</html>\n");
    page.into_bytes()
}

/// A report page of about `target_length` bytes with its tool, context and forms at the top
/// (a search form in the header, one tool of each visibility, a context and a feedback form),
/// then sections of tables: the shape of `bench/load.sh`'s page. With `footer_form`, one more
/// form sits at the very end.
fn report_page(target_length: usize, footer_form: bool) -> Vec<u8> {
    let mut page = String::from(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Quarterly report</title>\n",
        "<link rel=\"stylesheet\" href=\"/static/app.css\">\n<script src=\"/static/vendor.js\" defer></script>\n</head>\n",
        "<body>\n<header><a href=\"/\">Intranet</a><form action=\"/search\" role=\"search\"><input type=\"search\" name=\"q\"><button>Search</button></form></header>\n",
        "<main id=\"content\">\n<h1>Quarterly operations report</h1>\n",
        "<tool name=\"tool_2\" description=\"Export this report\" return><prop name=\"region\" type=\"number\" required></prop></tool>\n",
        "<tool name=\"tool_1\" description=\"Delete this report\"><prop name=\"confirm\" type=\"boolean\" required></prop></tool>\n",
        "<context name=\"report_summary\">All regions, provisional figures.</context>\n",
        "<form id=\"feedback\" action=\"/feedback\" method=\"post\"><label>Feedback <input name=\"text\"></label><button>Send</button></form>\n",
    ));
    let ending = if footer_form {
        "</main>\n<footer><form action=\"/subscribe\"><input name=\"email\"><button>Subscribe</button></form></footer>\n</body>\n</html>\n"
    } else {
        "</main>\n<footer><p class=\"muted\">&copy; Corp</p></footer>\n</body>\n</html>\n"
    };
    let mut section = 1;
    while page.len() + ending.len() < target_length {
        page.push_str(&format!(
            "<section id=\"s{section}\">\n<h2>Region {section} &mdash; summary</h2>\n<p>During the quarter the team in region {section} closed most open tickets; figures are provisional until finance signs off &amp; the audit completes.</p>\n<table>\n<thead><tr><th>Site</th><th>Open</th><th>Closed</th><th>Owner</th></tr></thead>\n<tbody>\n"
        ));
        for row in 1..=6 {
            page.push_str(&format!(
                "<tr><td><a href=\"/sites/{section}-{row}\">Site {section}-{row}</a></td><td>{}</td><td>{}</td><td class=\"muted\">team-{row}@corp.example</td></tr>\n",
                (section * 7 + row * 3) % 50,
                (section * 13 + row * 11) % 400
            ));
        }
        page.push_str("</tbody>\n</table>\n</section>\n");
        section += 1;
    }
    page.push_str(ending);
    page.into_bytes()
}

/// Sees even-numbered tools and every context.
struct EvenTools;

impl Visibility for EvenTools {
    fn tool(&self, name: &str, _kind: ToolKind) -> bool {
        name.bytes().last().is_some_and(|digit| digit % 2 == 0)
    }
    fn context(&self, _name: &str) -> bool {
        true
    }
}

fn policy(rules: Vec<FormRuleSpec>, auto: bool) -> Option<PagePolicy> {
    let forms = FormRules::new(rules, auto).ok()?;
    Some(PagePolicy { visibility: Arc::new(EvenTools), forms: Arc::new(forms) })
}

fn form_rules() -> Vec<FormRuleSpec> {
    vec![FormRuleSpec {
        selector: "form#search".to_owned(),
        name: "search".to_owned(),
        description: "Search the board".to_owned(),
        params: vec![("q".to_owned(), "Search text".to_owned())],
        param_schemas: Vec::new(),
        autosubmit: false,
        method: None,
        action: Vec::new(),
    }]
}

/// A page at hand whole (`PageRewriter::rewrite_whole`), as the gateway rewrites a page its
/// upstream sent in one go.
fn rewrite_whole(page: &[u8], policy: &PagePolicy) -> usize {
    let mut out = Vec::with_capacity(page.len() + 256);
    match PageRewriter::filtered(settings(), policy.clone()).rewrite_whole(page, &mut out) {
        Ok(_) => out.len(),
        Err(_) => 0,
    }
}

fn rewrite(page: &[u8], policy: Option<&PagePolicy>) -> usize {
    let mut rewriter = match policy {
        Some(policy) => PageRewriter::filtered(settings(), policy.clone()),
        None => PageRewriter::new(settings()),
    };
    let mut out = Vec::with_capacity(page.len() + 256);
    for chunk in page.chunks(CHUNK) {
        if rewriter.write(chunk, &mut out).is_err() {
            return 0;
        }
    }
    match rewriter.end(&mut out) {
        Ok(_) => out.len(),
        Err(_) => 0,
    }
}

fn benchmarks(criterion: &mut Criterion) {
    let filtered = policy(Vec::new(), false);
    let with_forms = policy(form_rules(), true);
    assert!(filtered.is_some() && with_forms.is_some(), "benchmark policies must compile");
    let modes = [("plain", None), ("filtered", filtered.as_ref()), ("forms_auto", with_forms.as_ref())];
    let pages = [
        // Setup cost alone: building a rewriter (lol_html compiles its selectors per page).
        ("setup_only", b"<p>".to_vec()),
        ("page_1kb", small_page()),
        ("corpus_20kb", corpus_page(20 * 1024, true)),
        // The same markup without tools, contexts or forms: what most pages are.
        ("article_20kb", corpus_page(20 * 1024, false)),
        ("corpus_100kb", corpus_page(100 * 1024, true)),
        // Tools and forms at the top, then tables: the load benchmark's page.
        ("report_20kb", report_page(20 * 1024, false)),
        // The same with one more form in the footer.
        ("report_footer_form_20kb", report_page(20 * 1024, true)),
    ];
    let mut group = criterion.benchmark_group("rewrite");
    for (name, page) in &pages {
        group.throughput(Throughput::Bytes(page.len() as u64));
        for (mode, policy) in modes {
            // A benchmark that silently measured the error path would be worthless.
            assert!(rewrite(page, policy) >= page.len() / 2, "{name}/{mode} must rewrite successfully");
            group.bench_function(format!("{name}/{mode}"), |bencher| {
                bencher.iter(|| rewrite(black_box(page), policy))
            });
        }
        if let Some(filtered) = filtered.as_ref() {
            assert!(rewrite_whole(page, filtered) >= page.len() / 2, "{name}/filtered_whole must rewrite");
            group.bench_function(format!("{name}/filtered_whole"), |bencher| {
                bencher.iter(|| rewrite_whole(black_box(page), filtered))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
