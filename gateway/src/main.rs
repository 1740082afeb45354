//! The `toolgate` binary: parse the command line and hand over to `cli`.

use clap::Parser;

/// mimalloc instead of the system allocator: on the pass-through path the gateway allocates a
/// little per request, and glibc malloc was a fifth of its user CPU (bench/load.sh: JSON
/// pass-through CPU per request 26.1 → 22.3 µs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    gateway::cli::Cli::parse().execute()
}
