//! The client against real servers on loopback: the demo stand-in with its failure knobs here,
//! and in `dialects.rs` a scripted server for the wire details of particular servers.

mod dialects;

use super::*;
use crate::config::secrets::SecretRef;
use crate::demo::model::{StandIn, StandInOptions};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

async fn start_stand_in(options: StandInOptions) -> (StandIn, url::Url) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let stand_in = StandIn::new(options);
    let server = stand_in.clone();
    tokio::spawn(async move { server.serve(listener, std::future::pending()).await });
    (stand_in, url::Url::parse(&format!("http://{address}/v1")).expect("url"))
}

fn config(base_url: url::Url) -> LlmConfig {
    LlmConfig {
        connect_timeout: Duration::from_secs(2),
        first_token_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        max_retries: 2,
        max_tokens: 256,
        ..LlmConfig::new(base_url, "test-model")
    }
}

fn client(config: LlmConfig) -> LlmClient {
    LlmClient::new(config).expect("client")
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "add_task".into(),
            description: "Add a task to the team board".into(),
            parameters: json!({ "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] }),
        },
        ToolSpec {
            name: "complete_task".into(),
            description: "Mark a task as done".into(),
            parameters: json!({ "type": "object", "properties": { "id": { "type": "number" } }, "required": ["id"] }),
        },
    ]
}

fn asking(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::System("Be brief.".into()), Message::User(text.into())],
        tools: tools(),
        ..ChatRequest::default()
    }
}

/// Everything a stream yields, in order.
async fn drain(stream: &mut ChatStream) -> Vec<Result<ChatEvent, LlmError>> {
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    events
}

fn text_of(events: &[Result<ChatEvent, LlmError>]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            Ok(ChatEvent::TextDelta(text)) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streamed_text_arrives_in_pieces_and_ends_with_usage() {
    let (_, base) = start_stand_in(StandInOptions::default()).await;
    let mut stream = client(config(base)).stream(asking("hello there")).await.expect("stream");
    let events = drain(&mut stream).await;
    let deltas = events.iter().filter(|event| matches!(event, Ok(ChatEvent::TextDelta(_)))).count();
    assert!(deltas > 3, "text comes in several deltas: {events:?}");
    assert!(text_of(&events).starts_with("I am Toolgate's demo stand-in model"));
    assert!(text_of(&events).contains("- add_task: Add a task to the team board"));
    match events.last() {
        Some(Ok(ChatEvent::Done { finish_reason, usage: Some(usage) })) => {
            assert_eq!(finish_reason.as_deref(), Some("stop"));
            assert_eq!(usage.input_tokens, 4, "words of the two messages");
            assert_eq!(usage.output_tokens, deltas as u64);
        }
        other => panic!("expected Done with usage, got {other:?}"),
    }
    assert!(stream.next().await.is_none(), "nothing after Done");
}

#[tokio::test]
async fn streamed_tool_call_is_assembled_from_split_argument_deltas() {
    let (_, base) = start_stand_in(StandInOptions::default()).await;
    let mut stream = client(config(base)).stream(asking("Add a task: buy milk")).await.expect("stream");
    let events = drain(&mut stream).await;
    let [Ok(ChatEvent::ToolCalls(calls)), Ok(ChatEvent::Done { finish_reason, usage })] = &events[..] else {
        panic!("expected ToolCalls then Done, got {events:?}");
    };
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "add_task");
    assert!(calls[0].id.starts_with("call_"));
    let arguments: Value = serde_json::from_str(&calls[0].arguments).expect("arguments are JSON");
    assert_eq!(arguments, json!({ "title": "buy milk" }));
    assert_eq!(finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(usage.map(|usage| usage.output_tokens), Some(3), "20 characters of arguments in 3 deltas");
}

#[tokio::test]
async fn a_tool_result_is_summarised_by_quoting_it() {
    let (_, base) = start_stand_in(StandInOptions::default()).await;
    let call =
        ToolCall { id: "call_9".into(), name: "complete_task".into(), arguments: r#"{"id":3}"#.into() };
    let request = ChatRequest {
        messages: vec![
            Message::User("complete task 3".into()),
            Message::Assistant { content: None, tool_calls: vec![call] },
            Message::Tool { call_id: "call_9".into(), content: "Task 3 is done.".into() },
        ],
        tools: tools(),
        max_tokens: Some(10_000),
        ..ChatRequest::default()
    };
    let mut stream = client(config(base)).stream(request).await.expect("stream");
    assert_eq!(text_of(&drain(&mut stream).await), "Done: complete_task answered “Task 3 is done.”");
}

#[tokio::test]
async fn complete_returns_the_whole_answer() {
    let (_, base) = start_stand_in(StandInOptions::default()).await;
    let response = client(config(base)).complete(asking("please complete task 7")).await.expect("answer");
    assert_eq!(response.content, None);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].name, "complete_task");
    assert_eq!(
        serde_json::from_str::<Value>(&response.tool_calls[0].arguments).ok(),
        Some(json!({ "id": 7.0 }))
    );
    assert!(response.usage.is_some_and(|usage| usage.input_tokens > 0));
}

#[tokio::test]
async fn failures_before_the_first_byte_are_retried() {
    let options = StandInOptions { fail_first: 2, ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let mut stream = client(config(base)).stream(asking("hello")).await.expect("third try succeeds");
    assert!(matches!(drain(&mut stream).await.last(), Some(Ok(ChatEvent::Done { .. }))));
    assert_eq!(stand_in.requests(), 3);
}

#[tokio::test]
async fn server_errors_after_the_retries_are_reported_with_their_status() {
    let options = StandInOptions { fail_first: 100, ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let error = client(config(base)).complete(asking("hello")).await.expect_err("always 503");
    assert!(
        matches!(&error, LlmError::Status { status: 503, message } if message.contains("on purpose")),
        "{error:?}"
    );
    assert_eq!(error.reason(), "llm_status");
    assert_eq!(stand_in.requests(), 3, "one try and two retries");
}

#[tokio::test]
async fn rate_limits_are_retried_then_reported() {
    let options = StandInOptions { fail_first: 1, failure_status: 429, ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    assert!(client(config(base)).stream(asking("hello")).await.is_ok(), "429 once, then an answer");
    assert_eq!(stand_in.requests(), 2);

    let options = StandInOptions { fail_first: 100, failure_status: 429, ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let error =
        client(LlmConfig { max_retries: 1, ..config(base) }).stream(asking("hello")).await.expect_err("429");
    assert!(matches!(error, LlmError::RateLimited));
    assert_eq!((error.reason(), stand_in.requests()), ("llm_rate_limited", 2));
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let options = StandInOptions { fail_first: 1, failure_status: 400, ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let error = client(config(base)).stream(asking("hello")).await.expect_err("400");
    assert!(matches!(error, LlmError::Status { status: 400, .. }));
    assert!(error.user_message().contains("too long"));
    assert_eq!(stand_in.requests(), 1);
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_an_error_and_is_not_retried() {
    let options = StandInOptions { cut_after_chunks: Some(3), ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let mut stream = client(config(base)).stream(asking("hello")).await.expect("the answer starts");
    let events = drain(&mut stream).await;
    assert!(!text_of(&events).is_empty(), "the text before the cut is delivered");
    assert!(matches!(events.last(), Some(Err(LlmError::Interrupted))), "{events:?}");
    assert!(!events.iter().any(|event| matches!(event, Ok(ChatEvent::Done { .. }))));
    assert_eq!(stand_in.requests(), 1);
}

#[tokio::test]
async fn a_slow_first_token_times_out_after_the_retries() {
    let options = StandInOptions { first_token_delay: Duration::from_secs(5), ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let config =
        LlmConfig { first_token_timeout: Duration::from_millis(300), max_retries: 1, ..config(base) };
    let started = Instant::now();
    let error = client(config).stream(asking("hello")).await.expect_err("timeout");
    assert!(matches!(error, LlmError::Timeout(TimeoutPhase::FirstToken)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "gave up after two 300 ms tries and a pause");
    assert_eq!(stand_in.requests(), 2);
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let options = StandInOptions { hang_after_chunks: Some(3), ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let config = LlmConfig { idle_timeout: Duration::from_millis(300), ..config(base) };
    let mut stream = client(config).stream(asking("hello")).await.expect("the answer starts");
    let events = drain(&mut stream).await;
    assert!(matches!(events.last(), Some(Err(LlmError::Timeout(TimeoutPhase::Idle)))), "{events:?}");
    assert_eq!(stand_in.requests(), 1, "no retry once the answer started");
}

#[tokio::test]
async fn an_unreachable_server_is_reported() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
    let base = url::Url::parse(&format!("http://{address}/v1")).expect("url");
    let error = client(LlmConfig { max_retries: 1, ..config(base) })
        .stream(asking("hello"))
        .await
        .expect_err("refused");
    assert!(matches!(error, LlmError::Unreachable(_)), "{error:?}");
    assert_eq!(error.reason(), "llm_unreachable");
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let options = StandInOptions { chunk_delay: Duration::from_millis(50), ..StandInOptions::default() };
    let (stand_in, base) = start_stand_in(options).await;
    let mut stream = client(config(base)).stream(asking("hello")).await.expect("stream");
    assert!(matches!(stream.next().await, Some(Ok(ChatEvent::TextDelta(_)))));
    assert_eq!(stand_in.disconnects(), 0);
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while stand_in.disconnects() == 0 {
        assert!(Instant::now() < deadline, "the server never saw the client leave");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn configuration_errors_are_refused_and_keys_are_not_shown() {
    let base = url::Url::parse("ftp://example.com/v1").expect("url");
    assert!(matches!(LlmClient::new(LlmConfig::new(base, "m")), Err(LlmError::Config(_))));
    let base = url::Url::parse("http://127.0.0.1:1/v1").expect("url");
    let missing = LlmConfig {
        api_key: Some(SecretRef::Env("TOOLGATE_TEST_UNSET_LLM_KEY".into())),
        ..LlmConfig::new(base.clone(), "m")
    };
    let error = LlmClient::new(missing).expect_err("unset variable");
    assert_eq!(error.reason(), "llm_config");
    let with_key =
        LlmConfig { api_key: Some(SecretRef::Generated("sk-hidden".into())), ..LlmConfig::new(base, "m") };
    let client = LlmClient::new(with_key).expect("client");
    assert!(!format!("{client:?}").contains("sk-hidden"));
    assert_eq!(client.model(), "m");
}
