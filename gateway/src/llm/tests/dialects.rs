//! Wire details the stand-in does not produce, from a scripted server that writes exact bytes
//! in small pieces: parallel calls interleaved by index (OpenAI, vLLM), a whole call without
//! index ending in `stop` (Ollama), errors inside the stream, truncation and garbage; and what
//! the client sends (endpoint, key, body).

use super::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A server that reads one request and answers with `response`, written in small pieces; returns
/// its address and the request it received.
async fn scripted(response: String) -> (url::Url, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else { return String::new() };
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        while let Ok(read) = socket.read(&mut buffer).await {
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
