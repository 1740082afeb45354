//! The OpenAI-compatible endpoint (`/v1/chat/completions`, `/v1/models` on the gateway's own
//! host) over real sockets: bearer tokens from a fake provider, the site scope header, policy
//! filtering of the client's tools, redaction before the model, tool calls checked in the answer
//! (approval-gated ones come back as refusals), streaming and whole answers, model failures as
//! OpenAI-style errors, and the official `openai` Python client talking to it.

mod answers;
pub mod world;

use crate::harness::{self, Answer};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use world::World;

/// The tools an SDK client offers: one allowed, one denied, one that needs the user's
/// approval, one that needs a group's approval above 1000.
fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "add_task", "description": "Add a task to the board",
            "parameters": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}},
        {"type": "function", "function": {"name": "delete_task", "description": "Delete a task from the board",
            "parameters": {"type": "object", "properties": {"id": {"type": "number"}}}}},
        {"type": "function", "function": {"name": "transfer_funds", "description": "Transfer funds between accounts",
            "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}}},
        {"type": "function", "function": {"name": "pay_invoice", "description": "Pay an invoice",
            "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}}},
    ])
}

fn chat(message: &str, stream: bool) -> Value {
    json!({
        "model": "toolgate-demo-stand-in",
        "messages": [
            {"role": "system", "content": "You help dana@corp.example with the board."},
            {"role": "user", "content": message},
        ],
        "tools": tools(),
        "stream": stream,
        "stream_options": if stream { json!({"include_usage": true}) } else { Value::Null },
    })
}

fn post(
    world: &World,
    authorization: Option<&str>,
    site: Option<&str>,
    body: &Value,
) -> Request<Full<Bytes>> {
    let mut request = Request::post("/v1/chat/completions")
        .header("host", world.host())
        .header("content-type", "application/json");
    if let Some(authorization) = authorization {
        request = request.header("authorization", authorization);
    }
    if let Some(site) = site {
        request = request.header("x-toolgate-site", site);
    }
    request.body(Full::new(Bytes::from(body.to_string()))).expect("request")
}

async fn complete(world: &World, token: &str, body: &Value) -> Answer {
    harness::send(world.gateway.address, post(world, Some(&format!("Bearer {token}")), Some("tasks"), body))
        .await
}

fn json_of(answer: &Answer) -> Value {
    serde_json::from_slice(&answer.body).unwrap_or_else(|_| panic!("not JSON: {}", answer.text()))
}

/// The `data:` payloads of a whole SSE body; `[DONE]` as a string.
fn sse_data(answer: &Answer) -> Vec<Value> {
    answer
        .text()
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.to_owned())))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn callers_need_a_bearer_token_and_a_site_they_may_use() {
    let world = World::start().await;
    let token = world.token("alice", &["eng"]);
    let body = chat("Please add a task: \"Water the plants\"", false);
    let address = world.gateway.address;

    let anonymous = harness::send(address, post(&world, None, Some("tasks"), &body)).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED, "{}", anonymous.text());
    assert_eq!(anonymous.header("www-authenticate"), Some("Bearer"));
    assert_eq!(json_of(&anonymous)["error"]["type"], "authentication_error");
    let forged = harness::send(address, post(&world, Some("Bearer not.a.token"), Some("tasks"), &body)).await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
    let bearer = format!("Bearer {token}");
    let no_site = harness::send(address, post(&world, Some(&bearer), None, &body)).await;
    assert_eq!(no_site.status, StatusCode::BAD_REQUEST, "{}", no_site.text());
    assert!(json_of(&no_site)["error"]["message"].as_str().unwrap_or("").contains("X-Toolgate-Site"));
    for site in ["nope", "finance"] {
        let refused = harness::send(address, post(&world, Some(&bearer), Some(site), &body)).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{site}: {}", refused.text());
        assert_eq!(json_of(&refused)["error"]["type"], "permission_error");
    }
    let treasurer = format!("Bearer {}", world.token("fred", &["finance"]));
    let admitted = harness::send(address, post(&world, Some(&treasurer), Some("finance"), &body)).await;
    assert_eq!(admitted.status, StatusCode::OK, "the finance group may use its site: {}", admitted.text());
    assert_eq!(world.model.requests(), 1, "only the admitted request reached the model");

    let other_model = json!({"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": "hi"}]});
    let wrong_model = complete(&world, &token, &other_model).await;
    assert_eq!(wrong_model.status, StatusCode::NOT_FOUND, "{}", wrong_model.text());
    assert_eq!(json_of(&wrong_model)["error"]["code"], "model_not_found");

    let models = Request::get("/v1/models").header("host", world.host());
    let unauthenticated =
        harness::send(address, models.body(Full::new(Bytes::new())).expect("request")).await;
    assert_eq!(unauthenticated.status, StatusCode::UNAUTHORIZED);
    let models = Request::get("/v1/models").header("host", world.host()).header("authorization", &bearer);
    let listed = harness::send(address, models.body(Full::new(Bytes::new())).expect("request")).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    assert_eq!(json_of(&listed)["data"][0]["id"], "toolgate-demo-stand-in");

    // `/v1` requests count under the site their header names (a configured one), not "-".
    let metrics = harness::send(world.gateway.admin_address, harness::get("admin", "/metrics")).await.text();
    let finance = metrics
        .lines()
        .filter(|line| line.starts_with("toolgate_requests_total{") && line.contains("site=\"finance\""))
        .filter(|line| line.contains("route=\"agent\"") && line.contains("status=\"2xx\""))
        .count();
    assert_eq!(finance, 1, "{metrics}");
    assert!(
        !metrics
            .lines()
            .any(|line| line.starts_with("toolgate_requests_total{") && line.contains("site=\"nope\""))
    );
    world.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn denied_tools_and_personal_data_never_reach_the_model() {
    let world = World::start().await;
    let token = world.token("alice", &["eng"]);
    let answer =
        complete(&world, &token, &chat("Please add a task: \"Call carol.chen@corp.example\"", false)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let completion = json_of(&answer);
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["model"], "toolgate-demo-stand-in");
    let choice = &completion["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "{completion:#}");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "add_task");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().expect("arguments text")).expect("JSON");
    // The model saw a placeholder; the client, which sent the address, gets it back restored.
    assert_eq!(arguments, json!({"title": "Call carol.chen@corp.example"}), "the placeholder is restored");

    let bodies = world.model.bodies();
    assert_eq!(bodies.len(), 1);
    let sent: Value = serde_json::from_str(&bodies[0]).expect("model request");
    let offered: Vec<&str> = sent["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert_eq!(offered, ["add_task", "transfer_funds", "pay_invoice"], "the denied tool is never offered");
    assert!(!bodies[0].contains("delete_task"), "{}", bodies[0]);
    assert!(!bodies[0].contains("carol.chen@corp.example") && !bodies[0].contains("dana@corp.example"));
    assert!(bodies[0].contains("[email 1]"), "redacted, not dropped: {}", bodies[0]);

    // A conversation whose history calls the denied tool would show it to the model: refused.
    let history = json!({
        "model": "toolgate",
        "messages": [
            {"role": "user", "content": "clean up"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "delete_task", "arguments": "{\"id\": 3}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "deleted"},
        ],
        "tools": tools(),
    });
    let refused = complete(&world, &token, &history).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text());
    assert_eq!(json_of(&refused)["error"]["code"], "tool_not_available");
    assert_eq!(world.model.bodies().len(), 1, "the refused request never reached the model");

    // A call the policy denies for its arguments is removed and explained, in both forms.
    for stream in [false, true] {
        let answer = complete(&world, &token, &chat("Please add a task: \"Launch codes\"", stream)).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
        let (text, calls) = if stream {
            let events = sse_data(&answer);
            let text: String =
                events.iter().filter_map(|event| event["choices"][0]["delta"]["content"].as_str()).collect();
            let calls =
                events.iter().filter(|event| event["choices"][0]["delta"].get("tool_calls").is_some());
            (text, calls.count())
        } else {
            let message = &json_of(&answer)["choices"][0]["message"];
            let calls = message["tool_calls"].as_array().map_or(0, Vec::len);
            (message["content"].as_str().unwrap_or("").to_owned(), calls)
        };
        assert_eq!(calls, 0, "stream {stream}: {}", answer.text());
        assert!(text.contains("`add_task` was refused by policy"), "stream {stream}: {text}");
    }
    world.gateway.stop().await;
}

/// What a client sets is passed on (sampling, format, a named tool choice), what the gateway
/// does not support is refused (400), never dropped; and a follow-up that sends the history of
/// an allowed call without `tools` (as VOIX's does) is answered.
#[tokio::test(flavor = "multi_thread")]
async fn parameters_reach_the_model_or_are_refused_and_follow_ups_without_tools_work() {
    let world = World::start().await;
    let token = world.token("alice", &["eng"]);
    let mut request = chat("Please add a task: \"Plan the offsite\"", false);
    request["temperature"] = json!(0.3);
    request["top_p"] = json!(0.8);
    request["seed"] = json!(11);
    request["stop"] = json!(["STOP"]);
    request["response_format"] = json!({"type": "json_object"});
    request["tool_choice"] = json!({"type": "function", "function": {"name": "add_task"}});
    let answer = complete(&world, &token, &request).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let sent: Value = serde_json::from_str(world.model.bodies().last().expect("a model call")).expect("json");
    assert_eq!((sent["temperature"].as_f64(), sent["top_p"].as_f64()), (Some(0.3), Some(0.8)));
    assert_eq!((sent["seed"].as_i64(), &sent["stop"]), (Some(11), &json!(["STOP"])));
    assert_eq!(sent["response_format"], json!({"type": "json_object"}));
    assert_eq!(sent["tool_choice"], json!({"type": "function", "function": {"name": "add_task"}}));

    let calls_before = world.model.bodies().len();
    for (name, value) in [
        ("logit_bias", json!({"50256": -100})),
        ("tool_choice", json!({"type": "function", "function": {"name": "delete_task"}})),
    ] {
        let mut refused = chat("hello", false);
        refused[name] = value;
        let answer = complete(&world, &token, &refused).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{name}: {}", answer.text());
    }
    assert_eq!(world.model.bodies().len(), calls_before, "refused requests never reach the model");

    let follow_up = json!({
        "model": "toolgate-demo-stand-in",
        "messages": [
            {"role": "user", "content": "Please add a task: \"Plan the offsite\""},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "add_task", "arguments": "{\"title\": \"Plan the offsite\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Task added"},
            {"role": "user", "content": "Please explain what you just did"},
        ],
    });
    let answer = complete(&world, &token, &follow_up).await;
    assert_eq!(answer.status, StatusCode::OK, "a follow-up without tools: {}", answer.text());
    world.gateway.stop().await;
}

/// Stock clients cannot send `X-Toolgate-Site`: a per-site base URL names the site instead,
/// and a configured alias (`gpt-4o`) is served by the configured model instead of a 404.
#[tokio::test(flavor = "multi_thread")]
async fn a_per_site_base_url_and_model_aliases_serve_unmodified_clients() {
    let world = World::start().await;
    let token = format!("Bearer {}", world.token("alice", &["eng"]));
    let at = |path: &str, site_header: Option<&str>, body: &Value| {
        let mut request = Request::post(path)
            .header("host", world.host())
            .header("content-type", "application/json")
            .header("authorization", token.as_str());
        if let Some(site) = site_header {
            request = request.header("x-toolgate-site", site);
        }
        request.body(Full::new(Bytes::from(body.to_string()))).expect("request")
    };
    let mut body = chat("Please add a task: \"Ship it\"", false);
    body["model"] = json!("gpt-4o");
    let answer =
        harness::send(world.gateway.address, at("/sites/tasks/v1/chat/completions", None, &body)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert_eq!(
        json_of(&answer)["model"],
        "toolgate-demo-stand-in",
        "the alias is served by the configured model"
    );
    let sent: Value = serde_json::from_str(world.model.bodies().last().expect("model call")).expect("json");
    assert_eq!(sent["model"], "toolgate-demo-stand-in");

    let conflict =
        harness::send(world.gateway.address, at("/sites/tasks/v1/chat/completions", Some("finance"), &body))
            .await;
    assert_eq!(conflict.status, StatusCode::BAD_REQUEST, "{}", conflict.text());
    assert_eq!(json_of(&conflict)["error"]["code"], "site_conflict");
    let unknown =
        harness::send(world.gateway.address, at("/sites/nope/v1/chat/completions", None, &body)).await;
    assert_eq!(unknown.status, StatusCode::FORBIDDEN, "{}", unknown.text());
    body["model"] = json!("gpt-5-unknown");
    let not_served =
        harness::send(world.gateway.address, at("/sites/tasks/v1/chat/completions", None, &body)).await;
    assert_eq!(not_served.status, StatusCode::NOT_FOUND, "{}", not_served.text());

    let models = Request::get("/sites/tasks/v1/models")
        .header("host", world.host())
        .header("authorization", token.as_str())
        .body(Full::new(Bytes::new()))
        .expect("request");
    let listed = harness::send(world.gateway.address, models).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    let names: Vec<String> = json_of(&listed)["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|model| model["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, ["toolgate-demo-stand-in", "gpt-4o", "gpt-4"]);
    world.gateway.stop().await;
}
