//! What the stand-in takes from the conversation: a required value the user's message leaves
//! out, when the message refers back to something ("now mark it done", "delete that one").
//!
//! The latest earlier call comes first: its result, read as JSON, is searched for an object that
//! agrees with every argument the call was given and has a field of the wanted name (the task
//! `add_task` just created, found by its title, gives its `id`); failing that, the call's own
//! argument of that name. Nothing is guessed: no such value means the stand-in asks for it.

use super::protocol::{ChatBody, WireMessage};
use super::words::all_words;
use serde_json::{Map, Value};

/// Words that point back at something said before.
const BACK_REFERENCES: &[&str] = &["it", "its", "that", "them", "these", "this", "those"];

/// Whether `message` refers back to something said before.
pub(super) fn refers_back(message: &str) -> bool {
    all_words(message).iter().any(|word| BACK_REFERENCES.contains(&word.as_str()))
}

/// The value of `name` the conversation gives, from the latest call that has one.
pub(super) fn recall(request: &ChatBody, name: &str) -> Option<Value> {
    let calls = request.messages.iter().rev().flat_map(|message| message.tool_calls.iter().rev());
    for call in calls {
        let arguments: Map<String, Value> = call
            .function
            .arguments
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default();
        let result = request
            .messages
            .iter()
            .find(|message| {
                message.role == "tool" && message.tool_call_id.as_deref() == Some(call.id.as_str())
            })
            .map(WireMessage::text)
            .and_then(|text| serde_json::from_str::<Value>(&text).ok());
        let from_result = result.as_ref().and_then(|result| matching(result, &arguments, name));
        if let Some(value) = from_result.or_else(|| arguments.get(name).cloned()) {
            return Some(value);
        }
    }
    None
}

/// The last object in `value` (itself, or nested) that has `name` and agrees with `arguments`
/// on every field they share; its `name`.
fn matching(value: &Value, arguments: &Map<String, Value>, name: &str) -> Option<Value> {
    match value {
        Value::Array(items) => items.iter().rev().find_map(|item| matching(item, arguments, name)),
        Value::Object(fields) => {
            let agrees = arguments
                .iter()
                .filter(|(key, _)| key.as_str() != name)
                .all(|(key, wanted)| fields.get(key).is_none_or(|found| found == wanted));
            let shares = arguments.keys().any(|key| key != name && fields.contains_key(key));
            match fields.get(name) {
                Some(found) if agrees && (shares || arguments.is_empty()) => Some(found.clone()),
                _ => fields.values().rev().find_map(|field| matching(field, arguments, name)),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{recall, refers_back};
    use crate::demo::model::protocol::ChatBody;
    use serde_json::json;

    fn conversation(messages: serde_json::Value) -> ChatBody {
        serde_json::from_value(json!({"messages": messages})).expect("a chat body")
    }

    #[test]
    fn the_task_just_added_gives_its_id() {
        let request = conversation(json!([
            {"role": "user", "content": "Add a task called \"Water the plants\""},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "add_task", "arguments": "{\"title\":\"Water the plants\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "[{\"id\":1,\"title\":\"Plan\",\"done\":false},{\"id\":4,\"title\":\"Water the plants\",\"done\":false}]"},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "now mark it done"},
        ]));
        assert_eq!(recall(&request, "id"), Some(json!(4)));
        assert!(refers_back("now mark it done") && !refers_back("mark task 4 done"));
    }

    #[test]
    fn a_call_of_its_own_argument_is_recalled_and_nothing_is_made_up() {
        let request = conversation(json!([
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "complete_task", "arguments": "{\"id\":3}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "error: the page was closed"},
            {"role": "user", "content": "delete it"},
        ]));
        assert_eq!(recall(&request, "id"), Some(json!(3)));
        assert_eq!(recall(&request, "title"), None);
    }
}
