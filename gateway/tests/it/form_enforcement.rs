//! Server-side enforcement for approval-gated form tools, over HTTP: a turn against the stand-in
//! model gets a form tool's call approved (which makes the gateway guard the form's action); then
//! agent-marked submissions without a token, with a forged or replayed token, with other field
//! values, in urlencoded, multipart, JSON and query form, or with a method override are refused
//! with 403 and the site receives nothing; a human submission passes byte for byte; the approved
//! one passes exactly once. And end to end in headless Chromium through `toolgate demo`: the
//! user asks the panel for an expense, approves it, and the claim reaches the site exactly once.

use crate::cdp::Browser;
use crate::harness::{self, Seen, reply, send, upstream};
use crate::panel::{panel, panel_until};
use crate::runtime::until;
use bytes::Bytes;
use gateway::app::shutdown::Shutdown;
use gateway::demo::model::{StandIn, StandInOptions};
use http::Request;
use http_body_util::Full;
use serde_json::{Value, json};
use std::sync::Arc;

const HOST: &str = "expenses.test";

const POLICY: &str = r#"
[[rule]]
id = "expenses"
tools.approve = ["submit_expense"]
"#;

/// An approved `submit_expense` call: its id, token and the approved arguments.
struct Approved {
    call_id: String,
    token: String,
    args: Value,
}

async fn model() -> (Arc<StandIn>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind model");
    let address = listener.local_addr().expect("address");
    let stand_in = Arc::new(StandIn::new(StandInOptions::default()));
    let serving = Arc::clone(&stand_in);
    tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
    (stand_in, format!("[llm]\nbase_url = \"http://{address}/v1\"\nmodel = \"stand-in\"\nmax_retries = 0\n"))
}

fn api(path: &str, csrf: &str, body: &Value) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", HOST)
        .header("content-type", "application/json")
        .header("x-toolgate-csrf", csrf)
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request")
}

/// A submission to the expense form's action.
fn submit(content_type: &str, body: impl Into<Bytes>) -> Request<Full<Bytes>> {
    Request::post("/submit")
        .header("host", HOST)
        .header("content-type", content_type)
        .body(Full::new(body.into()))
        .expect("request")
}

/// Runs a turn whose model calls `submit_expense`, approves the call as the user, and returns
/// what the page would get with the approved `tool_call`.
async fn approved_call(address: std::net::SocketAddr) -> Approved {
    let session = send(address, harness::get(HOST, "/.toolgate/agent/session")).await;
    let csrf = serde_json::from_slice::<Value>(&session.body).expect("session")["csrf"]
        .as_str()
        .expect("csrf")
        .to_owned();
    let turn = json!({
        "message": "Submit an expense of 42 for taxi",
        "tools": [{
            "name": "submit_expense", "description": "Submit an expense claim", "source": "form",
            "input_schema": {"type": "object", "properties": {"amount": {"type": "number"},
                             "description": {"type": "string"}}, "required": ["amount", "description"]},
            "form": {"method": "post", "action": "/submit"},
        }],
    });
    let response = harness::open(address, api("/.toolgate/agent/turn", &csrf, &turn)).await;
    assert_eq!(response.status(), 200);
    let mut turn_id = String::new();
    let mut approved = None;
    crate::agent_turn::events(response, async |event: &Value| match event["event"].as_str() {
        Some("started") => turn_id = event["turn_id"].as_str().unwrap_or_default().to_owned(),
        Some("approval_required") => {
            let id = event["approval_id"].as_str().expect("approval id");
            let path = format!("/.toolgate/agent/approvals/{id}");
            let decided = send(address, api(&path, &csrf, &json!({"approve": true}))).await;
            assert_eq!(decided.status, 200, "{}", decided.text());
        }
        Some("tool_call") if approved.is_none() => {
            let answer = json!({"turn_id": turn_id, "call_id": event["call_id"], "ok": true,
                                "result": {"submitted": true}});
            send(address, api("/.toolgate/agent/result", &csrf, &answer)).await;
            approved = Some(Approved {
                call_id: event["call_id"].as_str().expect("call id").to_owned(),
                token: event["approval_token"].as_str().expect("an approved call has a token").to_owned(),
                args: event["args"].clone(),
            });
        }
        Some("error" | "tool_denied") => panic!("no approved call: {event}"),
        _ => {}
    })
    .await;
    approved.expect("the turn ended without a tool call")
}

fn urlencoded(fields: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish()
}

fn multipart(fields: &[(&str, &str)]) -> (String, String) {
    let boundary = "----toolgateTestBoundary7";
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn metric(admin: std::net::SocketAddr, line_start: &str) -> String {
    let metrics = send(admin, harness::get("admin", "/metrics")).await.text();
    metrics.lines().find(|line| line.starts_with(line_start)).unwrap_or("").to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_approved_submission_reaches_the_site_and_only_once() {
    let app = upstream(|seen: &Seen| reply("text/plain", format!("stored {} bytes", seen.body.len()))).await;
    let (_stand_in, llm) = model().await;
    let (gateway, _policy) = harness::gateway_with_policy(&[(HOST, app.address)], &llm, POLICY).await;
    let Approved { call_id, token, args } = approved_call(gateway.address).await;
    let amount = args["amount"].to_string();
    let description = args["description"].as_str().expect("description").to_owned();
    assert_eq!(amount, "42", "whole numbers are approved as the page spells them: {args}");
    let (amount, description) = (amount.as_str(), description.as_str());
    let (call, approval) = (call_id.as_str(), token.as_str());
    // Another tag for the same approval id: one character in the middle of the tag changed.
    let at = token.len() - 10;
    let swapped = if &token[at..=at] == "A" { "B" } else { "A" };
    let forged = format!("{}{swapped}{}", &token[..at], &token[at + 1..]);

    let exact = [("amount", amount), ("description", description)];
    let marked = |extra: &[(&'static str, &str)], amount: &str| -> Vec<(String, String)> {
        [("amount", amount), ("description", description)]
            .iter()
            .chain(extra)
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    };
    let form = |fields: Vec<(String, String)>| {
        let pairs: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        submit("application/x-www-form-urlencoded", urlencoded(&pairs))
    };
    let (multipart_type, multipart_body) = multipart(&[
        ("amount", "4200"),
        ("description", description),
        ("__toolgate_call", call),
        ("__toolgate_approval", approval),
    ]);
    let json_body = json!({"amount": 4200, "description": description,
                           "__toolgate_call": call, "__toolgate_approval": approval});
    let mut header_marked = submit("application/x-www-form-urlencoded", urlencoded(&exact));
    header_marked.headers_mut().insert("x-toolgate-call", call.parse().expect("header"));
    let query = urlencoded(&[("amount", amount), ("description", description), ("__toolgate_call", call)]);
    let query_marked = Request::get(format!("/submit?{query}"))
        .header("host", HOST)
        .body(Full::new(Bytes::new()))
        .expect("request");
    let oversized = submit("application/x-www-form-urlencoded", vec![b'a'; 1024 * 1024 + 1]);

    let cases: Vec<(&str, Request<Full<Bytes>>, u16, &str)> = vec![
        ("no token", form(marked(&[("__toolgate_call", call)], amount)), 403, "missing_token"),
        (
            "forged token",
            form(marked(&[("__toolgate_call", call), ("__toolgate_approval", forged.as_str())], amount)),
            403,
            "invalid_token",
        ),
        (
            "other amount",
            form(marked(&[("__toolgate_call", call), ("__toolgate_approval", approval)], "4200")),
            403,
            "arguments_changed",
        ),
        (
            "other call",
            form(marked(&[("__toolgate_call", "call_other"), ("__toolgate_approval", approval)], amount)),
            403,
            "other_call",
        ),
        (
            "method override",
            form(marked(
                &[("_method", "DELETE"), ("__toolgate_call", call), ("__toolgate_approval", approval)],
                amount,
            )),
            403,
            "other_form",
        ),
        ("multipart, other amount", submit(&multipart_type, multipart_body), 403, "arguments_changed"),
        ("JSON, other amount", submit("application/json", json_body.to_string()), 403, "arguments_changed"),
        ("marker header, no token", header_marked, 403, "missing_token"),
        ("GET form, marked query", query_marked, 403, "missing_token"),
        ("larger than the guard reads", oversized, 413, "body_too_large"),
    ];
    for (what, request, status, reason) in cases {
        let answer = send(gateway.address, request).await;
        assert_eq!(answer.status, status, "{what}: {}", answer.text());
        assert_eq!(answer.header("x-toolgate-reason"), Some(reason), "{what}");
        assert!(app.requests().is_empty(), "{what}: the site must receive nothing");
    }
    let blocks =
        metric(gateway.admin_address, "toolgate_enforced_blocks_total{reason=\"missing_token\"").await;
    assert!(blocks.ends_with(" 3"), "counted per reason: {blocks}");

    // A human submission (no marker) passes untouched.
    let human = urlencoded(&[("amount", "7"), ("description", "lunch")]);
    let answer = send(gateway.address, submit("application/x-www-form-urlencoded", human.clone())).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    let seen = app.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].body, human.as_bytes(), "forwarded byte for byte");

    // The approved submission passes, once; the same token again is a replay.
    let approved = marked(&[("__toolgate_call", call), ("__toolgate_approval", approval)], amount);
    let answer = send(gateway.address, form(approved.clone())).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(app.requests().len(), 2);
    let answer = send(gateway.address, form(approved)).await;
    assert_eq!(answer.status, 403);
    assert_eq!(answer.header("x-toolgate-reason"), Some("replayed"));
    assert_eq!(app.requests().len(), 2, "a replay reaches nothing");

    // Other paths of the site are not guarded at all.
    let elsewhere = Request::post("/other")
        .header("host", HOST)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(urlencoded(&[("__toolgate_call", "x")]))))
        .expect("request");
    assert_eq!(send(gateway.address, elsewhere).await.status, 200);
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_catalog_report_of_a_gated_form_guards_its_action() {
    let app = upstream(|_| reply("text/plain", "stored")).await;
    let (gateway, _policy) = harness::gateway_with_policy(&[(HOST, app.address)], "", POLICY).await;
    let forged = urlencoded(&[("amount", "1"), ("__toolgate_call", "local-1")]);
    // Before any report the action is not known to be gated.
    let answer = send(gateway.address, submit("application/x-www-form-urlencoded", forged.clone())).await;
    assert_eq!(answer.status, 200);

    let session = send(gateway.address, harness::get(HOST, "/.toolgate/agent/session")).await;
    let csrf = serde_json::from_slice::<Value>(&session.body).expect("session")["csrf"]
        .as_str()
        .expect("csrf")
        .to_owned();
    let report = json!({"tools": [
        {"name": "submit_expense", "description": "Submit an expense claim", "source": "form",
         "input_schema": {"type": "object", "properties": {"amount": {"type": "number"}}},
         "form": {"method": "POST", "action": "/submit"}},
        {"name": "search", "description": "Search", "source": "form",
         "input_schema": {"type": "object", "properties": {}}, "form": {"method": "GET", "action": "/search"}},
    ]});
    let answer = send(gateway.address, api("/.toolgate/agent/catalog", &csrf, &report)).await;
    assert_eq!(answer.status, 200, "{}", answer.text());

    let answer = send(gateway.address, submit("application/x-www-form-urlencoded", forged)).await;
    assert_eq!(answer.status, 403);
    assert_eq!(answer.header("x-toolgate-reason"), Some("missing_token"));
    assert_eq!(app.requests().len(), 1, "only the submission made before the report");
    // `search` needs no approval here: its action is not guarded.
    let search =
        Request::get("/search?__toolgate_call=local-2").header("host", HOST).body(Full::new(Bytes::new()));
    assert_eq!(send(gateway.address, search.expect("request")).await.status, 200);
    gateway.stop().await;
}

/// Sends the expense form's submissions into a frame (so the page, the panel and the turn stay
/// while the native submission goes to the site) and records, in the page's session storage,
/// what the form submitted and whether the runtime's hidden fields were gone by the next task.
const RECORD_SUBMISSION: &str = "(() => {
    const form = document.getElementById('expense');
    const frame = document.createElement('iframe');
    frame.name = 'result';
    document.body.append(frame);
    form.target = 'result';
    form.addEventListener('submit', (event) => {
        sessionStorage.setItem('sent', new URLSearchParams(new FormData(event.target)).toString());
        sessionStorage.setItem('approval', JSON.stringify(event.toolgateApproval || null));
        setTimeout(() => sessionStorage.setItem('hiddenAfter',
            String(form.querySelectorAll('input[type=hidden]').length)), 0);
    });
    return true;
})()";

/// The claims the expense app lists now.
const CLAIMS: &str = "fetch('/').then((r) => r.text()).then((html) => [...new DOMParser().parseFromString(html, 'text/html').querySelectorAll('#claims li')].map((item) => item.textContent))";

#[tokio::test(flavor = "multi_thread")]
async fn approving_in_the_panel_lets_the_expense_form_reach_the_site_once() {
    let demo = gateway::demo::start(0, Some("alice".into()), Shutdown::new()).await.expect("demo starts");
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://expenses.localhost:{}/", demo.port)).await;
    until(&page, "document.body.dataset.appReady === 'expenses'").await;
    until(&page, "document.querySelector('toolgate-panel') !== null").await;
    until(&page, "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length === 1)")
        .await;
    page.eval(RECORD_SUBMISSION).await;

    panel(&page, "root.querySelector('[data-action=open]').click()").await;
    panel_until(&page, "root.querySelector('.root').dataset.open === 'true'").await;
    panel(&page, "root.querySelector('[data-field=message]').value = 'Submit an expense of 42 EUR on 2026-11-20 for taxi'").await;
    panel(&page, "root.querySelector('[data-action=send]').click()").await;
    let id = panel_until(&page, "root.querySelector('[data-approval-id]') && root.querySelector('[data-approval-id]').dataset.approvalId").await;
    let id = id.as_str().expect("approval id").to_owned();
    let card = format!("root.querySelector('[data-approval-id=\"{id}\"]')");
    assert_eq!(panel(&page, &format!("{card}.dataset.tool")).await, json!("submit_expense"));
    panel(&page, &format!("{card}.querySelector('[data-action=approve]').click()")).await;

    // The form is filled for the user, who presses its button (no `toolautosubmit` here).
    until(&page, "document.querySelector('#expense [name=description]').value !== ''").await;
    page.eval("document.querySelector('#expense button').click(), true").await;
    let state = panel_until(&page, "['done', 'error', 'stopped', 'lost'].includes(root.querySelector('.root').dataset.turn) && root.querySelector('.root').dataset.turn").await;
    assert_eq!(state, json!("done"));
    let claims = until(&page, &format!("{CLAIMS}.then((claims) => claims.length > 0 && claims)")).await;
    assert_eq!(claims, json!(["42 EUR on 2026-11-20: taxi"]), "the claim was stored once");

    let sent = page.eval("sessionStorage.getItem('sent')").await;
    let sent = sent.as_str().expect("the submission was recorded").to_owned();
    let fields: Vec<(String, String)> = form_urlencoded::parse(sent.as_bytes()).into_owned().collect();
    let field = |name: &str| fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
    let token = field("__toolgate_approval").expect("the submission carried the approval token");
    assert!(field("__toolgate_call").is_some_and(|call| !call.is_empty()), "and the call id: {sent}");
    let approval: Value =
        serde_json::from_str(page.eval("sessionStorage.getItem('approval')").await.as_str().expect("json"))
            .expect("json");
    assert_eq!(approval["token"], json!(token), "the submit event offers the same token to the page");
    assert_eq!(page.eval("sessionStorage.getItem('hiddenAfter')").await, json!("0"), "fields removed");
    let record = page.eval(&format!("fetch('/.toolgate/agent/approvals/{id}').then((r) => r.json())")).await;
    assert_eq!(record["state"]["state"], json!("consumed"), "{record}");

    // The same submission again, token and all: refused, and nothing new reaches the site.
    let replay = page
        .eval(&format!(
            "fetch('/submit', {{method: 'POST', headers: {{'Content-Type': 'application/x-www-form-urlencoded'}}, body: {}}})
               .then((r) => [r.status, r.headers.get('x-toolgate-reason')])",
            json!(sent)
        ))
        .await;
    assert_eq!(replay, json!([403, "replayed"]));
    // A human submission of the same form afterwards is unmarked and goes through.
    page.eval("document.querySelector('#expense [name=amount]').value = '5'; document.querySelector('#expense [name=date]').value = '2026-11-21'; document.querySelector('#expense [name=description]').value = 'coffee'; document.querySelector('#expense button').click(); true").await;
    let claims = until(&page, &format!("{CLAIMS}.then((claims) => claims.length > 1 && claims)")).await;
    assert_eq!(claims, json!(["42 EUR on 2026-11-20: taxi", "5 EUR on 2026-11-21: coffee"]));
    assert_eq!(page.eval("sessionStorage.getItem('approval')").await, json!("null"), "unmarked");
}

/// A tool form that needs approval, submitting into a frame.
const GATED_PAGE: &str = r#"<!doctype html><html lang="en"><head><title>Pay</title></head><body>
<form toolname="pay" tooldescription="Pay an invoice" toolautosubmit method="post" action="/pay" target="sink">
<input name="amount" type="number" required><button>Pay</button></form>
<iframe name="sink"></iframe></body></html>"#;

/// The POSTs the site received so far.
fn posts(app: &harness::Upstream) -> Vec<Seen> {
    app.requests().into_iter().filter(|seen| seen.method == http::Method::POST).collect()
}

/// Without the gateway's approval, an agent's call of an approval-gated form (here the page's
/// own agent, through `__toolgate__.call`) is marked without a token and refused by the proxy;
/// the user's own submission of the same form goes through.
async fn unapproved_agent_submissions_are_refused(extra: &[&str]) {
    let app = upstream(|seen: &Seen| match seen.method {
        http::Method::GET => reply("text/html; charset=utf-8", GATED_PAGE),
        _ => reply("text/plain", "paid"),
    })
    .await;
    let policy = "[[rule]]\nid = \"pay\"\ntools.approve = [\"pay\"]\n";
    let (gateway, _policy) =
        harness::gateway_with_policy(&[("pay.localhost", app.address)], "", policy).await;
    let browser = Browser::launch(extra).await;
    let page = browser.page().await;
    page.goto(&format!("http://pay.localhost:{}/", gateway.address.port())).await;
    until(&page, "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length === 1)")
        .await;
    let native =
        page.eval("Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext') !== undefined").await;
    assert_eq!(native, json!(!extra.is_empty()), "native WebMCP exactly when asked for");
    let outcome = page.eval("window.__toolgate__.call('pay', {amount: 5})").await;
    // The form submits into a frame, so the page lives on to hear the real outcome.
    assert_eq!(outcome["ok"], json!(false), "{extra:?}: {outcome}");
    assert_eq!(outcome["error"]["code"], json!("refused_by_gateway"), "{extra:?}: {outcome}");
    let frame = "(() => { const frame = document.querySelector('iframe').contentDocument; \
                 return frame && frame.title.includes('Submission refused') && frame.body.textContent; })()";
    let refusal = until(&page, frame).await;
    assert!(refusal.as_str().unwrap_or("").contains("missing_token"), "{extra:?}: {refusal}");
    assert!(posts(&app).is_empty(), "{extra:?}: the site received nothing");

    page.eval("document.querySelector('[name=amount]').value = '7'; document.querySelector('form button').click(); true")
        .await;
    for _ in 0..100 {
        if !posts(&app).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let posted = posts(&app);
    assert_eq!(posted.len(), 1, "{extra:?}: the human submission reaches the site");
    assert_eq!(posted[0].body, "amount=7", "{extra:?}: unmarked and unchanged");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unapproved_agent_submissions_are_refused_with_the_polyfill() {
    unapproved_agent_submissions_are_refused(&[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unapproved_agent_submissions_are_refused_with_native_webmcp() {
    unapproved_agent_submissions_are_refused(&["--enable-features=WebMCPTesting"]).await;
}
