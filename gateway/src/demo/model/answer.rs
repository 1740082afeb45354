//! What the stand-in model answers, deterministically: after a tool result, a short text that
//! quotes it; otherwise a call of the tool whose name and description best match the last user
//! message (ties go to the first tool), or, when none matches, a text listing what it can do.

use super::arguments;
pub(super) use super::protocol::Answer;
use super::protocol::{ChatBody, WireMessage};
use super::words::{same_word, words};
use serde_json::Value;

/// How much of a tool result the summary quotes.
const QUOTED_CHARS: usize = 300;

/// Decides the answer to `request`.
pub(super) fn answer(request: &ChatBody) -> Answer {
    if let Some(last) = request.messages.last()
        && last.role == "tool"
    {
        return Answer::Text(summary(request, last));
    }
    let message = request.messages.iter().rev().find(|message| message.role == "user").map(WireMessage::text);
    let message = message.unwrap_or_default();
    let said = words(&message);
    let mut best: Option<(usize, usize)> = None;
    for (position, tool) in request.tools.iter().enumerate() {
        let score = score(&said, &tool.function.name, tool.function.description.as_deref().unwrap_or(""));
        if score > 0 && best.is_none_or(|(best_score, _)| score > best_score) {
            best = Some((score, position));
        }
    }
    let Some((_, position)) = best else {
        return Answer::Text(capabilities(request));
    };
    let function = &request.tools[position].function;
    let tool_words = words(&function.name);
    let empty = Value::Null;
    let schema = function.parameters.as_ref().unwrap_or(&empty);
    Answer::Call {
        name: function.name.clone(),
        arguments: Value::Object(arguments::fill(schema, &message, &tool_words)),
    }
}

/// How well a message matches a tool: each message word found in the tool's name counts two,
/// in its description one.
fn score(said: &[String], name: &str, description: &str) -> usize {
    let name = words(name);
    let description = words(description);
    let mut seen: Vec<&String> = Vec::new();
    let mut score = 0;
    for word in said {
        if seen.contains(&word) {
            continue;
        }
        seen.push(word);
        if name.iter().any(|part| same_word(word, part)) {
            score += 2;
        } else if description.iter().any(|part| same_word(word, part)) {
            score += 1;
        }
    }
    score
}

fn summary(request: &ChatBody, result: &WireMessage) -> String {
    let call_id = result.tool_call_id.as_deref().unwrap_or("");
    let tool = request
        .messages
        .iter()
        .flat_map(|message| &message.tool_calls)
        .find(|call| call.id == call_id)
        .map_or("the tool", |call| call.function.name.as_str());
    let text = result.text();
    let quoted: String = text.chars().take(QUOTED_CHARS).collect();
    let more = if text.chars().count() > QUOTED_CHARS { "…" } else { "" };
    format!("Done: {tool} answered “{}{more}”", quoted.trim())
}

fn capabilities(request: &ChatBody) -> String {
    let mut text = String::from(
        "I am Toolgate's demo stand-in model: a deterministic program, not a language model. \
         I call the tool whose name or description matches your words.",
    );
    if request.tools.is_empty() {
        text.push_str(" No tools are available here.");
        return text;
    }
    text.push_str(" I can use:");
    for tool in &request.tools {
        let description = tool.function.description.as_deref().unwrap_or("").trim();
        text.push_str(&format!("\n- {}: {description}", tool.function.name));
    }
    text
}
