//! What the stand-in model answers, deterministically: after a tool result, a short text that
//! quotes it; otherwise a call of the tool whose name and description best match the last user
//! message (ties go to the first tool), when it matches well: every word of its name said, or at
//! least two words of the message found in its name and description. Otherwise it says no tool
//! fits and lists what it can do, rather than call a tool that shares one word with the request
//! ("mark task 4 as done" is not `add_task`). A required value the message leaves out while
//! referring back ("now mark it done") comes from the conversation (`recall`), never made up.

pub(super) use super::protocol::Answer;
use super::protocol::{ChatBody, WireMessage};
use super::words::{same_word, words};
use super::{arguments, recall};
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
    let fitting = best.filter(|(_, position)| {
        let function = &request.tools[*position].function;
        fits(&said, &function.name, function.description.as_deref().unwrap_or(""))
    });
    let Some((_, position)) = fitting else {
        let mut text = capabilities(request);
        if best.is_some() {
            text.insert_str(0, "No tool here fits that request well, so I called none. ");
        }
        return Answer::Text(text);
    };
    let function = &request.tools[position].function;
    let tool_words = words(&function.name);
    let empty = Value::Null;
    let schema = function.parameters.as_ref().unwrap_or(&empty);
    let mut arguments = arguments::fill(schema, &message, &tool_words);
    if recall::refers_back(&message) {
        // "Now mark it done": what the message leaves out, the conversation may say.
        for name in required(schema) {
            if !arguments.contains_key(name)
                && let Some(value) = recall::recall(request, name)
            {
                arguments.insert(name.to_owned(), value);
            }
        }
    }
    // A value it did not find is asked for, never made up.
    let missing: Vec<String> = required(schema)
        .filter(|name| !arguments.contains_key(*name))
        .map(|name| describe(schema, name))
        .collect();
    if !missing.is_empty() {
        return Answer::Text(format!(
            "To call {} I need {}. Say them in your request.",
            function.name,
            missing.join(" and ")
        ));
    }
    Answer::Call { name: function.name.clone(), arguments: Value::Object(arguments) }
}

/// The names of the schema's required properties.
fn required(schema: &Value) -> impl Iterator<Item = &str> {
    schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
}

/// `name (its description)`, for asking for a missing value.
fn describe(schema: &Value, name: &str) -> String {
    let description =
        schema.get("properties").and_then(|properties| properties.get(name)?.get("description")?.as_str());
    match description.map(str::trim).filter(|text| !text.is_empty()) {
        Some(description) => format!("{name} ({description})"),
        None => name.to_owned(),
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

/// Whether a message matches a tool well: it says every word of the tool's name, or two of its
/// words are found in the name and description together.
fn fits(said: &[String], name: &str, description: &str) -> bool {
    let name = words(name);
    let described = words(description);
    let all_named = !name.is_empty() && name.iter().all(|part| said.iter().any(|word| same_word(word, part)));
    let mut found: Vec<&String> =
        said.iter().filter(|word| name.iter().chain(&described).any(|part| same_word(word, part))).collect();
    found.sort_unstable();
    found.dedup();
    all_named || found.len() >= 2
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
