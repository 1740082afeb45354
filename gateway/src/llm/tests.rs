//! The client against real servers on loopback: the demo stand-in (with its failure knobs) and,
//! for wire details the stand-in does not produce, a scripted server that writes exact bytes.

use super::*;
use crate::demo::model::{StandIn, StandInOptions};
use crate::secrets::SecretRef;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
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
        max_tokens: None,
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

/// A server that reads one request and answers with `response`, written in small pieces; returns
/// its address and the request it received.
async fn scripted(response: String) -> (url::Url, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else { return String::new() };
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        loop {
            let Ok(read) = socket.read(&mut buffer).await else { break };
            request.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&request).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase().strip_prefix("content-length:").map(|n| n.trim().to_owned())
                    })
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0);
                if body.len() >= length {
                    break;
                }
            }
            if read == 0 {
                break;
            }
        }
        for piece in response.as_bytes().chunks(7) {
            let _ = socket.write_all(piece).await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let _ = socket.shutdown().await;
        String::from_utf8_lossy(&request).into_owned()
    });
    (url::Url::parse(&format!("http://{address}/v1/")).expect("url"), task)
}

/// An event-stream response whose body ends when the connection closes.
fn event_stream(events: &[&str]) -> String {
    let body: String = events.iter().map(|event| format!("data: {event}\r\n\r\n")).collect();
    format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{body}")
}

#[tokio::test]
async fn interleaved_parallel_tool_calls_are_assembled_by_index() {
    let (base, request) = scripted(event_stream(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}],"usage":null}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"add_task","arguments":""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"complete_task","arguments":"{\"id\""}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"title\": \"b"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":": 4}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"read\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43}}"#,
        "[DONE]",
    ]))
    .await;
    let secret = SecretRef::Generated("sk-test-key".into());
    let client = client(LlmConfig { api_key: Some(secret), ..config(base) });
    let mut stream = client.stream(asking("do two things")).await.expect("stream");
    let events = drain(&mut stream).await;
    let expected = vec![
        ToolCall { id: "call_a".into(), name: "add_task".into(), arguments: r#"{"title": "bread"}"#.into() },
        ToolCall { id: "call_b".into(), name: "complete_task".into(), arguments: r#"{"id": 4}"#.into() },
    ];
    let usage = Some(Usage { input_tokens: 31, output_tokens: 12 });
    assert_eq!(
        events.into_iter().map(|event| event.map_err(|error| error.to_string())).collect::<Vec<_>>(),
        vec![
            Ok(ChatEvent::ToolCalls(expected)),
            Ok(ChatEvent::Done { finish_reason: Some("tool_calls".into()), usage })
        ]
    );

    // What went over the wire: the endpoint, the key, and an OpenAI-style streaming request.
    let request = request.await.expect("request");
    let (head, body) = request.split_once("\r\n\r\n").expect("head and body");
    assert!(head.starts_with("POST /v1/chat/completions HTTP/1.1"), "{head}");
    assert!(head.to_ascii_lowercase().contains("authorization: bearer sk-test-key"));
    let body: Value = serde_json::from_str(body).expect("JSON body");
    assert_eq!(body["model"], "test-model");
    assert_eq!(
        (body["stream"].clone(), body["stream_options"].clone()),
        (json!(true), json!({ "include_usage": true }))
    );
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["messages"][1], json!({ "role": "user", "content": "do two things" }));
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][1]["function"]["name"], "complete_task");
}

#[tokio::test]
async fn tool_calls_count_even_when_the_server_says_stop_and_sends_no_usage() {
    // As some Ollama versions stream: the whole call in one delta without index, `stop`.
    let (base, _) = scripted(event_stream(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Sure. "},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_x","function":{"name":"add_task","arguments":"{\"title\":\"tea\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]))
    .await;
    let mut stream = client(config(base)).stream(asking("add tea")).await.expect("stream");
    let events: Vec<_> = drain(&mut stream).await.into_iter().map(Result::ok).collect();
    assert_eq!(
        events,
        vec![
            Some(ChatEvent::TextDelta("Sure. ".into())),
            Some(ChatEvent::ToolCalls(vec![ToolCall {
                id: "call_x".into(),
                name: "add_task".into(),
                arguments: r#"{"title":"tea"}"#.into()
            }])),
            Some(ChatEvent::Done { finish_reason: Some("stop".into()), usage: None }),
        ]
    );
}

#[tokio::test]
async fn an_error_inside_the_stream_ends_it() {
    let (base, _) = scripted(event_stream(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
        r#"{"error":{"object":"error","message":"engine died","type":"InternalServerError","code":500}}"#,
    ]))
    .await;
    let mut stream = client(config(base)).stream(asking("hello")).await.expect("stream");
    let events = drain(&mut stream).await;
    assert!(
        matches!(&events[..], [Ok(ChatEvent::TextDelta(_)), Err(LlmError::Status { status: 500, .. })]),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_stream_that_ends_without_finishing_is_interrupted() {
    let (base, _) = scripted(event_stream(&[r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#])).await;
    let mut stream = client(config(base)).stream(asking("hello")).await.expect("stream");
    assert!(matches!(drain(&mut stream).await.last(), Some(Err(LlmError::Interrupted))));
}

#[tokio::test]
async fn garbage_is_a_protocol_error_that_quotes_nothing() {
    let (base, _) = scripted(event_stream(&["{\"choices\": \"secret answer text\"}"])).await;
    let mut stream = client(config(base)).stream(asking("hello")).await.expect("stream");
    let events = drain(&mut stream).await;
    let Some(Err(error @ LlmError::Protocol(_))) = events.last() else { panic!("{events:?}") };
    assert!(!error.to_string().contains("secret"), "{error}");
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
