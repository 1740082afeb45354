//! Assembles tool calls from the pieces servers stream. OpenAI, vLLM and llama.cpp send the id
//! and name first and the arguments in pieces, keyed by `index`; some servers omit `index`,
//! repeat the `id` on every piece, reuse index 0 for parallel calls, or send the arguments as
//! a JSON object. Each of those is read as the server meant it, and the result is bounded.

use super::wire::ToolCallDelta;
use super::{LlmError, ToolCall};
use serde_json::Value;

/// The most tool calls one answer may make.
pub(crate) const MAX_TOOL_CALLS: usize = 64;
/// The most bytes of arguments (all calls together) one answer may carry.
pub(crate) const MAX_ARGUMENT_BYTES: usize = 1024 * 1024;

/// Tool calls being assembled.
#[derive(Debug, Default)]
pub(crate) struct ToolCallAssembler {
    calls: Vec<ToolCall>,
    /// For each position in `calls`, the index the server gave it (if any).
    indexes: Vec<Option<usize>>,
    argument_bytes: usize,
}

impl ToolCallAssembler {
    /// Adds one piece.
    pub(crate) fn push(&mut self, delta: ToolCallDelta) -> Result<(), LlmError> {
        let position = self.position_for(&delta)?;
        let call = &mut self.calls[position];
        if let Some(id) = delta.id.filter(|id| !id.is_empty())
            && call.id.is_empty()
        {
            call.id = id;
        }
        let mut added = 0;
        if let Some(name) = delta.function.name.filter(|name| !name.is_empty()) {
            // The name comes whole; servers that repeat it send it unchanged.
            if call.name.is_empty() {
                added += name.len();
                call.name = name;
            } else if call.name != name {
                added += name.len();
                call.name.push_str(&name);
            }
        }
        let piece = match delta.function.arguments {
            Some(Value::String(piece)) => piece,
            Some(Value::Null) | None => String::new(),
            Some(object) => object.to_string(),
        };
        self.argument_bytes += added + piece.len();
        if self.argument_bytes > MAX_ARGUMENT_BYTES {
            return Err(LlmError::Protocol(format!("tool call arguments exceed {MAX_ARGUMENT_BYTES} bytes")));
        }
        call.arguments.push_str(&piece);
        Ok(())
    }

    /// The assembled calls; a call without a name is malformed and fails the answer.
    pub(crate) fn finish(self) -> Result<Vec<ToolCall>, LlmError> {
        self.calls
            .into_iter()
            .enumerate()
            .map(|(position, mut call)| {
                if call.name.is_empty() {
                    return Err(LlmError::Protocol("a tool call has no function name".into()));
                }
                if call.id.is_empty() {
                    call.id = format!("call_{position}");
                }
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                Ok(call)
            })
            .collect()
    }

    /// Which call a piece belongs to, opening a new one when it starts a call.
    fn position_for(&mut self, delta: &ToolCallDelta) -> Result<usize, LlmError> {
        let id = delta.id.as_deref().filter(|id| !id.is_empty());
        let found = match delta.index {
            // The latest call with this index, unless the piece carries another call's id
            // (servers that number every parallel call 0).
            Some(index) => self.indexes.iter().rposition(|known| *known == Some(index)).filter(|&position| {
                id.is_none_or(|id| self.calls[position].id.is_empty() || self.calls[position].id == id)
            }),
            // Without an index: the last call, unless the piece carries a new id.
            None => self.calls.len().checked_sub(1).filter(|&last| {
                id.is_none_or(|id| self.calls[last].id.is_empty() || self.calls[last].id == id)
            }),
        };
        if let Some(position) = found {
            return Ok(position);
        }
        if self.calls.len() == MAX_TOOL_CALLS {
            return Err(LlmError::Protocol(format!("an answer made more than {MAX_TOOL_CALLS} tool calls")));
        }
        self.calls.push(ToolCall { id: String::new(), name: String::new(), arguments: String::new() });
        self.indexes.push(delta.index);
        Ok(self.calls.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(deltas: &[&str]) -> Result<Vec<ToolCall>, LlmError> {
        let mut assembler = ToolCallAssembler::default();
        for delta in deltas {
            assembler.push(serde_json::from_str(delta).expect("test delta"))?;
        }
        assembler.finish()
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn interleaved_indexed_pieces_as_openai_and_vllm_send_them() {
        let calls = assemble(&[
            r#"{"index":0,"id":"call_a","type":"function","function":{"name":"search","arguments":""}}"#,
            r#"{"index":0,"function":{"arguments":"{\"q\":"}}"#,
            r#"{"index":1,"id":"call_b","type":"function","function":{"name":"book","arguments":"{\"id\""}}"#,
            r#"{"index":0,"function":{"arguments":"\"rome\"}"}}"#,
            r#"{"index":1,"function":{"arguments":": 7}"}}"#,
        ]);
        assert_eq!(
            calls.ok(),
            Some(vec![call("call_a", "search", r#"{"q":"rome"}"#), call("call_b", "book", r#"{"id": 7}"#)])
        );
    }

    #[test]
    fn pieces_without_index_or_with_repeated_ids_or_reused_index() {
        // No index (older Ollama), a repeated id on every piece (LiteLLM), arguments as an object.
        let calls = assemble(&[
            r#"{"id":"x1","function":{"name":"a","arguments":"{\"n\":"}}"#,
            r#"{"id":"x1","function":{"arguments":"1}"}}"#,
            r#"{"id":"x2","function":{"name":"b","arguments":{"m":2}}}"#,
            r#"{"index":0,"id":"x3","function":{"name":"c"}}"#,
        ]);
        assert_eq!(
            calls.ok(),
            Some(vec![call("x1", "a", r#"{"n":1}"#), call("x2", "b", r#"{"m":2}"#), call("x3", "c", "{}")])
        );
    }

    #[test]
    fn missing_ids_are_generated_and_nameless_calls_fail() {
        assert_eq!(
            assemble(&[r#"{"index":0,"function":{"name":"a","arguments":"{}"}}"#]).ok(),
            Some(vec![call("call_0", "a", "{}")])
        );
        assert!(matches!(
            assemble(&[r#"{"index":0,"function":{"arguments":"{}"}}"#]),
            Err(LlmError::Protocol(_))
        ));
    }

    #[test]
    fn too_many_calls_or_too_much_argument_text_fail() {
        let many: Vec<String> =
            (0..=MAX_TOOL_CALLS).map(|i| format!(r#"{{"index":{i},"function":{{"name":"t"}}}}"#)).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(matches!(assemble(&many), Err(LlmError::Protocol(_))));
        let piece = format!(
            r#"{{"index":0,"function":{{"name":"t","arguments":"{}"}}}}"#,
            "a".repeat(MAX_ARGUMENT_BYTES)
        );
        assert!(matches!(assemble(&[&piece]), Err(LlmError::Protocol(_))));
    }
}
