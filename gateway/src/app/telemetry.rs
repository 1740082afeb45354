//! Log output: `tracing` with JSON or human-readable lines, filtered by `RUST_LOG` (default
//! `info`). Handlers log structured fields only; tokens, cookies, prompts and page text are
//! never logged.

use crate::config::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Safe to call twice (the second call does nothing), which
/// keeps tests that start several gateways simple.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _already_set = match format {
        LogFormat::Json => {
            builder.json().flatten_event(true).with_current_span(true).with_span_list(false).try_init()
        }
        LogFormat::Pretty => builder.compact().try_init(),
    };
}
