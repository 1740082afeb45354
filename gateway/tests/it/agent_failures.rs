//! When the agent turn fails, the user gets a clear error and nothing is left hanging: a model
//! that is down, too slow to start, or cut mid-answer ends the turn's event stream with an
//! `error` (a bounded code and a sentence) and `done`; a browser that leaves mid-turn (while the
//! model is silent, or while its tool runs) makes the gateway drop the model call and free the
//! user's turn slot; a model that calls a tool it was never offered gets a `tool_denied` and the
//! page never sees a `tool_call`; and one turn too many is a 429. All against the stand-in model
//! on loopback, through a real gateway.

use crate::harness::{self, reply, send, upstream};
use bytes::Bytes;
use gateway::app::Running;
use gateway::demo::model::{StandIn, StandInOptions};
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

const POLICY: &str = r#"
[[rule]]
id = "tasks"
tools.allow = ["add_task"]
tools.deny = ["delete_*"]
"#;

/// How long any failure may take to reach the page.
const BOUND: Duration = Duration::from_secs(10);

/// A gateway in front of a dummy app, its model at `base_url`, with `extra` config lines; and the
/// CSRF token of its anonymous session.
struct Setup {
    gateway: Running,
    _policy: tempfile::TempDir,
    csrf: String,
}

async fn setup(base_url: &str, llm_extra: &str, extra: &str) -> Setup {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let config = format!(
        "[llm]\nbase_url = \"{base_url}\"\nmodel = \"toolgate-demo-stand-in\"\nmax_retries = 0\n{llm_extra}\n{extra}"
    );
    let (gateway, policy) =
        harness::gateway_with_policy(&[("tasks.test", app.address)], &config, POLICY).await;
    let session = send(gateway.address, harness::get("tasks.test", "/.toolgate/agent/session")).await;
    let csrf = serde_json::from_slice::<Value>(&session.body).expect("session")["csrf"]
        .as_str()
        .expect("csrf")
        .to_owned();
    Setup { gateway, _policy: policy, csrf }
}

/// A stand-in model on loopback and its base URL.
async fn model(options: StandInOptions) -> (Arc<StandIn>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind model");
    let address = listener.local_addr().expect("address");
    let stand_in = Arc::new(StandIn::new(options));
    let serving = Arc::clone(&stand_in);
    tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
    (stand_in, format!("http://{address}/v1"))
}

fn turn_request(csrf: &str, message: &str) -> Request<Full<Bytes>> {
    let body = json!({
        "message": message,
        "tools": [
            {"name": "add_task", "description": "Add a task to the board", "source": "voix",
             "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
            {"name": "delete_task", "description": "Delete a task from the board", "source": "voix",
             "input_schema": {"type": "object", "properties": {"id": {"type": "number"}}}},
        ],
        "contexts": [],
    });
    Request::post("/.toolgate/agent/turn")
        .header("host", "tasks.test")
        .header("content-type", "application/json")
        .header("x-toolgate-csrf", csrf)
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request")
}

/// Tries to start a turn until one starts (200) or `deadline`; the last status seen.
async fn status_of_a_new_turn_by(address: SocketAddr, csrf: &str, deadline: tokio::time::Instant) -> u16 {
    loop {
        let (response, connection) = open_turn(address, csrf, "Hello again").await;
        let status = response.status().as_u16();
        connection.abort();
        if status == 200 || tokio::time::Instant::now() >= deadline {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Opens a turn on its own connection; aborting the returned task closes the socket, as a
/// browser does when the page goes away.
async fn open_turn(
    address: SocketAddr,
    csrf: &str,
    message: &str,
) -> (http::Response<hyper::body::Incoming>, JoinHandle<()>) {
    let stream = tokio::net::TcpStream::connect(address).await.expect("connect to gateway");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    let response = sender.send_request(turn_request(csrf, message)).await.expect("response");
    (response, connection)
}

/// Reads the turn's events until the stream ends (or `stop_at` is seen), within [`BOUND`].
async fn read_events(body: &mut hyper::body::Incoming, stop_at: Option<&str>) -> Vec<Value> {
    let reading = async {
        let (mut buffer, mut seen) = (String::new(), Vec::new());
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.expect("stream frame").into_data() else { continue };
            buffer.push_str(&String::from_utf8_lossy(&data));
            while let Some(end) = buffer.find("\n\n") {
                let message: String = buffer.drain(..end + 2).collect();
                let Some(data) = message.lines().find_map(|line| line.strip_prefix("data: ")) else {
                    continue;
                };
                let event: Value = serde_json::from_str(data).expect("event JSON");
                let stop = stop_at.is_some_and(|name| event["event"] == name);
                seen.push(event);
                if stop {
                    return seen;
                }
            }
        }
        seen
    };
    tokio::time::timeout(BOUND, reading).await.expect("the turn's stream ends in time")
}

/// Runs a whole turn and returns its events (the stream must end by itself).
async fn whole_turn(setup: &Setup, message: &str) -> Vec<Value> {
    let (response, _connection) = open_turn(setup.gateway.address, &setup.csrf, message).await;
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    read_events(&mut body, None).await
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|event| event["event"].as_str()).collect()
}

/// The one `error` event of a turn that failed, after which only `done` may come.
fn the_error(events: &[Value]) -> &Value {
    let kinds = kinds(events);
    assert_eq!(kinds.first(), Some(&"started"), "{events:#?}");
    assert_eq!(kinds.last(), Some(&"done"), "the stream ends with done: {events:#?}");
    let errors: Vec<usize> = (0..kinds.len()).filter(|index| kinds[*index] == "error").collect();
    assert_eq!(errors.len(), 1, "one error: {events:#?}");
    assert_eq!(errors[0], kinds.len() - 2, "nothing but done after the error: {events:#?}");
    let error = &events[errors[0]];
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.len() > 20 && message.ends_with('.'), "a sentence for the user: {error}");
    error
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_is_down_ends_the_turn_with_llm_unreachable() {
    // A port nobody listens on.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
    let setup = setup(&format!("http://{address}/v1"), "connect_timeout = \"2s\"", "").await;
    let events = whole_turn(&setup, "Add a task called \"Water the plants\"").await;
    let error = the_error(&events);
    assert_eq!(error["code"], "llm_unreachable");
    assert!(error["message"].as_str().unwrap_or_default().contains("cannot be reached"), "{error}");
    assert!(!kinds(&events).contains(&"tool_call"));
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_first_token_ends_the_turn_with_a_timeout() {
    let (stand_in, base_url) =
        model(StandInOptions { first_token_delay: Duration::from_secs(5), ..StandInOptions::default() })
            .await;
    let setup = setup(&base_url, "first_token_timeout = \"300ms\"", "").await;
    let started = std::time::Instant::now();
    let events = whole_turn(&setup, "Add a task called \"Water the plants\"").await;
    assert!(started.elapsed() < Duration::from_secs(4), "the timeout, not the model, ended it");
    let error = the_error(&events);
    assert_eq!(error["code"], "llm_first_token_timeout");
    assert!(error["message"].as_str().unwrap_or_default().contains("too long"), "{error}");
    assert_eq!(stand_in.requests(), 1, "max_retries = 0: no second try");
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_cuts_its_answer_ends_the_turn_with_llm_interrupted() {
    // No tool matches the message, so the answer is text: a few chunks arrive (far enough apart
    // that the gateway reads them before the connection breaks), then the cut.
    let options = StandInOptions {
        cut_after_chunks: Some(3),
        chunk_delay: Duration::from_millis(100),
        ..StandInOptions::default()
    };
    let (_stand_in, base_url) = model(options).await;
    let setup = setup(&base_url, "", "").await;
    let events = whole_turn(&setup, "Hello there, who are you?").await;
    let error = the_error(&events);
    assert_eq!(error["code"], "llm_interrupted");
    assert!(kinds(&events).contains(&"text"), "text streamed before the cut: {events:#?}");
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_that_leaves_mid_answer_stops_the_model_call_and_frees_the_turn_slot() {
    // The model starts answering, then goes silent with the connection open.
    let options = StandInOptions { hang_after_chunks: Some(3), ..StandInOptions::default() };
    leave_mid_turn(options, "text").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_that_leaves_before_the_first_token_stops_the_model_call_and_frees_the_turn_slot() {
    let options = StandInOptions { first_token_delay: Duration::from_secs(60), ..StandInOptions::default() };
    leave_mid_turn(options, "started").await;
}

/// Starts a turn with a model that goes silent, leaves once `leave_after` arrived, and checks
/// that the model sees the call dropped and that the user's one turn slot is free again — well
/// before any model timeout (60 s here).
async fn leave_mid_turn(options: StandInOptions, leave_after: &str) {
    let (stand_in, base_url) = model(options).await;
    let setup = setup(
        &base_url,
        "idle_timeout = \"60s\"\nfirst_token_timeout = \"60s\"",
        "[agent]\nmax_concurrent_turns = 1\n",
    )
    .await;
    let address = setup.gateway.address;
    let (response, connection) = open_turn(address, &setup.csrf, "Hello there, who are you?").await;
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let seen = read_events(&mut body, Some(leave_after)).await;
    assert_eq!(kinds(&seen).last(), Some(&leave_after), "{seen:#?}");
    // The model call is under way (its request arrived and its answer began or waits).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while stand_in.requests() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "the model was never called");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(stand_in.disconnects(), 0);

    // The page goes away: the socket closes.
    drop(body);
    connection.abort();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while stand_in.disconnects() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "the gateway kept the model call open");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The user's only turn slot is free again.
    assert_eq!(
        status_of_a_new_turn_by(address, &setup.csrf, deadline).await,
        200,
        "a new turn starts once the old one is gone"
    );
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_that_leaves_while_its_tool_runs_frees_the_turn_slot() {
    // The page is asked to run add_task and goes away instead of posting the result; the tool
    // timeout is a minute, the slot must come back long before.
    let (_stand_in, base_url) = model(StandInOptions::default()).await;
    let setup = setup(&base_url, "", "[agent]\nmax_concurrent_turns = 1\ntool_timeout = \"60s\"\n").await;
    let address = setup.gateway.address;
    let (response, connection) =
        open_turn(address, &setup.csrf, "Add a task called \"Water the plants\"").await;
    let mut body = response.into_body();
    let seen = read_events(&mut body, Some("tool_call")).await;
    assert_eq!(kinds(&seen).last(), Some(&"tool_call"), "{seen:#?}");
    drop(body);
    connection.abort();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    assert_eq!(
        status_of_a_new_turn_by(address, &setup.csrf, deadline).await,
        200,
        "a new turn starts once the old one is gone"
    );
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_of_a_tool_never_offered_is_denied_and_never_reaches_the_page() {
    // delete_task is on the page but denied by the policy, so the model was never offered it;
    // transfer_funds exists nowhere.
    for forged in ["delete_task", "transfer_funds"] {
        let options = StandInOptions { forge_call: Some(forged.into()), ..StandInOptions::default() };
        let (stand_in, base_url) = model(options).await;
        let setup = setup(&base_url, "", "").await;
        let events = whole_turn(&setup, "Add a task called \"Water the plants\"").await;
        let kinds = kinds(&events);
        assert_eq!(events[0]["tools"], json!(["add_task"]), "{events:#?}");
        assert_eq!(kinds.last(), Some(&"done"), "{events:#?}");
        assert!(!kinds.contains(&"tool_call"), "the page is never asked to run {forged}: {events:#?}");
        let denied = events.iter().find(|event| event["event"] == "tool_denied").expect("tool_denied");
        assert_eq!(denied["tool"], forged);
        assert!(!denied["reason"].as_str().unwrap_or_default().is_empty());
        let bodies = stand_in.bodies();
        assert_eq!(bodies.len(), 2, "the model is told and answers once more");
        assert!(bodies[1].contains("not available"), "the model gets an error result: {}", bodies[1]);
        assert!(!bodies[0].contains(forged), "never offered");
        setup.gateway.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_turn_too_many_is_refused_with_429() {
    let (_stand_in, base_url) =
        model(StandInOptions { hang_after_chunks: Some(1), ..StandInOptions::default() }).await;
    let setup = setup(&base_url, "", "[agent]\nmax_concurrent_turns = 1\n").await;
    let address = setup.gateway.address;
    let (first, first_connection) = open_turn(address, &setup.csrf, "Hello there").await;
    assert_eq!(first.status(), 200);
    let second = send(address, turn_request(&setup.csrf, "And another thing")).await;
    assert_eq!(second.status, 429, "{}", second.text());
    let error: Value = serde_json::from_slice(&second.body).expect("JSON error");
    assert_eq!(error["error"]["code"], "too_many_turns", "{error}");
    assert!(error["error"]["message"].as_str().unwrap_or_default().contains("wait"), "{error}");
    drop(first);
    first_connection.abort();
    setup.gateway.stop().await;
}
