//! The command line: `run`, `check-config`, `check-site`, `demo` (and the hidden `demo-model`, the stand-in
//! model alone for the relay benchmark). This is the binary's edge, where errors become messages
//! and exit codes.
//!
//! Layer 10 of the gateway (ARCHITECTURE.md, "Code map"): may import every layer below it.

pub mod admin_client;
pub mod audit;
pub mod check_site;
pub mod policy;
pub mod store;

use crate::app::shutdown::Shutdown;
use crate::config::Config;
use crate::{app, app::telemetry, net::tls, policy_store::reload};
use anyhow::Context as _;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tokio::net::TcpListener;

/// Toolgate: the privacy-enforcing agent gateway.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve with a configuration file.
    Run {
        /// The TOML configuration file.
        #[arg(long, short)]
        config: PathBuf,
    },
    /// Check a configuration file: prints `ok`, or every problem with its line and key. Every
    /// secret it names is read and parsed too, as `run` will.
    CheckConfig {
        /// The TOML configuration file.
        file: PathBuf,
        /// Check the file alone, without reading its secrets (for a repository of configurations
        /// checked where the secrets are not).
        #[arg(long)]
        skip_secrets: bool,
    },
    /// Ask a site's upstream what the gateway would ask it, and report what gets in the way of
    /// running it behind Toolgate (exit 0: nothing; 1: problems; 2: could not check).
    CheckSite(check_site::CheckSiteArgs),
    /// Ask the policy engine.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Verify, export or prune the audit log.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Back up or restore the store.
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Ask the admin listener whether the gateway is alive (exit 0) or not (exit 1); the
    /// container health check.
    Health {
        /// The URL to ask.
        #[arg(long, default_value = "http://127.0.0.1:9090/healthz")]
        url: String,
    },
    /// Start the demo on loopback: the gateway and demo intranet apps, nothing to configure.
    Demo {
        /// Port of the gateway on 127.0.0.1.
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Skip the sign-in page: everyone is this demo user (alice, bob, carol, dave or erin).
        #[arg(long)]
        sign_in_as: Option<String>,
    },
    /// Serve only the demo's stand-in model on 127.0.0.1 (for `bench/load.sh relay`); prints
    /// `toolgate demo model listening on http://ADDR` and stops on SIGTERM or Ctrl-C.
    #[command(hide = true)]
    DemoModel {
        /// Port on 127.0.0.1; 0 picks a free one.
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Show the decision for a user, site and tool (or context), and the rules behind it.
    Explain(policy::ExplainArgs),
}

impl Cli {
    /// Runs the chosen command.
    pub fn execute(self) -> ExitCode {
        match self.command {
            Command::CheckConfig { file, skip_secrets } => check_config(&file, !skip_secrets),
            Command::CheckSite(args) => check_site::execute(&args),
            Command::Run { config } => report(run(&config)),
            Command::Policy(PolicyCommand::Explain(args)) => {
                report(policy::explain(&args).map(|text| print!("{text}")))
            }
            Command::Audit(command) => match audit::execute(command) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => report(Err(error)),
            },
            Command::Store(command) => match store::execute(command) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => report(Err(error)),
            },
            Command::Health { url } => admin_client::health(&url),
            Command::Demo { port, sign_in_as } => demo(port, sign_in_as),
            Command::DemoModel { port } => report(with_runtime(demo_model(port))),
        }
    }
}

fn check_config(file: &std::path::Path, secrets: bool) -> ExitCode {
    let config = match Config::load(file) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = false;
    for error in tls::check(&config) {
        eprintln!("{}: {error}", file.display());
        failed = true;
    }
    if let Err(error) = reload::load(&config) {
        eprintln!("{error}");
        failed = true;
    }
    for problem in if secrets { secret_problems(&config) } else { Vec::new() } {
        eprintln!("{}: {problem}", file.display());
        failed = true;
    }
    if failed {
        return ExitCode::FAILURE;
    }
    for site in &config.sites {
        for scope in site.form_scopes.iter().filter(|scope| scope.paths.is_empty()) {
            eprintln!(
                "warning: sites.{}: the form rule {:?} has no `path`, so it applies on every page of the \
                 site (a form with the same id on another page becomes the same tool); give it `path`",
                site.id, scope.name
            );
        }
    }
    println!("ok");
    ExitCode::SUCCESS
}

/// Every secret the configuration names, read and parsed the way `run` will: one problem per
/// secret that is missing, empty or malformed. The messages name references, never values.
fn secret_problems(config: &Config) -> Vec<String> {
    let mut problems = Vec::new();
    let mut note = |key: &str, outcome: Result<(), String>| match outcome {
        Err(message) if message.starts_with(key) => problems.push(message),
        Err(message) => problems.push(format!("{key}: {message}")),
        Ok(()) => {}
    };
    if let Some(sso) = &config.sso {
        note("sso.client_secret", sso.client_secret.read().map(drop).map_err(|error| error.to_string()));
        note(
            "sso.session_keys",
            crate::sso::keys::KeyRing::from_secrets(&sso.session_keys)
                .map(drop)
                .map_err(|error| error.to_string()),
        );
        let issuer = config.public_url.to_string();
        note(
            "sso.assertion_keys",
            crate::sso::assertion::AssertionSigner::new(&sso.assertion_keys, issuer)
                .map(drop)
                .map_err(|error| error.to_string()),
        );
    }
    if let Some(key) = &config.audit.key {
        note("audit.key", key.read().map(drop).map_err(|error| error.to_string()));
    }
    if let Some(llm) = &config.llm {
        note("llm", crate::llm::LlmClient::new(llm.clone()).map(drop).map_err(|error| error.to_string()));
    }
    problems
}

fn run(path: &std::path::Path) -> anyhow::Result<()> {
    let config = Config::load(path)?;
    // Held until the runtime has stopped: dropping it writes out the last log lines.
    let _log = telemetry::init(config.server.log_format).context("cannot start the log writer")?;
    with_runtime(async move {
        let listener = TcpListener::bind(config.server.listen)
            .await
            .with_context(|| format!("cannot listen on {} (server.listen)", config.server.listen))?;
        let admin_listener = TcpListener::bind(config.server.admin_listen).await.with_context(|| {
            format!("cannot listen on {} (server.admin_listen)", config.server.admin_listen)
        })?;
        let scheme = if config.server.tls.is_some() { "https" } else { "http" };
        let shutdown = Shutdown::new();
        shutdown.on_process_signals();
        let running = app::start(config, listener, admin_listener, shutdown).await?;
        println!("toolgate listening on {scheme}://{}", running.address);
        println!("toolgate admin on http://{}", running.admin_address);
        running.stopped().await;
        Ok(())
    })
}

/// `toolgate demo`: the demo, when this binary was built with it.
#[cfg(feature = "demo")]
fn demo(port: u16, sign_in_as: Option<String>) -> ExitCode {
    report(with_runtime(crate::demo::run(port, sign_in_as)))
}

/// `toolgate demo` in a build without the demo: say so, and how to get it.
#[cfg(not(feature = "demo"))]
fn demo(_port: u16, _sign_in_as: Option<String>) -> ExitCode {
    eprintln!("{WITHOUT_DEMO}");
    ExitCode::from(2)
}

/// What a production build answers to the demo commands.
#[cfg(not(feature = "demo"))]
const WITHOUT_DEMO: &str = "toolgate: this binary was built without the demo (the cargo feature `demo`, \
     left out of production builds); build it with the default features to run `toolgate demo`: \
     cargo build --release -p gateway";

/// The stand-in model alone, loopback only (the model server of the relay benchmark).
#[cfg(not(feature = "demo"))]
async fn demo_model(_port: u16) -> anyhow::Result<()> {
    anyhow::bail!("{WITHOUT_DEMO}")
}

/// The stand-in model alone, loopback only (the model server of the relay benchmark).
#[cfg(feature = "demo")]
async fn demo_model(port: u16) -> anyhow::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port} (--port)"))?;
    let address = listener.local_addr().context("cannot read the stand-in model's address")?;
    let shutdown = Shutdown::new();
    shutdown.on_process_signals();
    println!("toolgate demo model listening on http://{address}");
    crate::demo::model::serve(listener, shutdown.wait()).await?;
    Ok(())
}

/// Opens the configured store and runs `work` with it on a thread that may block (the embedded
/// store's calls and the database's blocking adapter both wait there), inside a runtime that
/// drives the database's connections; `work` reaches that runtime with `Handle::current()`.
pub(crate) fn with_store<T: Send + 'static>(
    config: &Config,
    work: impl FnOnce(crate::store::StoreHandle, std::sync::Arc<dyn crate::store::Store>) -> anyhow::Result<T>
    + Send
    + 'static,
) -> anyhow::Result<T> {
    with_runtime(async {
        let store = app::open_store(config).await?;
        tokio::task::spawn_blocking(move || {
            let blocking = store.blocking_store();
            work(store, blocking)
        })
        .await
        .context("the command stopped")?
    })
}

fn with_runtime<T>(future: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(future)
}

fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolgate: {error:#}");
            ExitCode::FAILURE
        }
    }
}
