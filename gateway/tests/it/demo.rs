//! `toolgate demo` end to end in headless Chromium: every dialect's page, and the demo users
//! seeing different tools (in the HTML they receive and in the runtime's catalog) according to
//! the demo policy.

use crate::cdp::{Browser, Page};
use gateway::app::shutdown::Shutdown;
use serde_json::Value;

/// Names of the `<tool>`, `<context>` and `<form toolname>` elements in the HTML the gateway
/// sends for this page (fetched again and parsed, so the runtime's own DOM changes do not count).
const DOM_TOOLS: &str = "fetch(location.href).then((r) => r.text()).then((html) => {
    const received = new DOMParser().parseFromString(html, 'text/html');
    return JSON.stringify({
        tools: [...received.querySelectorAll('tool')].map((t) => t.getAttribute('name')),
        contexts: [...received.querySelectorAll('context')].map((c) => c.getAttribute('name')),
        forms: [...received.querySelectorAll('form[toolname]')].map((f) => f.getAttribute('toolname')),
    });
})";

/// The runtime's visible catalog: sorted tool and context names.
const CATALOG: &str = "window.__toolgate__.ready.then(() => {
    const catalog = window.__toolgate__.catalog();
    return JSON.stringify({
        tools: catalog.tools.map((t) => t.name).sort(),
        contexts: catalog.contexts.map((c) => c.name).sort(),
    });
})";

async fn visit(page: &Page, url: &str, ready: &str) -> (Value, Value) {
    page.goto(url).await;
    let wait = format!(
        "new Promise((resolve) => {{ const check = () => document.body.dataset.appReady === '{ready}' ? resolve(true) : setTimeout(check, 20); check(); }})"
    );
    page.eval(&wait).await;
    let dom: Value =
        serde_json::from_str(page.eval(DOM_TOOLS).await.as_str().expect("dom json")).expect("json");
    let catalog: Value =
        serde_json::from_str(page.eval(CATALOG).await.as_str().expect("catalog json")).expect("json");
    (dom, catalog)
}

fn names(value: &Value) -> Vec<&str> {
    value.as_array().expect("array").iter().map(|name| name.as_str().unwrap_or("?")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn demo_users_see_the_tools_the_demo_policy_gives_them() {
    // (user, tasks page tools, tasks contexts, travel catalog, expense form tool)
    type Names = &'static [&'static str];
    let cases: [(&str, Names, Names, Names, Names); 3] = [
        (
            "alice",
            &["add_task", "complete_task", "delete_task"],
            &["task_list"],
            &["list_destinations", "search_flights"],
            &["submit_expense"],
        ),
        ("bob", &[], &[], &["book_flight", "list_destinations", "search_flights"], &["submit_expense"]),
        ("dave", &[], &[], &[], &[]),
    ];
    for (user, task_tools, task_contexts, travel_tools, expense_forms) in cases {
        let demo = gateway::demo::start(0, Some(user.into()), Shutdown::new()).await.expect("demo starts");
        let browser = Browser::launch(&[]).await;
        let page = browser.page().await;
        let port = demo.port;

        let (dom, catalog) = visit(&page, &format!("http://tasks.localhost:{port}/"), "tasks").await;
        assert_eq!(names(&dom["tools"]), task_tools, "{user}: tools in the task board's HTML");
        assert_eq!(names(&dom["contexts"]), task_contexts, "{user}: contexts in the task board's HTML");
        assert_eq!(names(&catalog["tools"]), task_tools, "{user}: task board catalog");
        let session = page.eval("fetch('/.toolgate/agent/session').then((r) => r.json())").await;
        assert_eq!(session["user"]["id"], user, "the session names the signed-in user");
        let expected_name = match user {
            "alice" => "Alice Andersen",
            "bob" => "Bob Berg",
            _ => "Dave Dunn",
        };
        assert_eq!(session["user"]["name"], expected_name, "the display name comes from the name claim");
        assert_eq!(session["page_tools"], !task_tools.is_empty());
        // Switching users needs no typed URL: every demo page links to the sign-out page.
        let switch = page.eval("document.querySelector('header .switch a').getAttribute('href')").await;
        assert_eq!(switch, "/.toolgate/logout", "{user}");
        let permissions =
            page.eval("fetch(location.href).then((r) => r.headers.get('permissions-policy'))").await;
        if task_tools.is_empty() {
            assert_eq!(permissions, "tools=()", "{user}: page tools are off on the task board");
        } else {
            assert_eq!(permissions, Value::Null, "{user}: page tools are on on the task board");
        }

        let (_, catalog) = visit(&page, &format!("http://travel.localhost:{port}/"), "travel").await;
        assert_eq!(names(&catalog["tools"]), travel_tools, "{user}: travel desk catalog");

        let (dom, catalog) = visit(&page, &format!("http://helpdesk.localhost:{port}/"), "helpdesk").await;
        assert_eq!(names(&dom["forms"]), ["open_ticket"], "{user}: everyone may open tickets");
        assert_eq!(names(&catalog["tools"]), ["open_ticket"]);
        let (_, catalog) = visit(&page, &format!("http://helpdesk.localhost:{port}/queue"), "queue").await;
        assert_eq!(
            names(&catalog["tools"]),
            ["ticket_queue.filter", "ticket_queue.select", "ticket_queue.sort"],
            "{user}: the queue component's tools"
        );
        assert_eq!(names(&catalog["contexts"]), ["ticket_queue.state"]);

        let (dom, catalog) = visit(&page, &format!("http://expenses.localhost:{port}/"), "expenses").await;
        assert_eq!(names(&dom["forms"]), expense_forms, "{user}: the legacy form's rule-made tool");
        assert_eq!(names(&catalog["tools"]), expense_forms, "{user}: expenses catalog");
        // Chromium 156 knows the `tools` permission but reports it as an origin-trial feature
        // when a document turns it off; that report is expected where page tools are off.
        let errors: Vec<String> = page
            .console_errors()
            .into_iter()
            .filter(|error| !(task_tools.is_empty() && error.contains("feature not enabled: 'tools'")))
            .collect();
        assert!(errors.is_empty(), "{user}: {errors:?}");
        demo.gateway.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_in_every_demo_dialect_run_their_page_handlers() {
    let demo = gateway::demo::start(0, Some("alice".into()), Shutdown::new()).await.expect("demo starts");
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    let port = demo.port;
    let call = |name: &str, args: &str| format!("window.__toolgate__.call('{name}', {args})");

    visit(&page, &format!("http://tasks.localhost:{port}/"), "tasks").await;
    let added = page.eval(&call("add_task", "{title: 'Water the plants'}")).await;
    assert_eq!(added["ok"], true, "{added}");
    assert!(added["result"]["tasks"].to_string().contains("Water the plants"), "{added}");
    let context = page.eval("window.__toolgate__.catalog().contexts[0].text").await;
    assert!(
        context.as_str().unwrap_or_default().contains("Water the plants"),
        "the context follows the page"
    );
    let refused = page.eval(&call("add_task", "{}")).await;
    assert_eq!(refused["error"]["code"], "invalid_arguments", "{refused}");

    visit(&page, &format!("http://travel.localhost:{port}/"), "travel").await;
    let flights = page.eval(&call("search_flights", "{from: 'Berlin', to: 'London'}")).await;
    assert_eq!(flights["ok"], true, "{flights}");
    assert!(flights["result"].to_string().contains("TG101"), "{flights}");
    let hidden = page.eval(&call("book_flight", "{flight: 'TG101', date: '2026-12-01'}")).await;
    assert_eq!(hidden["error"]["code"], "hidden_by_policy", "alice may not book: {hidden}");

    visit(&page, &format!("http://helpdesk.localhost:{port}/queue"), "queue").await;
    let filtered = page.eval(&call("ticket_queue.filter", "{category: 'software'}")).await;
    assert_eq!(filtered["result"]["shown"], serde_json::json!([2]), "{filtered}");
    let state = page.eval("window.__toolgate__.catalog().contexts[0].text").await;
    assert!(state.as_str().unwrap_or_default().contains("software"), "{state}");
    demo.gateway.stop().await;
}

/// A GET with `token` as the bearer, to the demo gateway at `port` on `host`.
fn bearer_get(
    host: &str,
    port: u16,
    path: &str,
    token: &str,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    http::Request::get(path)
        .header("host", format!("{host}:{port}"))
        .header("authorization", format!("Bearer {token}"))
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .expect("request")
}

/// The tokens `toolgate demo` prints work for what it prints them for: `whoami`, the task board's
/// OpenAI-compatible endpoint (the printed OpenAI SDK line runs as printed) and bob's approvals.
#[tokio::test(flavor = "multi_thread")]
async fn the_printed_api_tokens_and_snippets_work() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    let token = |user: &str| {
        demo.api_tokens
            .iter()
            .find(|token| token.user == user)
            .map(|token| token.token.clone())
            .expect("token")
    };
    let (alice, bob) = (token("alice"), token("bob"));
    let address = demo.gateway.address;

    let whoami =
        crate::harness::send(address, bearer_get("tasks.localhost", demo.port, "/.toolgate/whoami", &alice))
            .await;
    assert_eq!(whoami.status, 200, "{}", whoami.text());
    let whoami: Value = serde_json::from_slice(&whoami.body).expect("json");
    assert_eq!(whoami["user"], "alice", "{whoami}");
    let models =
        crate::harness::send(address, bearer_get("localhost", demo.port, "/sites/tasks/v1/models", &alice))
            .await;
    assert_eq!(models.status, 200, "{}", models.text());
    let approvals =
        crate::harness::send(address, bearer_get("localhost", demo.port, "/.toolgate/approvals", &bob)).await;
    assert_eq!(approvals.status, 200, "bob approves: {}", approvals.text());
    let queue: Value = serde_json::from_slice(&approvals.body).expect("the queue is JSON");
    assert!(queue.is_object() || queue.is_array(), "{queue}");

    let snippets = gateway::demo::api_snippets(demo.port, &demo.api_tokens);
    assert!(snippets.contains(&format!("export TOOLGATE_TOKEN_ALICE={alice}")));
    let line =
        snippets.lines().find(|line| line.trim_start().starts_with("python3 -c '")).expect("an SDK line");
    let program = line.trim_start().trim_start_matches("python3 -c '").trim_end_matches('\'');
    let output = tokio::process::Command::new(crate::harness::test_python("openai"))
        .args(["-c", program])
        .env("TOOLGATE_TOKEN_ALICE", &alice)
        .env_remove("OPENAI_BASE_URL")
        .output()
        .await
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("stand-in"), "the stand-in model answered through the gateway: {stdout}");
}
