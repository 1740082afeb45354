//! Preparing a client's request: policy filtering, redaction, history calls, parameters and
//! the refusals.

use super::*;

fn view(policy: &str) -> PolicyView {
    let policy =
        policy::Policy::parse(policy, "test.toml", &[policy::SiteId::new("tasks")]).expect("test policy");
    let subject = policy::Subject { user: policy::UserId::new("alice"), email: None, groups: Vec::new() };
    policy.view(&subject, &policy::SiteId::new("tasks"))
}

fn body(value: Value) -> ChatBody {
    serde_json::from_value(value).expect("test body")
}

const POLICY: &str = r#"
[[rule]]
id = "tasks"
tools.allow = ["add_task"]
tools.deny = ["delete_*"]
redact = ["email"]
"#;

#[test]
fn denied_tools_are_withheld_and_text_is_redacted() {
    let prepared = prepare(
        &view(POLICY),
        &body(serde_json::json!({
            "model": "m",
            "messages": [
                {"role": "system", "content": "Write to ops@corp.example"},
                {"role": "user", "content": [{"type": "text", "text": "ask carol@corp.example"}]},
            ],
            "tools": [
                {"type": "function", "function": {"name": "add_task", "parameters": {"type": "object"}}},
                {"type": "function", "function": {"name": "delete_task"}},
            ],
        })),
        true,
    )
    .expect("prepared");
    assert_eq!(prepared.request.tools.len(), 1);
    assert_eq!(prepared.request.tools[0].name, "add_task");
    assert_eq!(prepared.withheld.len(), 1);
    assert_eq!(prepared.withheld[0].0, "delete_task");
    assert_eq!(prepared.redactions.values().sum::<usize>(), 2);
    assert_eq!(
        prepared.request.messages,
        vec![Message::System("Write to [email 1]".into()), Message::User("ask [email 2]".into())]
    );
    assert_eq!(prepared.last_user_text, "ask carol@corp.example");
}

#[test]
fn tools_off_withholds_everything_and_history_cannot_name_withheld_tools() {
    let request = serde_json::json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "add_task"}}],
    });
    let prepared = prepare(&view(POLICY), &body(request), false).expect("prepared");
    assert!(prepared.request.tools.is_empty() && prepared.offered.is_empty());

    let history = serde_json::json!({
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "delete_task", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ],
        "tools": [{"type": "function", "function": {"name": "delete_task"}}],
    });
    let error = prepare(&view(POLICY), &body(history), true).expect_err("refused");
    assert_eq!(error.code(), "tool_not_available");
    assert!(error.message().contains("the policy denies it"), "{}", error.message());
}

/// VOIX's follow-up sends the history with the earlier calls and no `tools`: calls of an
/// allowed tool pass (their arguments redacted), calls of a denied one do not.
#[test]
fn history_calls_are_checked_against_the_policy_not_the_request_tools() {
    let follow_up = |tool: &str| {
        serde_json::json!({
            "messages": [
                {"role": "user", "content": "add a task"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": tool, "arguments": "{\"owner\": \"carol@corp.example\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "done"},
                {"role": "user", "content": "Please explain what you just did"},
            ],
        })
    };
    let prepared =
        prepare(&view(POLICY), &body(follow_up("add_task")), true).expect("an allowed tool passes");
    assert!(prepared.request.tools.is_empty(), "no tools offered in a follow-up without tools");
    let Message::Assistant { tool_calls, .. } = &prepared.request.messages[1] else { panic!("assistant") };
    assert_eq!(tool_calls[0].name, "add_task");
    assert!(!tool_calls[0].arguments.contains("carol@"), "{}", tool_calls[0].arguments);
    let error = prepare(&view(POLICY), &body(follow_up("delete_task")), true).expect_err("denied");
    assert_eq!(error.code(), "tool_not_available");
    assert!(error.message().contains("the policy denies it"), "{}", error.message());
}

#[test]
fn malformed_requests_are_refused() {
    for (request, code) in [
        (serde_json::json!({"messages": []}), "invalid_request"),
        (
            serde_json::json!({"messages": [{"role": "user", "content": "x"}], "n": 2}),
            "unsupported_parameter",
        ),
        (
            serde_json::json!({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
            "unsupported_content",
        ),
        (serde_json::json!({"messages": [{"role": "tool", "content": "x"}]}), "invalid_request"),
        (
            serde_json::json!({"messages": [{"role": "user", "content": "x"}],
                               "tools": [{"type": "function", "function": {"name": "bad name"}}]}),
            "invalid_tool",
        ),
    ] {
        let error = prepare(&view(POLICY), &body(request.clone()), true).expect_err("refused");
        assert_eq!(error.code(), code, "{request}");
    }
}

#[test]
fn long_texts_are_cut_and_long_conversations_refused() {
    let long = "a".repeat(MAX_MESSAGE_TEXT + 10);
    let prepared = prepare(
        &view(POLICY),
        &body(serde_json::json!({"messages": [{"role": "user", "content": long}]})),
        true,
    )
    .expect("prepared");
    let Message::User(text) = &prepared.request.messages[0] else { panic!("a user message") };
    assert!(text.ends_with("…[cut]") && text.len() < MAX_MESSAGE_TEXT + 16);
    let messages: Vec<Value> =
        (0..9).map(|_| serde_json::json!({"role": "user", "content": long.clone()})).collect();
    let error =
        prepare(&view(POLICY), &body(serde_json::json!({"messages": messages})), true).expect_err("too long");
    assert_eq!(error.code(), "context_length_exceeded");
}

#[test]
fn sampling_and_format_parameters_are_checked_and_passed_on() {
    let request = serde_json::json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "add_task"}},
                  {"type": "function", "function": {"name": "delete_task"}}],
        "temperature": 0.2, "top_p": 0.9, "seed": 7, "stop": ["END", "mail dana@corp.example"],
        "presence_penalty": 0.5, "frequency_penalty": -0.5, "parallel_tool_calls": false,
        "tool_choice": {"type": "function", "function": {"name": "add_task"}},
        "response_format": {"type": "json_schema", "json_schema": {"name": "answer",
            "schema": {"type": "object", "description": "reply to dana@corp.example"}}},
        "user": "client-side-id-42",
    });
    let prepared = prepare(&view(POLICY), &body(request), true).expect("prepared");
    let options = &prepared.request.options;
    assert_eq!((options.temperature, options.top_p, options.seed), (Some(0.2), Some(0.9), Some(7)));
    assert_eq!((options.presence_penalty, options.frequency_penalty), (Some(0.5), Some(-0.5)));
    assert_eq!(options.parallel_tool_calls, Some(false));
    assert_eq!(options.stop, ["END", "mail [email 1]"], "stop sequences are redacted");
    let format = options.response_format.as_ref().expect("response_format").to_string();
    assert!(format.contains("[email 1]") && !format.contains("dana@"), "{format}");
    assert_eq!(
        options.tool_choice,
        Some(serde_json::json!({"type": "function", "function": {"name": "add_task"}}))
    );
}

#[test]
fn unsupported_or_out_of_range_parameters_are_refused_not_dropped() {
    let base = || {
        serde_json::json!({"messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "add_task"}},
                  {"type": "function", "function": {"name": "delete_task"}}]})
    };
    for (name, value, code) in [
        ("logprobs", serde_json::json!(true), "unsupported_parameter"),
        ("functions", serde_json::json!([]), "unsupported_parameter"),
        ("temperature", serde_json::json!(2.5), "invalid_request"),
        ("top_p", serde_json::json!(-0.1), "invalid_request"),
        ("stop", serde_json::json!(["a", "b", "c", "d", "e"]), "invalid_request"),
        ("stop", serde_json::json!(3), "invalid_request"),
        ("response_format", serde_json::json!({"type": "xml"}), "invalid_request"),
        (
            "tool_choice",
            serde_json::json!({"type": "function", "function": {"name": "delete_task"}}),
            "tool_not_available",
        ),
        (
            "tool_choice",
            serde_json::json!({"type": "function", "function": {"name": "nowhere"}}),
            "tool_not_available",
        ),
        ("tool_choice", serde_json::json!("sometimes"), "invalid_request"),
    ] {
        let mut request = base();
        request[name] = value.clone();
        let error = prepare(&view(POLICY), &body(request), true).expect_err("refused");
        assert_eq!(error.code(), code, "{name} = {value}: {}", error.message());
    }
    // A named choice of a denied tool says why.
    let mut request = base();
    request["tool_choice"] = serde_json::json!({"type": "function", "function": {"name": "delete_task"}});
    let error = prepare(&view(POLICY), &body(request), true).expect_err("refused");
    assert!(error.message().contains("delete_task"), "{}", error.message());
    // `required` with every tool withheld cannot be met.
    let mut request = base();
    request["tools"] = serde_json::json!([{"type": "function", "function": {"name": "delete_task"}}]);
    request["tool_choice"] = serde_json::json!("required");
    assert_eq!(
        prepare(&view(POLICY), &body(request), true).expect_err("refused").code(),
        "tool_not_available"
    );
}
