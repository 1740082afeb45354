//! The agent panel in real headless Chromium: the launcher opens it with the keyboard focus in
//! the message field and Escape closes it; it lists what the agent sees and, greyed with the
//! reason, what the policy hides; it is a full-width sheet on a phone; a page CSP without
//! `'unsafe-inline'` for styles does not unstyle it; and, through `toolgate demo` with its
//! stand-in model, answers stream in, tool calls run on the page, and an approval card shows the
//! canonical arguments and approving lets the call run.
//!
//! The panel's shadow root is closed, so the page cannot read the conversation; tests reach it
//! through the DevTools protocol (`Page::eval_in_shadow`) and read the state it marks with data
//! attributes (see `injector/runtime/README.md`).

use crate::cdp::{Browser, Page};
use crate::harness::{self, reply, upstream};
use crate::runtime::until;
use gateway::app::shutdown::Shutdown;
use gateway::demo::Demo;
use serde_json::{Value, json};

/// The panel's host element; its closed shadow root is `root` in the expressions below.
const PANEL: &str = "toolgate-panel";

/// Starts the demo signed in as `user` and opens `site` (`tasks`, `travel`, …) once its app and
/// the panel are ready.
pub(crate) async fn demo_page(user: &str, site: &str) -> (Demo, Browser, Page) {
    let demo = gateway::demo::start(0, Some(user.into()), Shutdown::new()).await.expect("demo starts");
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://{site}.localhost:{}/", demo.port)).await;
    until(&page, &format!("document.body.dataset.appReady === '{site}'")).await;
    until(&page, "document.querySelector('toolgate-panel') !== null").await;
    (demo, browser, page)
}

/// A gateway enforcing `policy` in front of the app at `app` as `shop.localhost` (`extra` config
/// before the sites), and Chromium on its front page once the panel is there.
async fn shop_page(
    app: std::net::SocketAddr,
    policy: &str,
    extra: &str,
) -> (gateway::app::Running, tempfile::TempDir, Browser, Page) {
    let (gateway, directory) = harness::gateway_with_policy(&[("shop.localhost", app)], extra, policy).await;
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://shop.localhost:{}/", gateway.address.port())).await;
    until(&page, "document.querySelector('toolgate-panel') !== null").await;
    (gateway, directory, browser, page)
}

/// Evaluates `expression` with `root` bound to the panel's (closed) shadow root.
pub(crate) async fn panel(page: &Page, expression: &str) -> Value {
    page.eval_in_shadow(PANEL, &format!("const root = this; return ({expression});")).await
}

/// Waits (up to 10 s, polling in the page) until `condition` over `root` is truthy; returns it.
pub(crate) async fn panel_until(page: &Page, condition: &str) -> Value {
    let body = format!(
        "const root = this; const deadline = Date.now() + 10000; for (;;) {{ const value = await ({condition}); \
         if (value) {{ return value; }} if (Date.now() > deadline) {{ throw new Error('still false: ' + {quoted}); }} \
         await new Promise((resolve) => setTimeout(resolve, 20)); }}",
        quoted = json!(condition)
    );
    page.eval_in_shadow(PANEL, &body).await
}

pub(crate) async fn open_panel(page: &Page) {
    panel(page, "root.querySelector('[data-action=open]').click()").await;
    panel_until(page, "root.querySelector('.root').dataset.open === 'true'").await;
}

async fn key(page: &Page, key: &str, code: &str, key_code: u32) {
    // Enter needs its text so that it also activates a focused button (keypress).
    let text = if key == "Enter" { "\r" } else { "" };
    for kind in ["keyDown", "keyUp"] {
        let mut event = json!({"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code});
        if kind == "keyDown" && !text.is_empty() {
            event["text"] = json!(text);
        }
        page.call("Input.dispatchKeyEvent", event).await;
    }
}

/// Types `text` into the message field the way a user does and presses Enter.
pub(crate) async fn send_message(page: &Page, text: &str) {
    panel(page, "root.querySelector('[data-field=message]').focus()").await;
    page.call("Input.insertText", json!({"text": text})).await;
    key(page, "Enter", "Enter", 13).await;
    panel_until(page, "root.querySelector('.root').dataset.turn === 'running' || root.querySelector('.root').dataset.turn === 'done'").await;
}

pub(crate) async fn turn_ends(page: &Page) -> String {
    let state = panel_until(
        page,
        "['done', 'error', 'stopped', 'lost'].includes(root.querySelector('.root').dataset.turn) && root.querySelector('.root').dataset.turn",
    )
    .await;
    state.as_str().unwrap_or("?").to_owned()
}

/// The conversation as `[role, status, text]`.
pub(crate) async fn conversation(page: &Page) -> Vec<(String, String, String)> {
    let rows = panel(
        page,
        "JSON.stringify([...root.querySelectorAll('.log > li')].map((item) => [item.dataset.role || 'approval', item.dataset.status || item.dataset.approvalState || '', item.textContent]))",
    )
    .await;
    let rows: Vec<Vec<String>> = serde_json::from_str(rows.as_str().expect("log json")).expect("json");
    rows.into_iter().map(|row| (row[0].clone(), row[1].clone(), row[2].clone())).collect()
}

/// No uncaught exception and no `console.error` (failed resource loads are the page's business).
fn assert_no_script_errors(page: &Page) {
    let errors: Vec<String> = page
        .console_errors()
        .into_iter()
        .filter(|error| error.starts_with("uncaught") || error.starts_with("console.error"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn panel_lists_visible_tools_and_greys_out_hidden_ones_with_the_reason() {
    let (_demo, _browser, page) = demo_page("alice", "travel").await;
    assert_eq!(panel(&page, "root.querySelector('.panel').hidden").await, json!(true), "closed at first");
    open_panel(&page).await;
    assert_eq!(
        panel(&page, "root.activeElement && root.activeElement.dataset.field").await,
        json!("message"),
        "opening puts the focus in the message field"
    );
    assert_eq!(
        panel(&page, "root.querySelector('[data-action=open]').getAttribute('aria-expanded')").await,
        json!("true")
    );
    // Signing out is one click away on every site page, in the panel's header.
    assert_eq!(
        panel(&page, "root.querySelector('header [data-action=sign-out]').getAttribute('href')").await,
        json!("/.toolgate/logout")
    );
    let entries = panel(
        &page,
        "JSON.stringify([...root.querySelectorAll('[data-entry=tool]')].map((e) => [e.dataset.name, e.dataset.visible, e.textContent]))",
    )
    .await;
    let entries: Vec<(String, String, String)> =
        serde_json::from_str(entries.as_str().expect("json")).expect("json");
    let visible: Vec<&str> =
        entries.iter().filter(|entry| entry.1 == "true").map(|entry| entry.0.as_str()).collect();
    let mut sorted = visible.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["list_destinations", "search_flights"], "alice's agent sees the search tools");
    let booking = entries.iter().find(|entry| entry.0 == "book_flight").expect("book_flight is listed");
    assert_eq!(booking.1, "false", "book_flight is greyed out for alice");
    assert!(booking.2.contains("hidden: "), "the reason is shown: {}", booking.2);
    let examples = panel(
        &page,
        "JSON.stringify([...root.querySelectorAll('[data-example]')].map((b) => b.textContent))",
    )
    .await;
    let examples: Vec<String> = serde_json::from_str(examples.as_str().expect("json")).expect("json");
    assert!((2..=4).contains(&examples.len()), "2–4 example prompts: {examples:?}");
    assert_no_script_errors(&page);
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_closes_the_panel_and_focus_returns_to_the_launcher() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    open_panel(&page).await;
    key(&page, "Escape", "Escape", 27).await;
    panel_until(&page, "root.querySelector('.root').dataset.open === 'false'").await;
    assert_eq!(panel(&page, "root.querySelector('.panel').hidden").await, json!(true));
    assert_eq!(panel(&page, "root.activeElement && root.activeElement.dataset.action").await, json!("open"));
    assert_eq!(
        panel(&page, "root.querySelector('[data-action=open]').getAttribute('aria-expanded')").await,
        json!("false")
    );
    // Enter on the focused launcher opens it again.
    key(&page, "Enter", "Enter", 13).await;
    panel_until(&page, "root.querySelector('.root').dataset.open === 'true'").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_narrow_screen_the_panel_is_a_full_width_sheet() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    page.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 375, "height": 700, "deviceScaleFactor": 2, "mobile": true}),
    )
    .await;
    open_panel(&page).await;
    let rect = panel(&page, "JSON.stringify(root.querySelector('.panel').getBoundingClientRect())").await;
    let rect: Value = serde_json::from_str(rect.as_str().expect("json")).expect("json");
    let width = page.eval("window.innerWidth").await;
    assert_eq!(rect["left"], json!(0), "{rect}");
    assert_eq!(rect["width"], width, "{rect}");
    assert_eq!(rect["bottom"], page.eval("window.innerHeight").await, "{rect}");
}

#[tokio::test(flavor = "multi_thread")]
async fn page_tools_off_says_so_in_the_panel() {
    let (_demo, _browser, page) = demo_page("dave", "tasks").await;
    open_panel(&page).await;
    assert_eq!(panel(&page, "root.querySelector('[data-section=notice]').dataset.code").await, json!("off"));
    assert_eq!(panel(&page, "root.querySelector('[data-section=notice]').hidden").await, json!(false));
    assert_eq!(panel(&page, "root.querySelectorAll('[data-example]').length").await, json!(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_streams_an_answer() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    open_panel(&page).await;
    send_message(&page, "What can you do on this page?").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    let log = conversation(&page).await;
    assert_eq!(log[0], ("user".into(), String::new(), "What can you do on this page?".into()));
    let answer = log.iter().find(|row| row.0 == "assistant").expect("an answer");
    assert!(!answer.2.trim().is_empty());
    assert_no_script_errors(&page);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_script_cannot_read_the_conversation() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    // Listens the way an analytics or session-replay script does: on the document, for what the
    // user types (the keys and input data of composed events).
    page.eval(
        "window.pageHeard = []; for (const type of ['keydown', 'keyup', 'keypress', 'beforeinput', 'input']) \
         { document.addEventListener(type, (event) => window.pageHeard.push(`${type}:${event.key || event.data || ''}`)); }",
    )
    .await;
    open_panel(&page).await;
    send_message(&page, "What can you do on this page?").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    let log = conversation(&page).await;
    let answer = log.iter().find(|row| row.0 == "assistant").expect("an answer").2.trim().to_owned();
    assert!(answer.len() > 10, "a real answer to look for: {answer:?}");

    let host = "document.querySelector('toolgate-panel')";
    assert_eq!(page.eval(&format!("{host}.shadowRoot === null")).await, json!(true), "the root is closed");
    assert_eq!(
        page.eval(&format!("Object.getOwnPropertyNames({host}).length")).await,
        json!(0),
        "the host carries no reference"
    );
    for reader in
        ["document.body.innerText", "document.body.textContent", "document.documentElement.outerHTML"]
    {
        let text = page.eval(reader).await;
        let text = text.as_str().expect("page text");
        assert!(!text.contains(&answer), "{reader} shows the answer: {answer}");
        assert!(!text.contains("What can you do on this page?"), "{reader} shows the message");
    }
    assert_eq!(page.eval("window.pageHeard").await, json!([]), "typing stays inside the panel");
    assert_no_script_errors(&page);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_runs_on_the_page_and_the_answer_comes_back() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    open_panel(&page).await;
    send_message(&page, "Add a task called \"Water the plants\"").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    let log = conversation(&page).await;
    let call = log.iter().find(|row| row.0 == "tool" && row.2.contains("add_task")).expect("a tool line");
    assert_eq!(call.1, "done", "{log:?}");
    let tasks = page.eval("document.getElementById('tasks').textContent").await;
    assert!(tasks.as_str().unwrap_or("").contains("Water the plants"), "the page ran the tool: {tasks}");
    let after = log.iter().position(|row| row.0 == "tool").expect("tool line");
    assert!(
        log[after..].iter().any(|row| row.0 == "assistant"),
        "the model answers after the result: {log:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_card_shows_the_canonical_arguments_and_approving_runs_the_call() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    open_panel(&page).await;
    send_message(&page, "Delete task 3").await;
    let id = panel_until(&page, "root.querySelector('[data-approval-id]') && root.querySelector('[data-approval-id]').dataset.approvalId").await;
    let id = id.as_str().expect("approval id").to_owned();
    let card = format!("root.querySelector('[data-approval-id=\"{id}\"]')");
    assert_eq!(panel(&page, &format!("{card}.dataset.tool")).await, json!("delete_task"));
    assert_eq!(panel(&page, &format!("{card}.dataset.approvalState")).await, json!("pending"));
    let shown = panel(&page, &format!("{card}.querySelector('pre').textContent")).await;
    let shown: Value = serde_json::from_str(shown.as_str().expect("args text")).expect("the card shows JSON");
    // The card shows what the gateway recorded for the approval: the canonical arguments.
    let recorded =
        page.eval(&format!("fetch('/.toolgate/agent/approvals/{id}').then((r) => r.json())")).await;
    assert_eq!(shown, recorded["args"], "card args vs the approval record");
    assert_eq!(shown, json!({"id": 3}));
    assert!(
        page.eval("document.getElementById('tasks').textContent").await.as_str().unwrap_or("").contains("#3")
    );

    panel(&page, &format!("{card}.querySelector('[data-action=approve]').click()")).await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    assert_eq!(panel(&page, &format!("{card}.dataset.approvalState")).await, json!("approved"));
    let log = conversation(&page).await;
    let call = log.iter().find(|row| row.0 == "tool" && row.2.contains("delete_task")).expect("the call ran");
    assert_eq!(call.1, "done", "{log:?}");
    let tasks = page.eval("document.getElementById('tasks').textContent").await;
    assert!(!tasks.as_str().unwrap_or("").contains("#3"), "task 3 is gone: {tasks}");
}

#[tokio::test(flavor = "multi_thread")]
async fn denying_an_approval_keeps_the_page_untouched() {
    let (_demo, _browser, page) = demo_page("alice", "tasks").await;
    open_panel(&page).await;
    send_message(&page, "Delete task 2").await;
    panel_until(&page, "root.querySelector('[data-approval-id] [data-action=deny]')").await;
    panel(&page, "root.querySelector('[data-approval-id] [data-action=deny]').click()").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    assert_eq!(
        panel(&page, "root.querySelector('[data-approval-id]').dataset.approvalState").await,
        json!("denied")
    );
    assert!(!conversation(&page).await.iter().any(|row| row.0 == "tool" && row.2.contains("delete_task")));
    assert!(
        page.eval("document.getElementById('tasks').textContent").await.as_str().unwrap_or("").contains("#2")
    );
}

/// A page whose CSP allows no inline styles, with one VOIX tool.
const STRICT_PAGE: &str = r#"<!doctype html><html lang="en"><head><title>Strict</title></head><body>
<tool name="add_note" description="Add a note to the page" return><prop name="text" type="string" required></prop></tool>
<p>strict page</p></body></html>"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_strict_style_csp_does_not_unstyle_the_panel() {
    let app = upstream(|_| {
        let mut response = reply("text/html; charset=utf-8", STRICT_PAGE);
        response.headers_mut().insert(
            "content-security-policy",
            "default-src 'self'; style-src 'self'; script-src 'self'".parse().expect("header"),
        );
        response
    })
    .await;
    let (_gateway, _policy, _browser, page) = shop_page(app.address, crate::runtime::POLICY, "").await;
    open_panel(&page).await;
    let launcher = panel(
        &page,
        "(() => { const style = getComputedStyle(root.querySelector('.launcher')); return [style.position, style.backgroundColor, style.borderRadius]; })()",
    )
    .await;
    assert_eq!(launcher, json!(["fixed", "rgb(40, 81, 200)", "50%"]), "the panel's own styles apply");
    assert_eq!(panel(&page, "getComputedStyle(root.querySelector('.panel')).position").await, json!("fixed"));
    let violations: Vec<String> =
        page.console_errors().into_iter().filter(|error| error.contains("Content Security Policy")).collect();
    assert!(violations.is_empty(), "{violations:?}");
}

/// A page with one VOIX tool whose arguments are required, and a date.
const EXPENSE_PAGE: &str = r#"<!doctype html><html lang="en"><head><title>Expenses</title></head><body>
<tool name="submit_expense" description="File an expense claim"><prop name="amount" type="number" required></prop><prop name="date" type="string" format="date" required></prop></tool>
<p>expenses</p><script>document.querySelector('tool').addEventListener('call', () => { window.ran = true; });</script></body></html>"#;

/// Every expense needs a human's approval.
const APPROVE_EXPENSES: &str = r#"
[defaults]
unknown_contexts = "allow"

[[rule]]
id = "expenses"
tools.approve = ["submit_expense"]
"#;

/// The model calls `submit_expense` with `{}`: the gateway checks the arguments against the
/// tool's schema first, so no approval card ever asks a human about a call the tool would refuse;
/// the model gets the problem back, and the panel says what happened.
#[tokio::test(flavor = "multi_thread")]
async fn arguments_that_do_not_fit_the_schema_go_back_to_the_model_and_never_to_an_approval_card() {
    let app = upstream(|_| reply("text/html; charset=utf-8", EXPENSE_PAGE)).await;
    let options = gateway::demo::model::StandInOptions {
        forge_call: Some("submit_expense".into()),
        ..Default::default()
    };
    let (model, llm) = crate::agent_turn::model(options).await;
    let (_gateway, _policy, _browser, page) = shop_page(app.address, APPROVE_EXPENSES, &llm).await;
    open_panel(&page).await;
    send_message(&page, "File my expense").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);

    let log = conversation(&page).await;
    let invalid = log.iter().find(|row| row.1 == "invalid").expect("a line about the arguments");
    assert!(
        invalid.2.contains("submit_expense") && invalid.2.contains("\"amount\" is a required property"),
        "{log:?}"
    );
    assert!(!log.iter().any(|row| row.0 == "approval"), "no approval card: {log:?}");
    assert_eq!(panel(&page, "root.querySelectorAll('[data-approval-id]').length").await, json!(0));
    assert_eq!(page.eval("window.ran === true").await, json!(false), "the page never ran the call");
    // The model got the problems as the call's result, and could correct the call.
    let bodies = model.bodies();
    let second: Value = serde_json::from_str(bodies.last().expect("a second model request")).expect("json");
    let result = second["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|message| message["role"] == "tool"))
        .and_then(|message| message["content"].as_str())
        .expect("a tool result")
        .to_owned();
    assert!(result.contains("do not fit the tool's input schema"), "{result}");
    assert!(result.contains(r#""date" is a required property"#), "{result}");
    assert_no_script_errors(&page);
}
