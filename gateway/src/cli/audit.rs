//! `toolgate audit …`: verify the chain, export it (JSON lines or RFC 5424 syslog), prune it
//! with a signed checkpoint, and `stress`, which appends synthetic records and prints each
//! acknowledgement (the crash test and the durability benchmark use it). These open the store
//! directly: the embedded one while the gateway is stopped (a running gateway serves the query
//! API), a shared database at any time, beside the running replicas.

use super::with_store;
use crate::app::audit_key;
use crate::audit::event::{AuditEvent, EventKind};
use crate::audit::{self, AuditLog, export, query, verify};
use crate::config::Config;
use crate::metrics::Metrics;
use anyhow::Context as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The audit subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum AuditCommand {
    /// Walk the whole chain; name the first bad record if any.
    Verify {
        /// The gateway configuration (for the store and the audit key).
        #[arg(long, short)]
        config: PathBuf,
    },
    /// Write records to standard output.
    Export {
        /// The gateway configuration.
        #[arg(long, short)]
        config: PathBuf,
        /// Only records written at or after this time (RFC 3339, e.g. 2026-11-01T00:00:00Z).
        #[arg(long)]
        since: Option<String>,
        /// `jsonl` (one record per line, as stored) or `syslog` (RFC 5424).
        #[arg(long, default_value = "jsonl")]
        format: String,
    },
    /// Remove records written before a time, keeping the rest verifiable.
    Prune {
        /// The gateway configuration.
        #[arg(long, short)]
        config: PathBuf,
        /// Remove records written before this time (RFC 3339).
        #[arg(long)]
        before: String,
    },
    /// Append synthetic records and print `ack <seq>` for each durable one (diagnostics).
    Stress {
        /// The gateway configuration.
        #[arg(long, short)]
        config: PathBuf,
        /// How many records.
        #[arg(long, default_value_t = 100_000)]
        count: u64,
        /// How many writers at once.
        #[arg(long, default_value_t = 256)]
        concurrency: u64,
        /// Print each acknowledgement (the crash test reads them).
        #[arg(long)]
        print_acks: bool,
    },
}

/// Runs an audit subcommand; returns whether it succeeded (a broken chain is a failure).
pub fn execute(command: AuditCommand) -> anyhow::Result<bool> {
    match command {
        AuditCommand::Verify { config } => {
            let config = Config::load(&config)?;
            with_store(&config.clone(), move |_, store| {
                let key = audit_key(&config, store.as_ref())?;
                match verify::verify(store.as_ref(), &key)? {
                    Ok(verified) => {
                        println!("ok: {} records, {}..{}", verified.records, verified.first, verified.last);
                        Ok(true)
                    }
                    Err(problem) => {
                        println!("BROKEN: {problem}");
                        Ok(false)
                    }
                }
            })
        }
        AuditCommand::Export { config, since, format } => match export_records(&config, since, &format) {
            // A reader that stops early (`| head`) is not an error.
            Err(error)
                if error
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
            {
                Ok(true)
            }
            result => result,
        },
        AuditCommand::Prune { config, before } => {
            let config = Config::load(&config)?;
            let cutoff =
                humantime::parse_rfc3339_weak(&before).with_context(|| format!("--before {before}"))?;
            with_store(&config.clone(), move |handle, store| {
                let key = audit_key(&config, store.as_ref())?;
                let Some(plan) = audit::prune_plan(store.as_ref(), cutoff)? else {
                    println!("pruned 0 records written before {before}");
                    return Ok(true);
                };
                // The checkpoint is signed with the same key the log is started with, and the
                // prune's record is durable before the first deletion: an interrupted prune
                // leaves a trace. The completion follows it.
                let log = AuditLog::start(&handle, audit_key(&config, store.as_ref())?, Metrics::new())?;
                let runtime = tokio::runtime::Handle::current();
                runtime
                    .block_on(log.record(audit::pruning_event(plan.count, &before)))
                    .context("recording the prune")?;
                let removed = audit::prune_apply(store.as_ref(), &key, &plan)?;
                runtime
                    .block_on(log.record(audit::checkpoint_event(removed, &before)))
                    .context("recording the checkpoint")?;
                println!("pruned {removed} records written before {before}");
                Ok(true)
            })
        }
        AuditCommand::Stress { config, count, concurrency, print_acks } => {
            let config = Config::load(&config)?;
            stress(&config, count, concurrency, print_acks)
        }
    }
}

fn export_records(config: &std::path::Path, since: Option<String>, format: &str) -> anyhow::Result<bool> {
    let config = Config::load(config)?;
    let since = since
        .map(|text| humantime::parse_rfc3339_weak(&text).with_context(|| format!("--since {text}")))
        .transpose()?;
    let hostname = config.gateway_host();
    let filter = query::Filter { since, ..query::Filter::default() };
    let format = format.to_owned();
    with_store(&config, move |_, store| {
        let mut after = 0;
        let mut output = std::io::BufWriter::new(std::io::stdout().lock());
        loop {
            let page = query::find(store.as_ref(), &filter, after, query::MAX_LIMIT)?;
            for record in &page.records {
                let line = match format.as_str() {
                    "jsonl" => export::json_line(record),
                    "syslog" => export::syslog_line(record, &hostname),
                    other => anyhow::bail!("--format {other}: use jsonl or syslog"),
                };
                writeln!(output, "{line}")?;
            }
            match page.next {
                Some(next) => after = next,
                None => break,
            }
        }
        output.flush()?;
        Ok(true)
    })
}

fn stress(config: &Config, count: u64, concurrency: u64, print_acks: bool) -> anyhow::Result<bool> {
    let config = config.clone();
    with_store(&config.clone(), move |handle, store| {
        let key = audit_key(&config, store.as_ref())?;
        let log = std::sync::Arc::new(AuditLog::start(&handle, key, Metrics::new())?);
        tokio::runtime::Handle::current().block_on(async move {
            let started = Instant::now();
            let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<(u64, Duration)>();
            let per_writer = count.div_ceil(concurrency.max(1));
            for writer in 0..concurrency.max(1) {
                let log = log.clone();
                let sender = sender.clone();
                tokio::spawn(async move {
                    for index in 0..per_writer {
                        let number = writer * per_writer + index;
                        if number >= count {
                            break;
                        }
                        let event = AuditEvent::new(EventKind::ToolCall)
                            .actor(&format!("user-{}", number % 97), None, &[])
                            .site("stress")
                            .decision("allow", "stress");
                        let asked = Instant::now();
                        match log.record(event).await {
                            Ok(seq) => {
                                let _ = sender.send((seq, asked.elapsed()));
                            }
                            Err(error) => {
                                eprintln!("audit write failed: {error}");
                                return;
                            }
                        }
                    }
                });
            }
            drop(sender);
            let mut latencies = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
            let mut output = std::io::stdout().lock();
            while let Some((seq, latency)) = receiver.recv().await {
                if print_acks {
                    writeln!(output, "ack {seq}")?;
                    output.flush()?;
                }
                latencies.push(latency);
            }
            let elapsed = started.elapsed();
            latencies.sort();
            let percentile = |p: f64| {
                latencies
                    .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
                    .copied()
                    .unwrap_or_default()
            };
            eprintln!(
                "{} durable records in {:.2} s: {:.0} records/s; acknowledgement p50 {:.2} ms, p99 {:.2} ms",
                latencies.len(),
                elapsed.as_secs_f64(),
                latencies.len() as f64 / elapsed.as_secs_f64(),
                percentile(0.50).as_secs_f64() * 1000.0,
                percentile(0.99).as_secs_f64() * 1000.0,
            );
            anyhow::Ok(latencies.len() as u64 == count)
        })
    })
}
