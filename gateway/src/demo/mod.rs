//! `toolgate demo`: the embedded default a newcomer runs first. On loopback only, it starts
//! the demo intranet apps, generates a configuration for them and serves the gateway in front,
//! then prints the URLs to open. Ctrl-C stops everything cleanly.

pub mod apps;

use crate::config::Config;
use crate::shutdown::Shutdown;
use crate::{app, telemetry};
use anyhow::Context as _;
use apps::{DemoApp, ExpenseForm, TaskBoard};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Runs the demo until Ctrl-C or SIGTERM.
pub async fn run(port: u16) -> anyhow::Result<()> {
    telemetry::init(crate::config::LogFormat::Pretty);
    let shutdown = Shutdown::new();
    shutdown.on_process_signals();
    let demo = start(port, shutdown).await?;
    let port = demo.port;
    println!("Toolgate demo: everything runs on this machine, on loopback.\n");
    println!("  Task board (VOIX tools):   http://tasks.localhost:{port}/");
    println!("  Expense form (legacy app): http://expenses.localhost:{port}/");
    println!("  Metrics:                   http://{}/metrics\n", demo.gateway.admin_address);
    println!("Open a URL in a browser (*.localhost resolves to this machine). Ctrl-C stops the demo.");
    demo.gateway.stopped().await;
    Ok(())
}

/// A started demo.
pub struct Demo {
    /// The gateway's port on 127.0.0.1; sites are `<app>.localhost:<port>`.
    pub port: u16,
    /// The gateway in front of the apps.
    pub gateway: app::Running,
}

/// Starts the demo apps and the gateway on loopback (`port` 0 picks a free port).
pub async fn start(port: u16, shutdown: Shutdown) -> anyhow::Result<Demo> {
    let tasks = start_app(Arc::new(TaskBoard::with_examples()), &shutdown).await?;
    let expenses = start_app(Arc::new(ExpenseForm::default()), &shutdown).await?;
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}; pick another port with --port"))?;
    let port = listener.local_addr()?.port();
    let admin_listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let config = Config::parse(&config_text(port, tasks, expenses), "<demo configuration>")?;
    let gateway = app::start(config, listener, admin_listener, shutdown)?;
    Ok(Demo { port, gateway })
}

/// The demo's configuration, written as a file would be so it goes through the same checks.
pub fn config_text(port: u16, tasks: SocketAddr, expenses: SocketAddr) -> String {
    format!(
        r#"public_url = "http://localhost:{port}"

[server]
listen = "127.0.0.1:{port}"
admin_listen = "127.0.0.1:0"
log_format = "pretty"

[sites.tasks]
host = "tasks.localhost"
upstream = "http://{tasks}"

[sites.expenses]
host = "expenses.localhost"
upstream = "http://{expenses}"
"#
    )
}

async fn start_app(app: Arc<dyn DemoApp>, shutdown: &Shutdown) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.context("cannot start a demo app")?;
    let address = listener.local_addr()?;
    tokio::spawn(apps::serve(app, listener, shutdown.wait()));
    Ok(address)
}
