//! Every tool call in the model's answer, decided again with its arguments
//! (`PolicyView::tool_call`) before anything goes back to the client: allowed calls are returned
//! for execution with the arguments exactly as the policy saw them; denied calls, calls of tools
//! never offered, calls with unreadable arguments and calls that need a human's approval are
//! removed and explained in the answer's text. A call that needs approval is never returned:
//! approvals happen in the assistant panel on the site, where the gateway can hold the call.

use super::exchange::Exchange;
use crate::llm::ToolCall;
use policy::{Approver, ToolDecision};

/// The calls the client may execute, and the explanations of the ones it may not.
#[derive(Debug, Default)]
pub struct Checked {
    /// Allowed calls, arguments re-serialised from what the policy decided on.
    pub allowed: Vec<ToolCall>,
    /// One sentence per removed call.
    pub refusals: Vec<String>,
}

impl Checked {
    /// The refusals as text to append to the answer (empty when none).
    pub fn refusal_text(&self) -> String {
        self.refusals.join("\n")
    }
}

/// Decides each call, audits each decision, and sorts them.
pub async fn check(exchange: &Exchange, calls: Vec<ToolCall>) -> Checked {
    let mut checked = Checked::default();
    for call in calls {
        match decide(exchange, &call).await {
            Ok(arguments) => checked.allowed.push(ToolCall { arguments, ..call }),
            Err(refusal) => checked.refusals.push(refusal),
        }
    }
    checked
}

/// The arguments to return for an allowed call, or the sentence explaining its removal.
async fn decide(exchange: &Exchange, call: &ToolCall) -> Result<String, String> {
    let name = &call.name;
    let Some(reference) = exchange.offered.get(name) else {
        exchange.record_call(name, "deny", "not_offered", None).await;
        exchange.count_decision("deny");
        return Err(format!(
            "[toolgate] The model asked to call `{}`, which is not available to you here; the call was removed.",
            super::request::cap(name, 64)
        ));
    };
    let arguments = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
    let mut args = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(args @ serde_json::Value::Object(_)) => args,
        _ => {
            exchange.record_call(name, "deny", "invalid_arguments", None).await;
            exchange.count_decision("deny");
            return Err(format!(
                "[toolgate] The model's call of `{name}` had arguments that are not a JSON object; the call was removed."
            ));
        }
    };
    // The model wrote placeholders; the client sent the originals and gets them back. The policy
    // decides on the arguments the client will execute.
    exchange.scope.restore_json(&mut args);
    let (decision, explanation) = exchange.view.tool_call(reference, &args);
    let explanation = serde_json::to_value(&explanation).ok();
    exchange.count_decision(decision.label());
    match decision {
        ToolDecision::Allow => {
            exchange.record_call(name, "allow", "policy", explanation).await;
            // The client executes exactly the arguments the policy decided on: re-serialised,
            // so a parser that reads duplicate keys differently cannot run something else.
            Ok(args.to_string())
        }
        ToolDecision::Deny { reason } => {
            exchange.record_call(name, "deny", reason.label(), explanation).await;
            Err(format!("[toolgate] The call of `{name}` was refused by policy ({reason}); it was removed."))
        }
        ToolDecision::AskApproval { approver } => {
            exchange.record_call(name, "deny", "approval_required", explanation).await;
            let site = &exchange.site_origin;
            Err(match approver {
                Approver::User => format!(
                    "[toolgate] The call of `{name}` needs your approval, which cannot be given through this API; \
                     the call was removed and not executed. Ask for it in the assistant panel on {site}, \
                     where you can approve it."
                ),
                Approver::Group(group) => format!(
                    "[toolgate] The call of `{name}` needs approval from the group `{group}`, which cannot be \
                     given through this API; the call was removed and not executed. Ask for it in the \
                     assistant panel on {site}, where the approval request goes to that group."
                ),
            })
        }
    }
}
