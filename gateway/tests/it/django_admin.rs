//! A real Django admin (Django 5.2 from PyPI, installed by `test.sh`; the project is in
//! `gateway/tests/django`) behind the gateway, driven in headless Chromium through the panel.
//!
//! The model (scripted here, so the arguments are exact) asks `add_employee` to add an employee
//! whose e-mail address is already taken. The runtime fills Django's add form and submits it;
//! the page navigates; Django answers with the form again and its error list. The gateway reads
//! that answer, the turn keeps the conversation for the page the browser lands on, whose panel
//! continues the turn: the model gets `rejected_by_site` with Django's own message, and no row is
//! created. The same call with a free address is accepted through Django's post/redirect/get.

use crate::cdp::Browser;
use crate::harness::{self, Seen, reply, upstream};
use crate::panel::{conversation, open_panel, panel_until, turn_ends};
use gateway::audit::event::EventKind;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

const TAKEN: &str = "ada@example.com";
const PASSWORD: &str = "admin-pass-for-tests-only";

/// A running Django test project with its own SQLite database.
struct Django {
    python: PathBuf,
    database: tempfile::TempDir,
    server: Child,
    port: u16,
}

impl Django {
    fn project() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/django")
    }

    async fn manage(python: &Path, database: &Path, args: &[&str]) -> String {
        let output = Command::new(python)
            .arg("manage.py")
            .args(args)
            .current_dir(Self::project())
            .env("TOOLGATE_DJANGO_DB", database)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .await
            .expect("run manage.py");
        assert!(
            output.status.success(),
            "manage.py {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Migrates a fresh database, adds the admin user and one employee, and serves it.
    async fn start() -> Self {
        let python = harness::test_python("django");
        let database = tempfile::tempdir().expect("database dir");
        let db = database.path().join("db.sqlite3");
        Self::manage(&python, &db, &["migrate", "--noinput", "-v", "0"]).await;
        let seed = format!(
            "from django.contrib.auth.models import User; from staff.models import Employee; \
             User.objects.create_superuser('admin', 'admin@example.com', '{PASSWORD}'); \
             Employee.objects.create(name='Ada Lovelace', email='{TAKEN}', hired='2025-01-02')"
        );
        Self::manage(&python, &db, &["shell", "-v", "0", "-c", &seed]).await;
        let port =
            std::net::TcpListener::bind("127.0.0.1:0").expect("free port").local_addr().expect("port").port();
        let server = Command::new(&python)
            .args(["manage.py", "runserver", &format!("127.0.0.1:{port}"), "--noreload", "--insecure"])
            .current_dir(Self::project())
            .env("TOOLGATE_DJANGO_DB", &db)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(database.path().join("server.log")).expect("log file"))
            .kill_on_drop(true)
            .spawn()
            .expect("start runserver");
        let mut django = Self { python, database, server, port };
        for _ in 0..300 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return django;
            }
            if let Ok(Some(status)) = django.server.try_wait() {
                panic!("Django's runserver exited ({status}): {}", django.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("Django did not listen on {port} within 30 s: {}", django.log());
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.database.path().join("server.log")).unwrap_or_default()
    }

    fn address(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The employees' e-mail addresses, from Django's own database.
    async fn emails(&self) -> Vec<String> {
        let db = self.database.path().join("db.sqlite3");
        let listed = Self::manage(
            &self.python,
            &db,
            &["shell", "-v", "0", "-c", "from staff.models import Employee; print(','.join(Employee.objects.order_by('id').values_list('email', flat=True)))"],
        )
        .await;
        listed.split(',').map(str::to_owned).collect()
    }
}

impl Drop for Django {
    fn drop(&mut self) {
        let _ = self.server.start_kill();
    }
}

/// A scripted OpenAI-compatible model: asked without a tool result, it calls `add_employee`
/// with `email`; asked with one, it answers by quoting the last tool result.
async fn model(email: &'static str) -> (harness::Upstream, String) {
    let server = upstream(move |seen: &Seen| {
        let request: Value = serde_json::from_slice(&seen.body).unwrap_or(Value::Null);
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let last_tool = messages.iter().rev().find(|message| message["role"] == "tool");
        let delta = match last_tool {
            None => json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_add", "type": "function",
                "function": {"name": "add_employee", "arguments": json!({
                    "name": "Ada Byron", "email": email, "hired": "2026-02-01"}).to_string()}}]}),
            Some(tool) => json!({"role": "assistant", "content": format!("The site said: {}", tool["content"].as_str().unwrap_or(""))}),
        };
        let finish = if last_tool.is_none() { "tool_calls" } else { "stop" };
        let chunk = |delta: Value, finish: Value| {
            format!("data: {}\n\n", json!({"id": "x", "object": "chat.completion.chunk", "model": "scripted",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
        };
        let body = format!("{}{}data: [DONE]\n\n", chunk(delta, Value::Null), chunk(json!({}), json!(finish)));
        reply("text/event-stream", body)
    })
    .await;
    let llm = format!(
        "[llm]\nbase_url = \"http://{}/v1\"\nmodel = \"scripted\"\nmax_retries = 0\n",
        server.address
    );
    (server, llm)
}

const RULE: &str = "[[sites.site0.forms.rule]]\nselector = \"form#employee_form\"\nname = \"add_employee\"\n\
                    description = \"Create an employee record\"\npath = \"/admin/staff/employee/add/\"\n\
                    autosubmit = true\nparams.hired = { format = \"date\" }\n";
const POLICY: &str = "[defaults]\nunknown_tools = \"allow\"\nunknown_contexts = \"allow\"\n";

/// Signs in to Django's admin through the gateway and opens the "add employee" page.
async fn add_page(browser: &Browser, base: &str) -> crate::cdp::Page {
    let page = browser.page().await;
    page.goto(&format!("{base}/admin/login/?next=/admin/staff/employee/add/")).await;
    page.navigate_by(&format!(
        "document.querySelector('#id_username').value = 'admin'; document.querySelector('#id_password').value = {}; \
         document.querySelector('#login-form').requestSubmit()",
        json!(PASSWORD)
    ))
    .await;
    page.eval("window.__toolgate__.ready.then(() => true)").await;
    let url = page.eval("location.pathname").await;
    assert_eq!(
        url,
        json!("/admin/staff/employee/add/"),
        "signed in through the gateway (Django's CSRF check passed)"
    );
    page
}

async fn run(
    email: &'static str,
) -> (Django, harness::Upstream, Vec<(String, String, String)>, Vec<String>, gateway::app::Running) {
    let django = Django::start().await;
    let (model, llm) = model(email).await;
    let sites = [("hr.localhost", django.address())];
    let (directory, _) = (tempfile::tempdir().expect("policy dir"), ());
    let policy = directory.path().join("policy.toml");
    std::fs::write(&policy, POLICY).expect("policy");
    let extra = format!("{llm}[policy]\nfile = {:?}\n", policy.display().to_string());
    let gateway =
        harness::gateway_from_text(&format!("{}{RULE}", harness::config_text(&sites, &extra))).await;
    let base = format!("http://hr.localhost:{}", gateway.address.port());
    let browser = Browser::launch(&[]).await;
    let page = add_page(&browser, &base).await;
    let tools =
        page.eval("JSON.stringify(window.__toolgate__.catalog().tools.map((tool) => tool.name))").await;
    assert_eq!(tools, json!("[\"add_employee\"]"));

    open_panel(&page).await;
    // The form submission navigates; the page the browser lands on continues the turn.
    let ask = "const root = this; const input = root.querySelector('[data-field=message]'); input.value = 'Add Ada Byron, hired 2026-02-01'; \
               root.querySelector('form').requestSubmit(); return true;";
    page.loaded_after(page.eval_in_shadow("toolgate-panel", ask)).await;
    page.eval("window.__toolgate__.ready.then(() => true)").await;
    crate::runtime::until(&page, "document.querySelector('toolgate-panel')").await;
    let continued = "root.querySelector('[data-continued=true]') && ['done', 'error'].includes(root.querySelector('.root').dataset.turn)";
    panel_until(&page, continued).await;
    assert_eq!(turn_ends(&page).await, "done");
    let log = conversation(&page).await;
    let emails = django.emails().await;
    drop(browser);
    drop(directory);
    (django, model, log, emails, gateway)
}

#[tokio::test]
async fn a_duplicate_address_comes_back_as_the_sites_refusal_and_creates_nothing() {
    let (_django, model, log, emails, gateway) = run(TAKEN).await;
    assert_eq!(emails, [TAKEN], "Django created no row");
    let (role, status, text) =
        log.iter().find(|(_, _, text)| text.contains("add_employee was submitted")).expect("continued");
    assert_eq!((role.as_str(), status.as_str()), ("tool", "failed"), "{text}");
    assert!(text.contains("the site refused it"), "{text}");
    let answer = log.iter().rev().find(|(role, _, _)| role == "assistant").expect("an answer").2.clone();
    assert!(
        answer.contains("rejected_by_site") && answer.contains("Employee with this Email already exists."),
        "{answer}"
    );
    // The model saw the refusal as the call's result, and saw it once.
    let bodies: Vec<String> =
        model.requests().iter().map(|seen| String::from_utf8_lossy(&seen.body).into_owned()).collect();
    assert_eq!(bodies.len(), 2, "the first turn and its continuation");
    assert!(
        bodies[1].contains("\"tool_call_id\":\"call_add\"") && bodies[1].contains("rejected_by_site"),
        "{}",
        bodies[1]
    );
    let audited =
        gateway::audit::query::find(gateway.state.audit.store(), &Default::default(), 0, 200).expect("audit");
    let outcomes: Vec<&str> = audited
        .records
        .iter()
        .filter(|record| record.event.kind == Some(EventKind::FormOutcome))
        .filter_map(|record| record.event.decision.as_deref())
        .collect();
    assert_eq!(outcomes, ["rejected_by_site"]);
    let continued = audited
        .records
        .iter()
        .filter(|record| record.event.kind == Some(EventKind::CatalogExposure))
        .filter(|record| record.event.explanation.as_ref().is_some_and(|why| why["continued"] == json!(true)))
        .count();
    assert_eq!(continued, 1, "the continued turn says so in its audit record");
    gateway.stop().await;
}

#[tokio::test]
async fn a_free_address_is_accepted_with_the_landing_page() {
    let (_django, _model, log, emails, gateway) = run("grace@example.com").await;
    assert_eq!(emails, [TAKEN, "grace@example.com"], "Django created the row");
    let answer = log.iter().rev().find(|(role, _, _)| role == "assistant").expect("an answer").2.clone();
    assert!(answer.contains("\"submitted\":true") && answer.contains("/admin/staff/employee/"), "{answer}");
    assert!(answer.contains("Select employee to change"), "the landing page's title: {answer}");
    gateway.stop().await;
}
