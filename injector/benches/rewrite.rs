//! Page rewriting throughput: the hot path of every HTML response.
//!
//! Two pages, both fed in 1 KiB chunks as the gateway receives them: a realistic 1 KB page
//! (the design budget is ≤ 10 µs CPU each) and a deterministic 100 KB "corpus-style" page with
//! nested divs, links, tables, inline scripts and text.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use injector::{PageRewriter, PageSettings};

const CHUNK: usize = 1024;

fn settings() -> PageSettings {
    PageSettings {
        script_src: "/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        integrity: "sha384-R29sZGVuVGVzdEludGVncml0eVZhbHVl".to_owned(),
        nonce: "dG9vbGdhdGU=".to_owned(),
        script_url: "https://tasks.corp.example/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        declared_charset: Some("utf-8".to_owned()),
        memory_limit: 1024 * 1024,
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
    page.push_str("</ul>\n</main>\n<script>window.board = { ready: true };</script>\n</body>\n</html>\n");
    page.into_bytes()
}

/// A deterministic ~100 KB page shaped like crawled intranet pages.
fn corpus_page(target_length: usize) -> Vec<u8> {
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
        page.push_str(&format!(
            "</tbody></table>\n<script>window.metrics = window.metrics || []; window.metrics.push({{ section: {section}, rows: 5 }});</script>\n</div></div></div>\n"
        ));
        section += 1;
    }
    page.push_str("</body>\n</html>\n");
    page.into_bytes()
}

fn rewrite(page: &[u8]) -> usize {
    let mut rewriter = PageRewriter::new(settings());
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
    let mut group = criterion.benchmark_group("rewrite");
    for (name, page) in [("page_1kb", small_page()), ("corpus_100kb", corpus_page(100 * 1024))] {
        // A benchmark that silently measured the error path would be worthless.
        assert!(rewrite(&page) > page.len(), "{name} must rewrite successfully");
        group.throughput(Throughput::Bytes(page.len() as u64));
        group.bench_function(name, |bencher| bencher.iter(|| rewrite(black_box(&page))));
    }
    group.finish();
}

criterion_group!(benches, benchmarks);
criterion_main!(benches);
