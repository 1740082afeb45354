//! `GET /.toolgate/agent/conversation/{id}`: the caller's conversation as the panel shows it
//! after a page load (what the model saw: redacted, placeholders and all), and
//! `DELETE /.toolgate/agent/conversation/{id}`: "new conversation", which forgets it.
//!
//! Both need the session's CSRF token, and a conversation answers only its owner (user, session
//! and site): any other id is "not found", as an unknown one is.

use super::{ApiError, Caller, json};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::llm::Message;
use crate::state::Gateway;
use crate::state::conversations;
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// Answers or forgets one of the caller's conversations.
pub fn respond(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    id: &str,
    request: &Request<Incoming>,
) -> Result<Response<ProxyBody>, ApiError> {
    super::turn_endpoints::check_csrf(gateway, site, caller, request)?;
    let owner = caller.owner(gateway, site).key();
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such conversation");
    if !conversations::valid_id(id) {
        return Err(not_found());
    }
    match *request.method() {
        Method::GET => {
            let conversation = gateway.conversations.get(&owner, id).ok_or_else(not_found)?;
            let body =
                json!({"id": id, "turns": conversation.turns, "entries": transcript(&conversation.messages)});
            Ok(json(StatusCode::OK, &body))
        }
        Method::DELETE => {
            if gateway.conversations.forget(&owner, id) {
                Ok(json(StatusCode::OK, &json!({"forgotten": true})))
            } else {
                Err(not_found())
            }
        }
        _ => Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this endpoint does not accept that method",
        )),
    }
}

/// The conversation as lines for the panel: `{role: "user" | "assistant", text}` and
/// `{role: "tool", tool, ok}` (the call's result text stays on the gateway).
fn transcript(messages: &[Message]) -> Vec<Value> {
    let mut entries = Vec::new();
    let mut calls: Vec<(String, usize)> = Vec::new();
    for message in messages {
        match message {
            Message::User(text) => entries.push(json!({"role": "user", "text": text})),
            Message::Assistant { content, tool_calls } => {
                if let Some(text) = content.as_deref().filter(|text| !text.trim().is_empty()) {
                    entries.push(json!({"role": "assistant", "text": text}));
                }
                for call in tool_calls {
                    calls.push((call.id.clone(), entries.len()));
                    entries.push(json!({"role": "tool", "tool": call.name, "ok": false}));
                }
            }
            Message::Tool { call_id, content } => {
                if let Some((_, at)) = calls.iter().find(|(id, _)| id == call_id) {
                    entries[*at]["ok"] = Value::Bool(!content.starts_with("error"));
                }
            }
            Message::System(_) => {}
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::transcript;
    use crate::llm::{Message, ToolCall};
    use serde_json::json;

    #[test]
    fn the_transcript_shows_messages_answers_and_calls_with_their_outcome() {
        let call = |id: &str| ToolCall { id: id.into(), name: "add_task".into(), arguments: "{}".into() };
        let messages = vec![
            Message::User("add two".into()),
            Message::Assistant { content: None, tool_calls: vec![call("a"), call("b")] },
            Message::Tool { call_id: "a".into(), content: "{\"id\":4}".into() },
            Message::Tool { call_id: "b".into(), content: "error: the page was closed".into() },
            Message::Assistant { content: Some("Added one.".into()), tool_calls: Vec::new() },
        ];
        assert_eq!(
            transcript(&messages),
            vec![
                json!({"role": "user", "text": "add two"}),
                json!({"role": "tool", "tool": "add_task", "ok": true}),
                json!({"role": "tool", "tool": "add_task", "ok": false}),
                json!({"role": "assistant", "text": "Added one."}),
            ]
        );
    }
}
