//! Redaction quality and speed.
//!
//! First prints, once, the corpus score of the built-in recognizers (recall, precision and
//! intact look-alikes per kind and per channel, recall per kind × channel, the forms that fail
//! most), then times `redact_in` on a typical 8 KB intranet page and a 64 KB one and prints the
//! speed as µs per KB (the median time per page over the page's size in KB).
//!
//! `cargo bench -p policy --bench redaction` (add `-- --measurement-time 3` for a quick run).
//! With `CORPUS_ITEM=47` (or `47,48`) it also prints those items' input, planted values and
//! failures, to look at what a recognizer does with them.

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use policy::redact::Placeholders;
use policy::{RedactionSet, Redactor};

fn quality() {
    let items = corpus::generate(corpus::SEED, corpus::ITEMS);
    let started = Instant::now();
    let score = corpus::score::score(&Redactor::default(), &items);
    println!("\n=== redaction corpus (seed {:#x}) ===", corpus::SEED);
    println!("{}", score.tables());
    println!("{}", score.worst_forms(15));
    println!("(scored in {:.1} s)\n", started.elapsed().as_secs_f64());
    if let Ok(wanted) = std::env::var("CORPUS_ITEM") {
        show(&items, &wanted);
    }
}

/// Prints the items named in `wanted` (comma-separated ids): planted values, input, failures.
fn show(items: &[corpus::Item], wanted: &str) {
    let redactor = Redactor::default();
    for id in wanted.split(',').filter_map(|n| n.trim().parse::<usize>().ok()) {
        let Some(item) = items.get(id) else { continue };
        println!("=== item {id}: carrier {} channel {} ===", item.carrier, item.channel.name());
        for planted in &item.planted {
            let validity = if planted.valid { "valid" } else { "look-alike" };
            println!("  {} {validity} [{}] {:?}", planted.kind, planted.form, planted.text);
        }
        let one = corpus::score::score(&redactor, std::slice::from_ref(item));
        println!("--- input ---\n{}\n--- failures ---", item.text());
        for failure in &one.failures {
            println!(
                "  {} {} {:?}\n    output: {:?}",
                failure.kind, failure.what, failure.value, failure.output
            );
        }
    }
}

fn speed(c: &mut Criterion) {
    quality();
    let redactor = Redactor::default();
    let all = RedactionSet::builtin();
    let mut group = c.benchmark_group("redact_typical_page");
    for kb in [8usize, 64] {
        let page = corpus::page::typical_page(0x9A6E + kb as u64, kb * 1024);
        group.throughput(Throughput::Bytes(page.len() as u64));
        // Criterion reports time and throughput; the per-KB figure is printed from the same runs:
        // every batch criterion asks for is timed here too, and the median batch gives µs/run.
        let mut per_run = Vec::new();
        group.bench_function(format!("{kb}KB"), |b| {
            b.iter_custom(|runs| {
                let started = Instant::now();
                for _ in 0..runs {
                    black_box(redactor.redact_in(black_box(&page), &all, &mut Placeholders::new()));
                }
                let elapsed = started.elapsed();
                per_run.push(elapsed.as_secs_f64() / runs.max(1) as f64);
                elapsed
            })
        });
        per_run.sort_by(f64::total_cmp);
        let seconds = per_run.get(per_run.len() / 2).copied().unwrap_or(0.0);
        let kib = page.len() as f64 / 1024.0;
        println!(
            "typical page {kb} KB: {} bytes, median {:.1} µs per page = {:.2} µs per KB ({:.0} MB/s)",
            page.len(),
            seconds * 1e6,
            seconds * 1e6 / kib,
            page.len() as f64 / seconds.max(1e-12) / 1e6
        );
    }
    group.finish();
    adversarial(c, &redactor, &all);
}

/// Pages built to make a recognizer read the same text again and again: a table of numbers
/// collapsed onto one line, a dotted run, a page of `key=` or `@`, one-time-code words, nested
/// `kty` objects, nested calls, label cells, DSN markers, a long line of device words or assignments, table headers, numbers
/// joined by ` / `, exit prefixes, dotted groups. Each must cost about its length, as a typical page does; before the bounds in `card`, `phone` and the
/// credential walk, the first took seconds per 8 KB, and its time grew with the cube of its
/// length.
fn adversarial(c: &mut Criterion, redactor: &Redactor, all: &RedactionSet) {
    let mut group = c.benchmark_group("redact_adversarial_16KB");
    group.sample_size(10);
    for (name, piece) in [
        ("numbers", "1 "),
        ("pairs", "12 34 "),
        ("dotted", "1."),
        ("assignments", "pass="),
        ("at_signs", "x@"),
        ("codes", "code 1 "),
        ("jwk", "{\"kty\":"),
        ("calls", "login(("),
        ("cells", "<td>Password</td>"),
        ("dsns", "a:@tcp("),
        ("device_words", "password x "),
        ("table_headers", "<tr><th>Password</th></tr><tr><td>x</td></tr>"),
        ("markdown_headers", "| key | key |\n|---|---|\n"),
        ("csv_headers", "a,password,b\n"),
        ("assignments_one_line", "pass=x "),
        ("spaced_slashes", "1 / "),
        ("exit_prefixes", "011 4"),
        ("dotted_groups", "DE89.123.45."),
    ] {
        let page = piece.repeat(16 * 1024 / piece.len());
        group.throughput(Throughput::Bytes(page.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(redactor.redact_in(black_box(&page), all, &mut Placeholders::new())))
        });
    }
    group.finish();
}

criterion_group!(benches, speed);
criterion_main!(benches);
