//! What comes back from `/v1/chat/completions`: calls that need approval as refusals, streamed
//! and whole answers, an unreachable or slow model, the per-user limit on concurrent requests, and
//! the official `openai` Python client.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn calls_that_need_approval_come_back_as_refusals_never_as_tool_calls() {
    let world = World::start().await;
    let token = world.token("alice", &["eng"]);
    let answer = complete(&world, &token, &chat("Transfer funds: 250", false)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let completion = json_of(&answer);
    let message = &completion["choices"][0]["message"];
    assert!(message.get("tool_calls").is_none(), "{completion:#}");
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
    let text = message["content"].as_str().expect("a refusal text");
    assert!(text.contains("`transfer_funds` needs your approval"), "{text}");
    assert!(text.contains("assistant panel on http://tasks.localhost:1"), "names where to approve: {text}");
    let sent: Value = serde_json::from_str(&world.model.bodies()[0]).expect("model request");
    assert!(
        sent["tools"].as_array().is_some_and(|tools| tools.len() == 3),
        "offered, the call is what waits"
    );

    // Streamed, with a group as the approver.
    let answer = complete(&world, &token, &chat("Pay the invoice: 5000", true)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let events = sse_data(&answer);
    assert_eq!(events.last(), Some(&json!("[DONE]")), "{events:#?}");
    assert!(
        events.iter().all(|event| event["choices"][0]["delta"].get("tool_calls").is_none()),
        "{events:#?}"
    );
    let text: String =
        events.iter().filter_map(|event| event["choices"][0]["delta"]["content"].as_str()).collect();
    assert!(text.contains("`pay_invoice` needs approval from the group `treasury`"), "{text}");
    let finish = events.iter().find_map(|event| event["choices"][0]["finish_reason"].as_str());
    assert_eq!(finish, Some("stop"));

    // Below the threshold the same tool is simply allowed.
    let answer = complete(&world, &token, &chat("Pay the invoice: 50", false)).await;
    let completion = json_of(&answer);
    let call = &completion["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "pay_invoice", "{completion:#}");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap_or("")).expect("JSON");
    assert_eq!(arguments["amount"].as_f64(), Some(50.0));

    // Every step is in the audit log: what the model was shown, each model call, each decision.
    let records = audit_records(&world, "alice").await;
    let of = |kind: &str| {
        records.iter().filter(|record| record["toolgate.event.kind"] == kind).collect::<Vec<_>>()
    };
    let exposures = of("catalog_exposure");
    assert_eq!(exposures.len(), 3, "{records:#?}");
    assert_eq!(exposures[0]["toolgate.resource"], "tool:add_task,tool:pay_invoice,tool:transfer_funds");
    assert_eq!(exposures[0]["toolgate.explanation"]["withheld"], json!(["tool:delete_task"]));
    assert!(exposures[0]["toolgate.digests"]["prompt"].is_string(), "the prompt only as a digest");
    let model_calls = of("llm_call");
    assert_eq!(model_calls.len(), 3);
    assert!(model_calls.iter().all(|record| record["gen_ai.request.model"] == "toolgate-demo-stand-in"
        && record["toolgate.latency_ms"].is_u64()
        && record["gen_ai.usage.input_tokens"].is_u64()));
    let decisions: Vec<(&str, &str, &str)> = of("tool_call")
        .iter()
        .map(|record| {
            let field = |name: &str| record[name].as_str().unwrap_or("");
            (field("gen_ai.tool.name"), field("toolgate.decision"), field("toolgate.reason"))
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("transfer_funds", "deny", "approval_required"),
            ("pay_invoice", "deny", "approval_required"),
            ("pay_invoice", "allow", "policy"),
        ]
    );
    assert!(
        !String::from_utf8_lossy(&serde_json::to_vec(&records).unwrap_or_default()).contains("5000"),
        "arguments never appear in audit records"
    );
    world.gateway.stop().await;
}

/// The audit records about `user`, read through the audit API as a member of `auditors`.
async fn audit_records(world: &World, user: &str) -> Vec<Value> {
    let auditor = format!("Bearer {}", world.token("ivy", &["auditors"]));
    let request = Request::get(format!("/.toolgate/audit/records?user={user}&limit=1000"))
        .header("host", world.host())
        .header("authorization", auditor)
        .body(Full::new(Bytes::new()))
        .expect("request");
    let answer = harness::send(world.gateway.address, request).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let records = json_of(&answer)["records"].as_array().cloned().unwrap_or_default();
    records.into_iter().map(|record| record["event"].clone()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn streamed_answers_pass_text_and_return_checked_calls_at_the_end() {
    let world = World::start().await;
    let token = world.token("alice", &["eng"]);
    let answer = complete(&world, &token, &chat("Please add a task: \"Water the plants\"", true)).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events = sse_data(&answer);
    assert_eq!(events.last(), Some(&json!("[DONE]")));
    let chunks = &events[..events.len() - 1];
    assert!(chunks.iter().all(|chunk| chunk["object"] == "chat.completion.chunk"), "{chunks:#?}");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["tool_calls"].as_array())
        .flatten()
        .collect();
    assert_eq!(calls.len(), 1, "{chunks:#?}");
    assert_eq!(calls[0]["function"]["name"], "add_task");
    assert_eq!(calls[0]["function"]["arguments"], "{\"title\":\"Water the plants\"}");
    let finish = chunks.iter().find_map(|chunk| chunk["choices"][0]["finish_reason"].as_str());
    assert_eq!(finish, Some("tool_calls"));
    let usage = chunks.last().expect("usage chunk");
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().is_some(), "{usage:#}");

    // The tool's result goes back in the next request; the model's text streams through.
    let next = json!({
        "model": "toolgate-demo-stand-in",
        "stream": true,
        "messages": [
            {"role": "user", "content": "Please add a task: \"Water the plants\""},
            {"role": "assistant", "content": null, "tool_calls": [{"id": calls[0]["id"], "type": "function",
                "function": {"name": "add_task", "arguments": calls[0]["function"]["arguments"]}}]},
            {"role": "tool", "tool_call_id": calls[0]["id"], "content": "added #7 for erin@corp.example"},
        ],
        "tools": tools(),
    });
    let answer = complete(&world, &token, &next).await;
    let events = sse_data(&answer);
    let text: String =
        events.iter().filter_map(|event| event["choices"][0]["delta"]["content"].as_str()).collect();
    assert!(text.contains("added #7 for [email 1]"), "the tool result was redacted before the model: {text}");
    assert!(world.model.bodies().iter().all(|body| !body.contains("erin@corp.example")));
    world.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_model_is_a_502_and_a_slow_one_a_504() {
    // A port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = closed.local_addr().expect("address");
    drop(closed);
    let model = std::sync::Arc::new(gateway::demo::model::StandIn::default());
    let world = World::with_llm(model, &format!("http://{address}/v1")).await;
    let token = world.token("alice", &["eng"]);
    for stream in [false, true] {
        let answer = complete(&world, &token, &chat("Please add a task: \"x\"", stream)).await;
        assert_eq!(answer.status, StatusCode::BAD_GATEWAY, "stream {stream}: {}", answer.text());
        let error = json_of(&answer);
        assert_eq!(error["error"]["type"], "server_error");
        assert_eq!(error["error"]["code"], "llm_unreachable");
        assert!(error["error"]["message"].as_str().unwrap_or("").contains("cannot be reached"), "{error}");
    }
    world.gateway.stop().await;

    // A model slower than `llm.first_token_timeout` (1 s here): 504.
    let slow = gateway::demo::model::StandInOptions {
        first_token_delay: std::time::Duration::from_secs(3),
        ..Default::default()
    };
    let world = World::with_model(slow).await;
    let token = world.token("alice", &["eng"]);
    for stream in [false, true] {
        let answer = complete(&world, &token, &chat("Please add a task: \"x\"", stream)).await;
        assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT, "stream {stream}: {}", answer.text());
        assert_eq!(json_of(&answer)["error"]["code"], "llm_first_token_timeout");
    }
    world.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_runs_at_most_agent_max_concurrent_turns_requests_at_once() {
    let slow = gateway::demo::model::StandInOptions {
        chunk_delay: std::time::Duration::from_millis(200),
        ..Default::default()
    };
    let world = World::with_model(slow).await;
    let (alice, bob) = (world.token("alice", &["eng"]), world.token("bob", &["eng"]));
    let body = chat("Please add a task: \"Water the plants\"", true);
    let bearer = format!("Bearer {alice}");
    let running =
        harness::open(world.gateway.address, post(&world, Some(&bearer), Some("tasks"), &body)).await;
    assert_eq!(running.status(), StatusCode::OK);
    let second = complete(&world, &alice, &body).await;
    assert_eq!(second.status, StatusCode::TOO_MANY_REQUESTS, "{}", second.text());
    assert_eq!(json_of(&second)["error"]["type"], "rate_limit_error");
    assert_eq!(complete(&world, &bob, &body).await.status, StatusCode::OK, "other users are not affected");
    let _ = http_body_util::BodyExt::collect(running.into_body()).await;
    // Once the stream said [DONE] the request no longer counts, so a client may go on at once.
    for _ in 0..3 {
        let next = complete(&world, &alice, &chat("Please add a task: \"x\"", false)).await;
        assert_eq!(next.status, StatusCode::OK, "{}", next.text());
    }
    world.gateway.stop().await;
}

/// The official `openai` Python package, from the virtualenv `./test.sh` prepares, talks to the
/// gateway: models, a whole and a streamed completion, an approval refusal, a refused token.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_python_client_talks_to_the_gateway() {
    let python = harness::test_python("openai");
    let world = World::start().await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openai_client.py");
    let output = tokio::process::Command::new(&python)
        .arg(script)
        .env("TOOLGATE_BASE_URL", world.base_url())
        .env("TOOLGATE_TOKEN", world.token("alice", &["eng"]))
        .env("TOOLGATE_SITE", "tasks")
        .output()
        .await
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "openai_client.py failed:\n{stdout}\n{stderr}");
    let results: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("not JSON: {stdout}"));

    assert_eq!(results["models"], json!(["toolgate-demo-stand-in", "gpt-4o", "gpt-4"]));
    let whole = &results["whole"];
    assert_eq!(whole["finish_reason"], "tool_calls", "{results:#}");
    assert_eq!(
        whole["tool_calls"],
        json!([{"name": "add_task", "arguments": {"title": "Call carol.chen@corp.example"}}])
    );
    let streamed = &results["streamed"];
    assert_eq!(streamed["finish_reason"], "tool_calls", "{results:#}");
    assert_eq!(
        streamed["tool_calls"],
        json!([{"name": "add_task", "arguments": {"title": "Water the plants"}}])
    );
    assert!(streamed["usage"]["total_tokens"].as_u64().is_some(), "{results:#}");
    let approval = &results["approval"];
    assert_eq!(approval["tool_calls"], json!([]), "{results:#}");
    assert!(approval["content"].as_str().unwrap_or("").contains("needs your approval"), "{results:#}");
    assert_eq!(results["refused"], json!({"status": 401, "code": "invalid_api_key"}));
    assert!(world.model.bodies().iter().all(|body| !body.contains("carol.chen@corp.example")));
    world.gateway.stop().await;
}
