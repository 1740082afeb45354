//! Log output: `tracing` with JSON or human-readable lines, filtered by `RUST_LOG` (default
//! `info`). Handlers log structured fields only; tokens, cookies, prompts and page text are
//! never logged.
//!
//! Lines are formatted where they are logged (JSON by `log_format`) and written to standard
//! error by a thread of its own, in batches (`log_writer`): an async worker never waits for a
//! write to standard error.

use crate::app::log_format::{JsonFields, JsonLine};
use crate::app::log_writer::{self, WriterGuard};
use crate::config::LogFormat;
use tracing_subscriber::EnvFilter;

/// Keeps the log writer running; dropping it writes out every waiting line. Hold it until the
/// process is about to exit.
#[must_use = "dropping the guard stops the log writer"]
pub struct LogGuard {
    _writer: Option<WriterGuard>,
}

/// Installs the global subscriber. Safe to call twice (the second call does nothing), which
/// keeps tests that start several gateways simple. Fails only when the writer thread cannot
/// be started.
pub fn init(format: LogFormat) -> std::io::Result<LogGuard> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (writer, guard) = log_writer::start(std::io::stderr())?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    let installed = match format {
        LogFormat::Json => builder.fmt_fields(JsonFields).event_format(JsonLine).try_init(),
        LogFormat::Pretty => builder.compact().try_init(),
    };
    Ok(LogGuard { _writer: installed.is_ok().then_some(guard) })
}
