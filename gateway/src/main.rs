//! The `toolgate` binary: parse the command line and hand over to `cli`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    gateway::cli::Cli::parse().execute()
}
