//! A turn's place in its conversation (`state::conversations`): what was kept before the turn,
//! how much of it was replayed, and keeping the conversation with what the turn added.

use crate::llm::Message;
use crate::state::conversations::{Conversation, Conversations};
use std::sync::Arc;

/// A turn's place in its conversation (`state::conversations`).
pub struct Memory {
    /// Where conversations are kept.
    pub conversations: Arc<Conversations>,
    /// The conversation's id.
    pub id: String,
    /// The conversation as it was kept before this turn (all of it, not only what is replayed).
    pub earlier: Vec<Message>,
    /// How many messages after the system prompt are the conversation's, replayed: what the
    /// turn adds comes after them.
    pub replayed: usize,
    /// The conversation's turns, this one included.
    pub turns: u32,
}

impl Memory {
    /// Keeps the conversation with what this turn added to it (everything after the system
    /// prompt and the replayed messages), and its placeholders.
    pub(super) fn keep(&self, owner: &str, messages: &[Message], scope: &policy::Placeholders) {
        let added = messages.get(1 + self.replayed..).unwrap_or_default();
        let messages = self.earlier.iter().chain(added).cloned().collect();
        let conversation = Conversation { messages, scope: scope.clone(), turns: self.turns };
        self.conversations.keep(owner, &self.id, conversation);
    }
}
