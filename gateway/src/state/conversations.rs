//! Conversation memory for the page's agent: what earlier turns said, kept on the gateway so the
//! next turn can replay it ("add a task called X", then "now mark it done").
//!
//! A conversation belongs to one owner (user, session and site) and is named by a random id the
//! panel keeps for its browser tab. It holds what the model already saw (the user's messages,
//! the model's answers and tool calls, the tool results, all redacted) and the placeholders those
//! texts use, so a later turn restores `[email 1]` to the same value. Nothing here is ever sent
//! to the site, and nothing is written to disk: the placeholders map back to real values.
//!
//! Bounded everywhere: at most [`MAX_TURNS`] turns and [`MAX_BYTES`] of text per conversation
//! (the oldest turns go first), [`MAX_PER_OWNER`] conversations per owner, [`MAX_KEPT`] in all,
//! forgotten after [`IDLE`] without a turn, and a fresh conversation after [`MAX_LIFETIME_TURNS`]
//! turns, so its placeholders cannot grow without end.

use crate::llm::Message;
use policy::Placeholders;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Most turns a conversation keeps for replay.
pub const MAX_TURNS: usize = 20;
/// Most text a conversation keeps (bytes of message text, arguments and results).
pub const MAX_BYTES: usize = 64 * 1024;
/// Most conversations one owner keeps (one per browser tab, roughly).
pub const MAX_PER_OWNER: usize = 8;
/// Most conversations kept at once.
pub const MAX_KEPT: usize = 10_000;
/// How long a conversation without a turn is kept.
pub const IDLE: Duration = Duration::from_secs(2 * 60 * 60);
/// Turns after which a conversation is not continued (its placeholders are dropped with it).
pub const MAX_LIFETIME_TURNS: u32 = 200;

/// Whether `id` can name a conversation (the gateway issues 24 hex digits).
pub fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// One conversation: its earlier turns and their placeholders.
#[derive(Clone, Default)]
pub struct Conversation {
    /// Everything after the system prompt, oldest first; each turn starts with a user message
    /// (a turn continued on a new page goes on in the same turn).
    pub messages: Vec<Message>,
    /// The placeholders the messages use, with the values they stand for.
    pub scope: Placeholders,
    /// Turns so far, including those no longer kept.
    pub turns: u32,
}

struct Kept {
    owner: String,
    used: Instant,
    conversation: Conversation,
}

/// The conversations, per id.
#[derive(Default)]
pub struct Conversations {
    kept: Mutex<HashMap<String, Kept>>,
}

impl Conversations {
    /// `owner`'s conversation `id`, if it is kept and may go on; `None` for another owner's id,
    /// an unknown or expired one, or one that reached [`MAX_LIFETIME_TURNS`].
    pub fn get(&self, owner: &str, id: &str) -> Option<Conversation> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.get(id)
            .filter(|entry| entry.owner == owner && entry.used.elapsed() < IDLE)
            .filter(|entry| entry.conversation.turns < MAX_LIFETIME_TURNS)
            .map(|entry| entry.conversation.clone())
    }

    /// Keeps `conversation` as `owner`'s conversation `id`, trimmed to its bounds. An id that
    /// belongs to another owner is left alone.
    pub fn keep(&self, owner: &str, id: &str, mut conversation: Conversation) {
        answer_open_calls(&mut conversation.messages);
        trim(&mut conversation.messages);
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.get(id).is_some_and(|entry| entry.owner != owner) {
            return;
        }
        kept.retain(|_, entry| now.duration_since(entry.used) < IDLE);
        kept.remove(id);
        let mine = kept.values().filter(|entry| entry.owner == owner).count();
        if mine >= MAX_PER_OWNER {
            evict_oldest(&mut kept, |entry| entry.owner == owner);
        }
        if kept.len() >= MAX_KEPT {
            evict_oldest(&mut kept, |_| true);
        }
        kept.insert(id.to_owned(), Kept { owner: owner.to_owned(), used: now, conversation });
    }

    /// Forgets `owner`'s conversation `id` ("new conversation" in the panel).
    pub fn forget(&self, owner: &str, id: &str) -> bool {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.get(id).is_some_and(|entry| entry.owner == owner) {
            kept.remove(id);
            return true;
        }
        false
    }
}

fn evict_oldest(kept: &mut HashMap<String, Kept>, among: impl Fn(&Kept) -> bool) {
    let oldest = kept.iter().filter(|(_, entry)| among(entry)).min_by_key(|(_, entry)| entry.used);
    if let Some(id) = oldest.map(|(id, _)| id.clone()) {
        kept.remove(&id);
    }
}

/// The text a message carries, in bytes (what the bounds and the token estimate count).
pub fn message_bytes(message: &Message) -> usize {
    match message {
        Message::System(text) | Message::User(text) => text.len(),
        Message::Assistant { content, tool_calls } => {
            content.as_ref().map_or(0, String::len)
                + tool_calls.iter().map(|call| call.name.len() + call.arguments.len()).sum::<usize>()
        }
        Message::Tool { content, .. } => content.len(),
    }
}

/// Gives every tool call a result: a turn that ended while calls were pending (the page closed,
/// the user stopped it) leaves calls without one, and a model server refuses a conversation
/// whose calls are not all answered.
fn answer_open_calls(messages: &mut Vec<Message>) {
    let mut answered = Vec::with_capacity(messages.len());
    let mut open: Vec<String> = Vec::new();
    for message in messages.drain(..) {
        if let Message::Tool { call_id, .. } = &message {
            open.retain(|id| id != call_id);
        } else {
            close(&mut answered, &mut open);
        }
        if let Message::Assistant { tool_calls, .. } = &message {
            open = tool_calls.iter().map(|call| call.id.clone()).collect();
        }
        answered.push(message);
    }
    close(&mut answered, &mut open);
    *messages = answered;
}

fn close(messages: &mut Vec<Message>, open: &mut Vec<String>) {
    for call_id in open.drain(..) {
        messages.push(Message::Tool { call_id, content: "error: not run: the turn ended first".into() });
    }
}

/// Where each turn starts: the indexes of the user messages (and 0, for a conversation that
/// begins inside a continued turn).
fn turn_starts(messages: &[Message]) -> Vec<usize> {
    let mut starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, message)| matches!(message, Message::User(_)))
        .map(|(at, _)| at)
        .collect();
    if starts.first() != Some(&0) && !messages.is_empty() {
        starts.insert(0, 0);
    }
    starts
}

/// Drops the oldest whole turns until at most [`MAX_TURNS`] and [`MAX_BYTES`] remain. Whole
/// turns, so a tool result never loses the call it answers.
fn trim(messages: &mut Vec<Message>) {
    let starts = turn_starts(messages);
    let mut cut = starts.len().saturating_sub(MAX_TURNS).min(starts.len());
    let mut from = starts.get(cut).copied().unwrap_or(messages.len());
    while messages[from..].iter().map(message_bytes).sum::<usize>() > MAX_BYTES && cut + 1 < starts.len() {
        cut += 1;
        from = starts[cut];
    }
    if messages[from..].iter().map(message_bytes).sum::<usize>() > MAX_BYTES {
        // One turn larger than the bound: nothing of it is kept.
        from = messages.len();
    }
    messages.drain(..from);
}

/// The latest whole turns of `messages` whose estimated tokens fit `budget`, oldest first; the
/// rest is left out of the prompt (it stays in the conversation).
pub fn replay(messages: &[Message], budget: usize) -> &[Message] {
    let mut from = messages.len();
    let mut used = 0;
    for start in turn_starts(messages).into_iter().rev() {
        let tokens: usize = messages[start..from].iter().map(estimated_tokens).sum();
        if used + tokens > budget {
            break;
        }
        used += tokens;
        from = start;
    }
    &messages[from..]
}

/// A cautious token estimate: a token per three bytes of text, plus the message's framing.
pub fn estimated_tokens(message: &Message) -> usize {
    message_bytes(message).div_ceil(3) + 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    fn turn(user: &str, call: Option<&str>, answer: &str) -> Vec<Message> {
        let mut messages = vec![Message::User(user.to_owned())];
        if let Some(name) = call {
            let call = ToolCall { id: format!("{name}-1"), name: name.to_owned(), arguments: "{}".into() };
            messages.push(Message::Assistant { content: None, tool_calls: vec![call] });
            messages.push(Message::Tool { call_id: format!("{name}-1"), content: "ok".into() });
        }
        messages.push(Message::Assistant { content: Some(answer.to_owned()), tool_calls: Vec::new() });
        messages
    }

    fn users(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .filter_map(|message| match message {
                Message::User(text) => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_conversation_is_its_owners_alone() {
        let conversations = Conversations::default();
        let conversation =
            Conversation { messages: turn("add X", Some("add_task"), "done"), ..Default::default() };
        conversations.keep("alice", "c1", conversation);
        assert_eq!(conversations.get("alice", "c1").map(|found| found.messages.len()), Some(4));
        assert!(conversations.get("bob", "c1").is_none());
        conversations.keep("bob", "c1", Conversation::default());
        assert_eq!(
            conversations.get("alice", "c1").map(|found| found.messages.len()),
            Some(4),
            "not taken over"
        );
        assert!(!conversations.forget("bob", "c1"));
        assert!(conversations.forget("alice", "c1"));
        assert!(conversations.get("alice", "c1").is_none());
    }

    #[test]
    fn the_oldest_whole_turns_go_first() {
        let mut messages: Vec<Message> =
            (0..MAX_TURNS + 3).flat_map(|index| turn(&format!("turn {index}"), Some("t"), "ok")).collect();
        trim(&mut messages);
        let kept = users(&messages);
        assert_eq!(kept.len(), MAX_TURNS);
        assert_eq!(kept[0], "turn 3");
        assert!(matches!(messages[0], Message::User(_)), "a turn is never cut in the middle");

        let big = "x".repeat(MAX_BYTES / 3);
        let mut messages: Vec<Message> =
            (0..4).flat_map(|index| turn(&format!("{index}{big}"), None, "ok")).collect();
        trim(&mut messages);
        assert_eq!(users(&messages).len(), 2, "bytes bound the kept turns too");
        assert!(messages.iter().map(message_bytes).sum::<usize>() <= MAX_BYTES);
    }

    #[test]
    fn replay_keeps_the_latest_turns_within_the_budget() {
        let messages: Vec<Message> =
            (0..5).flat_map(|index| turn(&format!("turn {index}"), Some("t"), "ok")).collect();
        let one_turn: usize = turn("turn 0", Some("t"), "ok").iter().map(estimated_tokens).sum();
        let replayed = replay(&messages, one_turn * 2 + 1);
        assert_eq!(users(replayed), vec!["turn 3", "turn 4"]);
        assert!(replay(&messages, 0).is_empty());
        assert_eq!(replay(&messages, usize::MAX).len(), messages.len());
    }

    #[test]
    fn calls_a_turn_left_open_get_a_result() {
        let call = |id: &str| ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() };
        let mut messages = vec![
            Message::User("go".into()),
            Message::Assistant { content: None, tool_calls: vec![call("a"), call("b")] },
            Message::Tool { call_id: "a".into(), content: "ok".into() },
        ];
        answer_open_calls(&mut messages);
        assert_eq!(messages.len(), 4);
        assert!(
            matches!(&messages[3], Message::Tool { call_id, content } if call_id == "b" && content.starts_with("error: not run"))
        );
        let before = messages.len();
        answer_open_calls(&mut messages);
        assert_eq!(messages.len(), before, "a whole conversation is left as it is");
    }

    #[test]
    fn a_conversation_is_not_continued_past_its_lifetime() {
        let conversations = Conversations::default();
        let conversation = Conversation { turns: MAX_LIFETIME_TURNS, ..Default::default() };
        conversations.keep("alice", "c1", conversation);
        assert!(conversations.get("alice", "c1").is_none());
    }

    #[test]
    fn an_owner_keeps_a_bounded_number_of_conversations() {
        let conversations = Conversations::default();
        for index in 0..=MAX_PER_OWNER {
            conversations.keep("alice", &format!("c{index}"), Conversation::default());
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(conversations.get("alice", "c0").is_none(), "the oldest went");
        assert!(conversations.get("alice", &format!("c{MAX_PER_OWNER}")).is_some());
    }
}
