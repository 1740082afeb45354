//! The stand-in's choices (pure) and its HTTP face (a real socket).

use super::answer::{Answer, answer};
use super::protocol::{self, ChatBody};
use super::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn request(messages: Value, stream: bool) -> ChatBody {
    let tools = json!([
        { "type": "function", "function": { "name": "add_task", "description": "Add a task to the team board",
          "parameters": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } } },
        { "type": "function", "function": { "name": "delete_task", "description": "Delete a task from the board",
          "parameters": { "type": "object", "properties": { "id": { "type": "number" } }, "required": ["id"] } } },
        { "type": "function", "function": { "name": "book_flight", "description": "Book a flight",
          "parameters": { "type": "object", "properties": {
              "destination": { "type": "string" }, "date": { "type": "string", "format": "date" },
              "class": { "enum": ["economy", "business"] } } } } }
    ]);
    let body = json!({ "model": "x", "messages": messages, "tools": tools, "stream": stream, "stream_options": { "include_usage": true } });
    serde_json::from_value(body).expect("request")
}

fn user(text: &str) -> Value {
    json!([{ "role": "system", "content": "ignored" }, { "role": "user", "content": text }])
}

#[test]
fn the_best_matching_tool_is_called_with_arguments_from_the_message() {
    assert_eq!(
        answer(&request(user("Delete task 12 please"), true)),
        Answer::Call { name: "delete_task".into(), arguments: json!({ "id": 12.0 }) }
    );
    assert_eq!(
        answer(&request(user("Book a business flight to Lisbon on 2025-06-02"), true)),
        Answer::Call {
            name: "book_flight".into(),
            arguments: json!({ "class": "business", "date": "2025-06-02", "destination": "Lisbon" })
        }
    );
    // A request that shares one word with a tool is not that tool: no call, and it says so.
    for loose in ["task", "Mark task 4 as done"] {
        let Answer::Text(text) = answer(&request(user(loose), true)) else {
            panic!("{loose}: no call expected")
        };
        assert!(text.starts_with("No tool here fits that request well"), "{loose}: {text}");
    }
    // Two words of the description are enough.
    assert!(
        matches!(answer(&request(user("put this on the team board"), true)), Answer::Call { name, .. } if name == "add_task")
    );
}

/// Parameters are filled by their names even when the name is a common word (`from`, `to`), and
/// by their titles.
#[test]
fn parameters_named_from_and_to_or_titled_are_filled() {
    let tools = json!([{ "type": "function", "function": { "name": "search_flights",
        "description": "Find flights between two cities",
        "parameters": { "type": "object", "properties": {
            "from": { "type": "string" }, "to": { "type": "string" },
            "cabin": { "type": "string", "title": "Cabin class" } }, "required": ["from", "to"] } } }]);
    let without_values =
        json!({ "model": "x", "messages": user("Find flights between two cities"), "tools": tools.clone() });
    let body = json!({ "model": "x", "messages": user("Search flights from Berlin to London, class business"), "tools": tools });
    let body: ChatBody = serde_json::from_value(body).expect("request");
    let Answer::Text(text) = answer(&serde_json::from_value(without_values).expect("request")) else {
        panic!("values it did not find are asked for, not made up")
    };
    assert!(text.starts_with("To call search_flights I need") && text.contains(" to"), "{text}");
    assert_eq!(
        answer(&body),
        Answer::Call {
            name: "search_flights".into(),
            arguments: json!({ "from": "Berlin", "to": "London", "cabin": "business" })
        }
    );
}

#[test]
fn without_a_match_it_lists_what_it_can_do_and_says_what_it_is() {
    let Answer::Text(text) = answer(&request(user("What's the weather?"), true)) else {
        panic!("text expected")
    };
    assert!(text.contains("not a language model"));
    assert!(text.contains("- book_flight: Book a flight"));
}

#[test]
fn a_tool_result_is_quoted_up_to_300_characters() {
    let long = "x".repeat(400);
    let messages = json!([
        { "role": "user", "content": "delete task 1" },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "delete_task", "arguments": "{}" } }] },
        { "role": "tool", "tool_call_id": "c1", "content": [{ "type": "text", "text": long }] }
    ]);
    let Answer::Text(text) = answer(&request(messages, false)) else { panic!("text expected") };
    assert_eq!(text, format!("Done: delete_task answered “{}…”", "x".repeat(300)));
}

#[test]
fn streams_split_arguments_and_end_with_usage_and_done() {
    let request = request(user("Add a task: water the plants"), true);
    let events = protocol::events(&request, &answer(&request), "chatcmpl-standin0");
    let argument_deltas = events.iter().filter(|event| event.contains(r#""function":{"arguments""#)).count();
    assert!(argument_deltas >= 3, "{events:?}");
    assert!(
        events[events.len() - 2].contains(r#""choices":[]"#)
            && events[events.len() - 2].contains("prompt_tokens")
    );
    assert_eq!(events.last().map(String::as_str), Some("data: [DONE]\n\n"));
}

#[tokio::test]
async fn models_names_the_stand_in_and_it_refuses_to_leave_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(serve(listener, std::future::pending()));
    let mut socket = tokio::net::TcpStream::connect(address).await.expect("connect");
    socket
        .write_all(b"GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.expect("read");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(MODEL_ID) && answer.contains("not a language model"));

    let wide = TcpListener::bind("0.0.0.0:0").await.expect("bind");
    assert!(matches!(serve(wide, std::future::pending()).await, Err(StandInError::NotLoopback(_))));
}
