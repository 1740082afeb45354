//! The Server-Sent Events stream of one agent turn: typed events, encoded one per SSE message,
//! sent through a bounded channel that the response body drains.
//!
//! When the browser goes away the body is dropped, every later send fails, and the turn stops
//! (dropping its model stream, which cancels the model call).

use crate::http::body::ProxyBody;
use bytes::Bytes;
use http::Response;
use serde::Serialize;
use tokio::sync::mpsc;

/// Events a turn sends to the page (`event:` is the variant name in snake case).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TurnEvent {
    /// The turn started: its id (for `/result`) and what the model was shown and not shown.
    Started {
        /// The turn's id.
        turn_id: String,
        /// The conversation the turn belongs to (the panel sends it with the next turn).
        conversation_id: String,
        /// Tool names the model may call.
        tools: Vec<String>,
        /// Context names shown to the model.
        contexts: Vec<String>,
        /// What the policy kept from the model, with reasons.
        withheld: Vec<Withheld>,
    },
    /// A piece of the model's answer.
    Text {
        /// The text.
        delta: String,
    },
    /// The page must run this tool and post the result to `/.toolgate/agent/result`.
    ToolCall {
        /// The call's id.
        call_id: String,
        /// The tool's catalog name.
        tool: String,
        /// The arguments, as the gateway will hold the page to them.
        args: serde_json::Value,
        /// For an approved form tool: the token its submission must carry.
        #[serde(skip_serializing_if = "Option::is_none")]
        approval_token: Option<String>,
    },
    /// The model's arguments do not fit the tool's input schema; the model was asked to fix them.
    ToolInvalid {
        /// The call's id.
        call_id: String,
        /// The tool's catalog name.
        tool: String,
        /// Where the arguments break the tool's schema (paths and rules, no values).
        problems: String,
    },
    /// The model asked for a tool the policy refuses; the model was told why.
    ToolDenied {
        /// The call's id.
        call_id: String,
        /// The tool (model-facing name when it is not in the catalog).
        tool: String,
        /// Why.
        reason: String,
    },
    /// A call waits for a human.
    ApprovalRequired {
        /// The approval's id (`/.toolgate/agent/approvals/{id}`).
        approval_id: String,
        /// The call it is for.
        call_id: String,
        /// The tool.
        tool: String,
        /// The canonical arguments the gateway will execute.
        args: serde_json::Value,
        /// `user` (the user approves in the panel) or the approving group.
        approver: String,
        /// Set when nobody else who may decide a group approval is signed in: says so, and how
        /// long the call waits.
        #[serde(skip_serializing_if = "Option::is_none")]
        notice: Option<String>,
    },
    /// A pending approval was decided (or expired).
    ApprovalResolved {
        /// The approval's id.
        approval_id: String,
        /// `approved`, `denied` or `expired`.
        decision: String,
    },
    /// The turn failed; `code` is a bounded reason.
    Error {
        /// `llm_unreachable`, `llm_timeout`, `rate_limited`, `tool_timeout`…
        code: String,
        /// What the panel shows.
        message: String,
    },
    /// The turn ended.
    Done {
        /// Model rounds used.
        rounds: u32,
        /// Tokens in and out, when the model reported them.
        input_tokens: u64,
        /// Tokens out.
        output_tokens: u64,
    },
}

/// A tool or context kept from the model.
#[derive(Debug, Clone, Serialize)]
pub struct Withheld {
    /// `tool` or `context`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// The policy's reason.
    pub reason: String,
}

/// The sending half: a turn writes events here.
#[derive(Clone)]
pub struct EventSender(mpsc::Sender<Bytes>);

impl EventSender {
    /// Sends one event; `false` once the browser is gone.
    pub async fn send(&self, event: &TurnEvent) -> bool {
        let name = serde_json::to_value(event)
            .ok()
            .and_then(|value| value.get("event").and_then(|name| name.as_str().map(str::to_owned)))
            .unwrap_or_else(|| "message".to_owned());
        let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
        self.0.send(Bytes::from(crate::http::sse_frame(Some(&name), &data))).await.is_ok()
    }

    /// Whether the browser has gone away.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    /// Resolves once the browser has gone away (its response body was dropped).
    pub async fn closed(&self) {
        self.0.closed().await;
    }
}

/// A new event stream: the sender for the turn, and the response for the browser.
pub fn channel() -> (EventSender, Response<ProxyBody>) {
    let (sender, response) = crate::http::body::event_stream();
    (EventSender(sender), response)
}
