//! The agent loop over HTTP, as the runtime drives it: `/turn` streams events, a tool call is
//! answered through `/result`, denied tools never reach the model, personal data in contexts is
//! redacted before the model sees it — against the deterministic stand-in model on loopback.

use crate::harness::{self, reply, send, upstream};
use bytes::Bytes;
use gateway::demo::model::{StandIn, StandInOptions};
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::sync::Arc;

const POLICY: &str = r#"
[[rule]]
id = "tasks"
tools.allow = ["add_task"]
tools.deny = ["delete_*"]
contexts.allow = ["task_list"]
redact = ["email"]
"#;

/// A stand-in model on loopback, and the `[llm]` config text pointing at it.
pub(crate) async fn model(options: StandInOptions) -> (Arc<StandIn>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind model");
    let address = listener.local_addr().expect("address");
    let stand_in = Arc::new(StandIn::new(options));
    let serving = Arc::clone(&stand_in);
    tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
    (
        stand_in,
        format!(
            "[llm]\nbase_url = \"http://{address}/v1\"\nmodel = \"toolgate-demo-stand-in\"\nmax_retries = 0\n"
        ),
    )
}

/// The agent session's CSRF token on `host`.
async fn csrf(address: std::net::SocketAddr, host: &str) -> String {
    let session = send(address, harness::get(host, "/.toolgate/agent/session")).await;
    serde_json::from_slice::<Value>(&session.body).expect("session")["csrf"]
        .as_str()
        .expect("csrf")
        .to_owned()
}

fn post(host: &str, path: &str, csrf: &str, body: &Value) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", host)
        .header("content-type", "application/json")
        .header("x-toolgate-csrf", csrf)
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request")
}

/// Reads SSE events from a streaming response until `done` (or the stream ends); `on_event`
/// may act on each one (e.g. post a tool result).
pub(crate) async fn events(
    response: http::Response<hyper::body::Incoming>,
    mut on_event: impl AsyncFnMut(&Value),
) -> Vec<Value> {
    let mut body = response.into_body();
    let (mut buffer, mut seen) = (String::new(), Vec::new());
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.expect("stream frame").into_data() else { continue };
        buffer.push_str(&String::from_utf8_lossy(&data));
        while let Some(end) = buffer.find("\n\n") {
            let message: String = buffer.drain(..end + 2).collect();
            let Some(data) = message.lines().find_map(|line| line.strip_prefix("data: ")) else { continue };
            let event: Value = serde_json::from_str(data).expect("event JSON");
            on_event(&event).await;
            let done = event["event"] == "done";
            seen.push(event);
            if done {
                return seen;
            }
        }
    }
    seen
}

/// The model's answer in a turn's events: its `text` deltas, joined.
pub(crate) fn answer_text(seen: &[Value]) -> String {
    seen.iter().filter(|event| event["event"] == "text").filter_map(|event| event["delta"].as_str()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_runs_an_allowed_tool_on_the_page_and_never_offers_a_denied_one() {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let (stand_in, llm) = model(StandInOptions::default()).await;
    let (gateway, _policy) = harness::gateway_with_policy(&[("tasks.test", app.address)], &llm, POLICY).await;
    let csrf = csrf(gateway.address, "tasks.test").await;

    let turn = json!({
        "message": "Please add a task: \"Water the plants\"",
        "tools": [
            {"name": "add_task", "description": "Add a task to the board", "source": "voix",
             "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
            {"name": "delete_task", "description": "Delete a task from the board", "source": "voix",
             "input_schema": {"type": "object", "properties": {"id": {"type": "number"}}}},
        ],
        "contexts": [{"name": "task_list", "text": "#1 Call carol.chen@corp.example about the plants"}],
    });
    let response =
        harness::open(gateway.address, post("tasks.test", "/.toolgate/agent/turn", &csrf, &turn)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let address = gateway.address;
    let mut turn_id = String::new();
    let seen = events(response, async |event: &Value| {
        match event["event"].as_str() {
            Some("started") => turn_id = event["turn_id"].as_str().unwrap_or_default().to_owned(),
            Some("tool_call") => {
                let answer = json!({"turn_id": turn_id, "call_id": event["call_id"], "ok": true,
                                    "result": {"added": event["args"]["title"], "owner": "dana@corp.example"}});
                let posted = send(address, post("tasks.test", "/.toolgate/agent/result", &csrf, &answer)).await;
                assert_eq!(posted.status, 202, "{}", posted.text());
            }
            _ => {}
        }
    })
    .await;
    let kinds: Vec<&str> = seen.iter().filter_map(|event| event["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"started"), "{seen:#?}");
    assert_eq!(kinds.last(), Some(&"done"), "{seen:#?}");
    let started = &seen[0];
    assert_eq!(started["tools"], json!(["add_task"]), "the denied tool is never offered");
    assert_eq!(started["withheld"][0]["name"], "delete_task");
    let call = seen.iter().find(|event| event["event"] == "tool_call").expect("a tool call");
    assert_eq!(call["tool"], "add_task");
    assert_eq!(call["args"], json!({"title": "Water the plants"}));
    let text = answer_text(&seen);
    assert!(text.contains("Water the plants"), "the answer reports the result: {text}");
    assert!(stand_in.requests() >= 2, "one round for the call, one for the answer");

    // What the model received: no personal data from the context or the tool result.
    let bodies = stand_in.bodies();
    assert!(!bodies.is_empty());
    for body in &bodies {
        assert!(!body.contains("carol.chen@corp.example") && !body.contains("dana@corp.example"), "{body}");
        assert!(!body.contains("delete_task"), "a denied tool never reaches the model: {body}");
    }
    assert!(bodies.iter().any(|body| body.contains("[email 1]")), "redacted, not dropped");
    assert!(app.requests().is_empty());
    gateway.stop().await;
}

/// Every value a page puts in a form option, a tool description, a context grouped with
/// `&nbsp;` (U+00A0 in `textContent`) or a tool result is a placeholder for the model; the call
/// the model makes with the option's placeholder reaches the page with the option's own value.
#[tokio::test(flavor = "multi_thread")]
async fn a_form_option_holding_an_iban_reaches_the_page_restored_and_never_the_model() {
    const IBAN: &str = "DE89 3704 0044 0532 0130 00";
    let policy = "[[rule]]\nid = \"pay\"\ntools.allow = [\"pay_invoice\"]\ncontexts.allow = [\"account\"]\n\
                  redact = [\"all\"]\n";
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let (stand_in, llm) = model(StandInOptions::default()).await;
    let (gateway, _policy) = harness::gateway_with_policy(&[("tasks.test", app.address)], &llm, policy).await;
    let csrf = csrf(gateway.address, "tasks.test").await;
    let turn = json!({
        "message": "Please pay invoice 42",
        "tools": [{
            "name": "pay_invoice", "source": "form",
            "description": "Pays an invoice; questions to ap.team@corp.example",
            "input_schema": {"type": "object", "required": ["account"], "properties": {
                "account": {"type": "string", "title": "Account",
                            "enum": [IBAN],
                            "oneOf": [{"const": IBAN, "title": format!("Main account {IBAN}")}]}}},
        }],
        "contexts": [{"name": "account", "text": "Card 4111\u{a0}1111\u{a0}1111\u{a0}1111, SSN 123\u{a0}45\u{a0}6789"}],
    });
    let response =
        harness::open(gateway.address, post("tasks.test", "/.toolgate/agent/turn", &csrf, &turn)).await;
    assert_eq!(response.status(), 200);
    let address = gateway.address;
    let mut turn_id = String::new();
    let seen = events(response, async |event: &Value| match event["event"].as_str() {
        Some("started") => turn_id = event["turn_id"].as_str().unwrap_or_default().to_owned(),
        Some("tool_call") => {
            let answer = json!({"turn_id": turn_id, "call_id": event["call_id"], "ok": true,
                                "result": {"paid_from": event["args"]["account"], "receipt_to": "ap.team@corp.example"}});
            let posted = send(address, post("tasks.test", "/.toolgate/agent/result", &csrf, &answer)).await;
            assert_eq!(posted.status, 202, "{}", posted.text());
        }
        _ => {}
    })
    .await;
    let call = seen.iter().find(|event| event["event"] == "tool_call").expect("a tool call");
    assert_eq!(
        call["args"],
        json!({"account": IBAN}),
        "the page receives the option's real value: {seen:#?}"
    );

    let bodies = stand_in.bodies();
    assert!(bodies.len() >= 2, "one round for the call, one for the answer");
    for body in &bodies {
        for original in ["DE89", "3704", "ap.team@corp.example", "4111", "6789"] {
            assert!(!body.contains(original), "{original} reached the model: {body}");
        }
    }
    let first: Value = serde_json::from_str(&bodies[0]).expect("model request");
    let account = &first["tools"][0]["function"]["parameters"]["properties"]["account"];
    assert_eq!(account["enum"], json!(["[iban 1]"]), "{first:#}");
    assert_eq!(account["oneOf"][0], json!({"const": "[iban 1]", "title": "Main account [iban 1]"}));
    assert!(bodies[0].contains("[card 1]") && bodies[0].contains("[ssn 1]"), "{}", bodies[0]);
    assert!(bodies.iter().any(|body| body.contains("[email 1]")), "the description and the result");
    gateway.stop().await;
}

/// A page's error text is page text: it reaches the model redacted, like a result (a refused
/// form's message may quote what the user typed).
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_error_from_the_page_is_redacted_before_the_model_sees_it() {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let (stand_in, llm) = model(StandInOptions::default()).await;
    let (gateway, _policy) = harness::gateway_with_policy(&[("tasks.test", app.address)], &llm, POLICY).await;
    let csrf = csrf(gateway.address, "tasks.test").await;
    let turn = json!({
        "message": "Please add a task: \"Water the plants\"",
        "tools": [{"name": "add_task", "description": "Add a task to the board", "source": "voix",
                   "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}],
    });
    let response =
        harness::open(gateway.address, post("tasks.test", "/.toolgate/agent/turn", &csrf, &turn)).await;
    let address = gateway.address;
    let mut turn_id = String::new();
    events(response, async |event: &Value| match event["event"].as_str() {
        Some("started") => turn_id = event["turn_id"].as_str().unwrap_or_default().to_owned(),
        Some("tool_call") => {
            let answer = json!({"turn_id": turn_id, "call_id": event["call_id"], "ok": false,
                                "error": "rejected_by_site: erin.ortiz@corp.example is already on the board"});
            send(address, post("tasks.test", "/.toolgate/agent/result", &csrf, &answer)).await;
        }
        _ => {}
    })
    .await;
    let bodies = stand_in.bodies();
    assert!(bodies.len() >= 2, "the error went back to the model");
    assert!(bodies.iter().all(|body| !body.contains("erin.ortiz@corp.example")), "{bodies:#?}");
    assert!(
        bodies.iter().any(|body| body.contains("rejected_by_site: [email 1] is already on the board")),
        "{bodies:#?}"
    );
    gateway.stop().await;
}

/// Runs one turn of `message` (no tools) on `conversation`; the `started` event.
async fn plain_turn(
    address: std::net::SocketAddr,
    csrf: &str,
    message: &str,
    conversation: Option<&str>,
) -> Value {
    let mut turn = json!({"message": message});
    if let Some(id) = conversation {
        turn["conversation"] = json!(id);
    }
    let response = harness::open(address, post("tasks.test", "/.toolgate/agent/turn", csrf, &turn)).await;
    assert_eq!(response.status(), 200);
    let seen = events(response, async |_: &Value| {}).await;
    assert_eq!(seen.last().map(|event| event["event"].clone()), Some(json!("done")), "{seen:#?}");
    seen[0].clone()
}

/// The model's messages in its latest request, as `[role, text]`.
fn last_request(stand_in: &StandIn) -> Vec<(String, String)> {
    let body: Value = serde_json::from_str(stand_in.bodies().last().expect("a model request")).expect("json");
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|message| {
            let text = message["content"].as_str().unwrap_or_default().to_owned();
            (message["role"].as_str().unwrap_or_default().to_owned(), text)
        })
        .collect()
}

/// A second turn on the same conversation replays the first, as the model saw it: redacted, and
/// the same person is the same placeholder in both turns. An unknown conversation starts afresh.
#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_replays_earlier_turns_redacted_with_the_same_placeholders() {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let (stand_in, llm) = model(StandInOptions::default()).await;
    let (gateway, _policy) = harness::gateway_with_policy(&[("tasks.test", app.address)], &llm, POLICY).await;
    let csrf = csrf(gateway.address, "tasks.test").await;

    let first = plain_turn(gateway.address, &csrf, "Remember that dana@corp.example called", None).await;
    let id = first["conversation_id"].as_str().expect("a conversation id").to_owned();
    let second =
        plain_turn(gateway.address, &csrf, "Did dana@corp.example or erin@corp.example call?", Some(&id))
            .await;
    assert_eq!(second["conversation_id"], json!(id), "the same conversation");
    let messages = last_request(&stand_in);
    let users: Vec<&str> =
        messages.iter().filter(|(role, _)| role == "user").map(|(_, text)| text.as_str()).collect();
    assert_eq!(
        users,
        vec!["Remember that [email 1] called", "Did [email 1] or [email 2] call?"],
        "{messages:?}"
    );
    assert_eq!(messages[0].0, "system");
    assert!(
        messages.iter().any(|(role, _)| role == "assistant"),
        "the earlier answer is replayed: {messages:?}"
    );
    for body in stand_in.bodies() {
        assert!(!body.contains("dana@corp.example") && !body.contains("erin@corp.example"), "{body}");
    }

    let fresh = plain_turn(gateway.address, &csrf, "Who called?", Some("00ff00ff00ff00ff00ff00ff")).await;
    assert_ne!(fresh["conversation_id"], json!(id));
    let users = last_request(&stand_in).into_iter().filter(|(role, _)| role == "user").count();
    assert_eq!(users, 1, "nothing replayed into a new conversation");

    // The panel's view of it, and "new conversation".
    let path = format!("/.toolgate/agent/conversation/{id}");
    let mut read = harness::get("tasks.test", &path);
    read.headers_mut().insert("x-toolgate-csrf", csrf.parse().expect("header"));
    let shown = send(gateway.address, read).await;
    assert_eq!(shown.status, 200, "{}", shown.text());
    let shown: Value = serde_json::from_slice(&shown.body).expect("json");
    assert_eq!(shown["turns"], json!(2));
    assert_eq!(shown["entries"][0], json!({"role": "user", "text": "Remember that [email 1] called"}));
    let mut forget = Request::delete(&path)
        .header("host", "tasks.test")
        .header("x-toolgate-csrf", &csrf)
        .body(Full::new(Bytes::new()))
        .expect("request");
    assert_eq!(send(gateway.address, forget).await.status, 200);
    forget = harness::get("tasks.test", &path);
    forget.headers_mut().insert("x-toolgate-csrf", csrf.parse().expect("header"));
    assert_eq!(send(gateway.address, forget).await.status, 404, "forgotten");
    gateway.stop().await;
}
