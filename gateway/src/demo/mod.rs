//! `toolgate demo`: the embedded default a newcomer runs first. On loopback only, it starts
//! the demo intranet apps, generates a configuration for them and serves the gateway in front,
//! then prints the URLs to open. Ctrl-C stops everything cleanly.
//!
//! Layer 9 of the gateway (ARCHITECTURE.md, "Code map"): may import `app`, `config`, `http`,
//! `support`.

pub mod apps;
pub mod idp;
pub mod model;

use crate::app::shutdown::Shutdown;
use crate::config::Config;
use crate::config::secrets::SecretRef;
use crate::{app, app::telemetry};
use anyhow::Context as _;
use apps::{DemoApp, ExpenseForm, Helpdesk, TaskBoard, TravelSearch};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Runs the demo until Ctrl-C or SIGTERM.
pub async fn run(port: u16, sign_in_as: Option<String>) -> anyhow::Result<()> {
    let _log = telemetry::init(crate::config::LogFormat::Pretty).context("cannot start the log writer")?;
    let shutdown = Shutdown::new();
    shutdown.on_process_signals();
    let demo = start(port, sign_in_as.clone(), shutdown).await?;
    let port = demo.port;
    println!("Toolgate demo: everything runs on this machine, on loopback.\n");
    println!("  Task board (VOIX tools):             http://tasks.localhost:{port}/");
    println!("  Travel desk (WebMCP imperative):     http://travel.localhost:{port}/");
    println!("  Helpdesk (WebMCP declarative form):  http://helpdesk.localhost:{port}/");
    println!("  Ticket queue (component registry):   http://helpdesk.localhost:{port}/queue");
    println!("  Expenses (legacy form → tool rule):  http://expenses.localhost:{port}/");
    println!("  Policy dashboard (erin, admin):       http://admin.localhost:{port}/");
    println!("  Sign-in provider:                    {} (development only)", demo.identity_provider);
    println!("  Metrics:                             http://{}/metrics", demo.gateway.admin_address);
    println!("  Tool inventory:                      http://{}/inventory\n", demo.gateway.admin_address);
    match sign_in_as {
        Some(user) => println!("Everyone is signed in as {user} (--sign-in-as)."),
        None => println!(
            "Sign in as one of the demo users: alice (engineering), bob (finance approver), carol (HR, auditor), dave (no groups), erin (dashboard admin)."
        ),
    }
    println!("Open a URL in a browser (*.localhost resolves to this machine). Ctrl-C stops the demo.\n");
    print!("{}", api_snippets(port, &demo.api_tokens));
    demo.gateway.stopped().await;
    Ok(())
}

/// Ready-to-run API examples with the demo's bearer tokens: the task board's OpenAI-compatible
/// endpoint with curl and the OpenAI Python SDK, `whoami`, and the approvals API.
pub fn api_snippets(port: u16, tokens: &[ApiToken]) -> String {
    let hours = API_TOKEN_LIFETIME.as_secs() / 3600;
    let mut text = format!(
        "API clients use bearer tokens from the same provider. Tokens for demo users (valid {hours} hours):\n"
    );
    for token in tokens {
        text.push_str(&format!(
            "  export TOOLGATE_TOKEN_{}={}\n",
            token.user.to_ascii_uppercase(),
            token.token
        ));
    }
    let base = format!("http://localhost:{port}");
    text.push_str(&format!(
        r#"
  # Who am I? (alice)
  curl -H "Authorization: Bearer $TOOLGATE_TOKEN_ALICE" http://tasks.localhost:{port}/.toolgate/whoami
  # The task board's OpenAI-compatible endpoint, as alice (the stand-in model answers)
  curl -H "Authorization: Bearer $TOOLGATE_TOKEN_ALICE" {base}/sites/tasks/v1/models
  curl -H "Authorization: Bearer $TOOLGATE_TOKEN_ALICE" -H "Content-Type: application/json" \
    -d '{{"model": "toolgate-demo-stand-in", "messages": [{{"role": "user", "content": "Hello"}}]}}' \
    {base}/sites/tasks/v1/chat/completions
  # The same with the OpenAI Python SDK (pip install openai)
  python3 -c 'import os, openai; client = openai.OpenAI(base_url="{base}/sites/tasks/v1", api_key=os.environ["TOOLGATE_TOKEN_ALICE"]); print(client.chat.completions.create(model="toolgate-demo-stand-in", messages=[{{"role": "user", "content": "Hello"}}]).choices[0].message.content)'
  # Pending approvals for bob's groups (finance approvers)
  curl -H "Authorization: Bearer $TOOLGATE_TOKEN_BOB" {base}/.toolgate/approvals
"#
    ));
    text
}

/// A bearer token the demo made for one of its users.
pub struct ApiToken {
    /// The demo user.
    pub user: &'static str,
    /// The access token (a JWT from the demo's provider).
    pub token: String,
}

/// How long the printed API tokens are valid.
pub const API_TOKEN_LIFETIME: std::time::Duration = std::time::Duration::from_secs(8 * 60 * 60);
/// The demo users the demo prints API tokens for: a user of the task board, and the finance
/// approver for the approvals API.
const API_TOKEN_USERS: [&str; 2] = ["alice", "bob"];

/// A started demo.
pub struct Demo {
    /// The gateway's port on 127.0.0.1; sites are `<app>.localhost:<port>`.
    pub port: u16,
    /// The gateway in front of the apps.
    pub gateway: app::Running,
    /// The development sign-in provider's issuer URL.
    pub identity_provider: String,
    /// Bearer tokens for API clients, for the demo users in [`API_TOKEN_USERS`].
    pub api_tokens: Vec<ApiToken>,
}

/// Starts the demo apps, the development sign-in provider and the gateway on loopback (`port`
/// 0 picks a free port). With `sign_in_as`, the provider signs everyone in as that demo user.
pub async fn start(port: u16, sign_in_as: Option<String>, shutdown: Shutdown) -> anyhow::Result<Demo> {
    let apps = DemoApps {
        tasks: start_app(Arc::new(TaskBoard::with_examples()), &shutdown).await?,
        travel: start_app(Arc::new(TravelSearch::default()), &shutdown).await?,
        helpdesk: start_app(Arc::new(Helpdesk::default()), &shutdown).await?,
        expenses: start_app(Arc::new(ExpenseForm::default()), &shutdown).await?,
    };
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}; pick another port with --port"))?;
    let port = listener.local_addr()?.port();
    let admin_listener = TcpListener::bind(("127.0.0.1", 0)).await?;

    let client_secret = URL_SAFE_NO_PAD.encode(crate::support::random::random_bytes::<24>());
    let client = idp::DevClient {
        client_id: DEMO_CLIENT_ID.into(),
        client_secret: client_secret.clone(),
        redirect_uris: vec![format!("http://localhost:{port}/.toolgate/callback")],
    };
    let options = idp::DevIdpOptions { auto_sign_in: sign_in_as, ..idp::DevIdpOptions::default() };
    let idp_listener =
        TcpListener::bind(("127.0.0.1", 0)).await.context("cannot start the demo sign-in provider")?;
    let provider = idp::start_with(idp_listener, client, options, shutdown.wait())?;

    // The demo's language model is a deterministic stand-in (not a model): see demo/model/.
    let model_listener =
        TcpListener::bind(("127.0.0.1", 0)).await.context("cannot start the stand-in model")?;
    let model_address = model_listener.local_addr()?;
    let model_shutdown = shutdown.wait();
    tokio::spawn(async move {
        if let Err(error) = model::serve(model_listener, model_shutdown).await {
            tracing::error!(error = %error, "the demo stand-in model stopped");
        }
    });
    let mut config =
        Config::parse(&config_text(port, &apps, &provider.issuer, model_address), "<demo configuration>")?;
    config.embedded_policy = Some(DEMO_POLICY);
    if let Some(sso) = &mut config.sso {
        // The demo made this secret itself; a real deployment reads it from a file or the
        // environment.
        sso.client_secret = SecretRef::Generated(client_secret);
    }
    let api_tokens = API_TOKEN_USERS
        .into_iter()
        .map(|user| Ok(ApiToken { user, token: provider.api_token(user, API_TOKEN_LIFETIME)? }))
        .collect::<Result<Vec<_>, idp::DevIdpError>>()?;
    let gateway = app::start(config, listener, admin_listener, shutdown).await?;
    Ok(Demo { port, gateway, identity_provider: provider.issuer.clone(), api_tokens })
}

/// The demo policy: which demo user sees which tools (see the file's comments).
pub const DEMO_POLICY: &str = include_str!("policy.toml");

/// Where the demo apps listen.
pub struct DemoApps {
    /// The VOIX task board.
    pub tasks: SocketAddr,
    /// The WebMCP imperative travel desk.
    pub travel: SocketAddr,
    /// The declarative-form helpdesk with its component-registry queue.
    pub helpdesk: SocketAddr,
    /// The legacy expense form.
    pub expenses: SocketAddr,
}

/// The demo's OIDC client id at its development provider.
const DEMO_CLIENT_ID: &str = "toolgate-demo";

/// The demo's configuration, written as a file would be so it goes through the same checks.
pub fn config_text(port: u16, apps: &DemoApps, issuer: &str, model: SocketAddr) -> String {
    let DemoApps { tasks, travel, helpdesk, expenses } = apps;
    format!(
        r#"public_url = "http://localhost:{port}"

[server]
listen = "127.0.0.1:{port}"
admin_listen = "127.0.0.1:0"
log_format = "pretty"

[sso]
issuer = "{issuer}"
client_id = "{DEMO_CLIENT_ID}"
client_secret = "env:TOOLGATE_DEMO_CLIENT_SECRET"
algorithms = ["ES256"]

[store]
path = ":memory:"

# The demo's policy starts as the embedded demo policy; the dashboard edits it (in memory).
[policy]
managed_by = "dashboard"

# The policy administration dashboard, on a host of its own.
[dashboard]
host = "admin.localhost"
admin_groups = ["toolgate-admins"]
auditor_groups = ["security-auditors"]
approver_groups = ["finance-approvers"]

# A deterministic stand-in for an OpenAI-compatible model (see demo/model/); point base_url at
# vLLM, Ollama, llama.cpp server or LiteLLM to use a real model.
[llm]
base_url = "http://{model}/v1"
model = "toolgate-demo-stand-in"

[sites.tasks]
host = "tasks.localhost"
upstream = "http://{tasks}"

[sites.travel]
host = "travel.localhost"
upstream = "http://{travel}"

[sites.helpdesk]
host = "helpdesk.localhost"
upstream = "http://{helpdesk}"

[sites.expenses]
host = "expenses.localhost"
upstream = "http://{expenses}"

# The legacy expense form has no agent markup; this rule makes it the `submit_expense` tool.
[[sites.expenses.forms.rule]]
selector = "form#expense"
name = "submit_expense"
description = "Submit an expense claim for reimbursement"
params = {{ amount = "Amount spent", currency = "Currency of the amount", date = "Day of the expense", description = "What the money was spent on" }}
"#
    )
}

async fn start_app(app: Arc<dyn DemoApp>, shutdown: &Shutdown) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.context("cannot start a demo app")?;
    let address = listener.local_addr()?;
    tokio::spawn(apps::serve(app, listener, shutdown.wait()));
    Ok(address)
}
