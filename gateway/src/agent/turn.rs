//! One agent turn: the bounded loop between the model and the page.
//!
//! Each round streams the model's answer to the page; every tool call the model makes is checked
//! with the policy at the enforcement point (`PolicyView::tool_call`, arguments included):
//! denied → an error result goes back to the model and the user sees why; approval needed → the
//! call waits, bounded, for a human; allowed → the page runs it and posts the result, which is
//! redacted and capped before the model sees it. Every step is audited.

use super::approval;
use super::context::TurnContext;
use super::prompt::{self, ExposedTool};
use super::sse::{EventSender, TurnEvent};
use crate::approvals;
use crate::audit::event::{AuditEvent, EventKind};
use crate::http::hex;
use crate::llm::{ChatEvent, ChatRequest, Message, ToolCall};
use crate::state::continuations::Continuation;
use crate::state::turns::ToolOutcome;
use policy::ToolDecision;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What the loop hands back so the caller can charge the user's token budget.
pub struct TurnUsage {
    /// Tokens in and out.
    pub tokens: u64,
}

/// Runs the turn until the model stops calling tools, a limit is hit, or the browser leaves.
pub async fn run(
    mut turn: TurnContext,
    events: EventSender,
    mut results: mpsc::Receiver<ToolOutcome>,
) -> TurnUsage {
    let (mut input_tokens, mut output_tokens) = (0, 0);
    let mut messages = std::mem::take(&mut turn.prepared.messages);
    let mut scope = std::mem::take(&mut turn.prepared.scope);
    let mut rounds = 0;
    loop {
        rounds += 1;
        let started = Instant::now();
        let request = ChatRequest {
            messages: messages.clone(),
            tools: turn.prepared.tools.clone(),
            ..ChatRequest::default()
        };
        // A browser that leaves while the model is silent (thinking, or stuck) must not hold
        // the model call and the user's turn slot until a model timeout: dropping the round
        // drops the model stream, which cancels the call.
        let round = tokio::select! {
            round = model_round(&turn, request, &events) => round,
            () = events.closed() => Err(("client_gone".into(), "the page was closed".into())),
        };
        let answer = match round {
            Ok(answer) => answer,
            Err(code_and_message) => {
                let (code, message) = code_and_message;
                turn.metrics.llm_calls.with_label_values(&[turn.owner.site.as_str(), code.as_str()]).inc();
                audit_llm(&turn, None, started, &code).await;
                events.send(&TurnEvent::Error { code, message }).await;
                break;
            }
        };
        input_tokens += answer.input_tokens;
        output_tokens += answer.output_tokens;
        turn.metrics.llm_calls.with_label_values(&[turn.owner.site.as_str(), "ok"]).inc();
        turn.metrics.llm_tokens.with_label_values(&["input"]).inc_by(answer.input_tokens);
        turn.metrics.llm_tokens.with_label_values(&["output"]).inc_by(answer.output_tokens);
        turn.metrics.llm_latency.observe(started.elapsed().as_secs_f64());
        audit_llm(&turn, Some(&answer), started, "ok").await;
        messages.push(Message::Assistant {
            content: (!answer.text.is_empty()).then(|| answer.text.clone()),
            tool_calls: answer.tool_calls.clone(),
        });
        if answer.tool_calls.is_empty() || events.is_closed() {
            break;
        }
        for (index, call) in answer.tool_calls.iter().enumerate() {
            let reply = handle_call(&turn, call, &events, &mut results, &mut scope).await;
            messages.push(Message::Tool { call_id: call.id.clone(), content: reply.content });
            if events.is_closed() || reply.page_left {
                // The page went away. Calls after this one never ran; the conversation keeps
                // the turn so far. When a form submission took the page away and the site
                // answered, the next page continues the turn with what the site said.
                for skipped in &answer.tool_calls[index + 1..] {
                    let content = "error: not run: the page changed before this call".to_owned();
                    messages.push(Message::Tool { call_id: skipped.id.clone(), content });
                }
                turn.memory.keep(&turn.owner.key(), &messages, &scope);
                if let Some(outcome) = reply.site_answer {
                    let conversation = messages.split_off(1);
                    let tool = turn
                        .prepared
                        .names
                        .get(&call.name)
                        .map_or_else(|| call.name.clone(), |exposed| exposed.catalog_name.clone());
                    let conversation_id = turn.memory.id.clone();
                    let continuation = Continuation { conversation, scope, conversation_id, tool, outcome };
                    turn.continuations.keep(&turn.owner.key(), continuation);
                }
                return TurnUsage { tokens: input_tokens + output_tokens };
            }
        }
        if rounds >= turn.max_rounds {
            let message = format!("stopped after {} tool rounds; ask again to continue", turn.max_rounds);
            events.send(&TurnEvent::Error { code: "round_limit".into(), message }).await;
            break;
        }
    }
    turn.memory.keep(&turn.owner.key(), &messages, &scope);
    events.send(&TurnEvent::Done { rounds, input_tokens, output_tokens }).await;
    TurnUsage { tokens: input_tokens + output_tokens }
}

/// One model answer.
struct Answer {
    text: String,
    tool_calls: Vec<ToolCall>,
    input_tokens: u64,
    output_tokens: u64,
}

/// Streams one model answer to the page; errors as (reason, message for the user).
async fn model_round(
    turn: &TurnContext,
    request: ChatRequest,
    events: &EventSender,
) -> Result<Answer, (String, String)> {
    let mut stream =
        turn.llm.stream(request).await.map_err(|error| (error.reason().to_owned(), error.user_message()))?;
    let mut answer =
        Answer { text: String::new(), tool_calls: Vec::new(), input_tokens: 0, output_tokens: 0 };
    while let Some(event) = stream.next().await {
        match event.map_err(|error| (error.reason().to_owned(), error.user_message()))? {
            ChatEvent::TextDelta(delta) => {
                answer.text.push_str(&delta);
                if !events.send(&TurnEvent::Text { delta }).await {
                    // The browser left: dropping the stream cancels the model call.
                    return Err(("client_gone".into(), "the page was closed".into()));
                }
            }
            ChatEvent::ToolCalls(calls) => answer.tool_calls = calls,
            ChatEvent::Done { usage, .. } => {
                if let Some(usage) = usage {
                    answer.input_tokens = usage.input_tokens;
                    answer.output_tokens = usage.output_tokens;
                }
            }
        }
    }
    Ok(answer)
}

/// What one call gives the model.
struct Reply {
    /// The text the model gets as the call's result.
    content: String,
    /// For a form tool the site answered: `accepted`, `rejected_by_site`, …
    site_answer: Option<&'static str>,
    /// The call's form submission replaced the page: the turn goes on from the next one.
    page_left: bool,
}

impl From<String> for Reply {
    fn from(content: String) -> Self {
        Self { content, site_answer: None, page_left: false }
    }
}

/// Checks and carries out one tool call.
async fn handle_call(
    turn: &TurnContext,
    call: &ToolCall,
    events: &EventSender,
    results: &mut mpsc::Receiver<ToolOutcome>,
    scope: &mut policy::Placeholders,
) -> Reply {
    let call_id = format!("{}-{}", turn.id, hex(&crate::support::random::random_bytes::<6>()));
    let Some(exposed) = turn.prepared.names.get(&call.name) else {
        // The model named a tool it was never offered (a denied one, or an invention).
        let reason = "this tool is not available to you";
        record_call(turn, &call.name, "deny", "not_offered", None).await;
        events.send(&TurnEvent::ToolDenied { call_id, tool: call.name.clone(), reason: reason.into() }).await;
        return format!("error: {reason}").into();
    };
    let parsed = serde_json::from_str(if call.arguments.trim().is_empty() { "{}" } else { &call.arguments });
    let Ok(args) = parsed else {
        let problems = vec!["the arguments are not valid JSON".to_owned()];
        return invalid_arguments(turn, exposed, call_id, &problems, events, scope).await;
    };
    // The model wrote placeholders; the page (which holds the values) and the policy's
    // conditions get the originals back. Placeholders this turn never issued stay as written.
    let mut args = integral_numbers(args);
    scope.restore_json(&mut args);
    // The tool's own schema first: a call it would refuse never reaches the policy's conditions,
    // an approval card or the page.
    let problems = exposed.schema.problems(&args);
    if !problems.is_empty() {
        return invalid_arguments(turn, exposed, call_id, &problems, events, scope).await;
    }
    let canonical = approvals::canonical_args(&args);
    let (decision, explained) = turn.view.tool_call(&exposed.reference, &args);
    let explanation = serde_json::to_value(&explained).ok();
    turn.metrics.tool_decisions.with_label_values(&[turn.owner.site.as_str(), decision.label()]).inc();
    let token = match decision {
        ToolDecision::Deny { reason } => {
            record_call(turn, &exposed.catalog_name, "deny", reason.label(), explanation).await;
            let reason = reason.to_string();
            events
                .send(&TurnEvent::ToolDenied {
                    call_id,
                    tool: exposed.catalog_name.clone(),
                    reason: reason.clone(),
                })
                .await;
            return format!("error: denied by policy ({reason})").into();
        }
        ToolDecision::AskApproval { approver } => {
            let why = approval::reason(&explained);
            record_call(turn, &exposed.catalog_name, "ask_approval", "policy", explanation).await;
            match approval::ask(turn, exposed, &call_id, &args, &canonical, (approver, &why), events).await {
                Ok(token) => Some(token),
                Err(message) => return message.into(),
            }
        }
        ToolDecision::Allow => {
            record_call(turn, &exposed.catalog_name, "allow", "policy", explanation).await;
            None
        }
    };
    let sent = TurnEvent::ToolCall {
        call_id: call_id.clone(),
        tool: exposed.catalog_name.clone(),
        args: args.clone(),
        approval_token: token,
    };
    if !events.send(&sent).await {
        return String::from(PAGE_CLOSED).into();
    }
    let waited = wait_for_call(turn, &call_id, exposed.form.is_some(), events, results).await;
    let site_answer = waited.as_ref().and_then(|(_, answer)| *answer);
    let page_left = site_answer.is_some() && turn.outcomes.navigated(&turn.owner.key(), &call_id).await;
    let content = match waited.map(|(result, _)| result) {
        Some(Ok(result)) => prompt::tool_result(&turn.view, &result, scope).0,
        // Page and site text: redacted like every other string the model reads.
        Some(Err(error)) => {
            let redacted = turn.view.redact(&error, scope);
            format!("error from the page: {}", prompt::cap(&redacted.text, MAX_ERROR))
        }
        None if events.is_closed() => PAGE_CLOSED.into(),
        None => {
            events
                .send(&TurnEvent::Error {
                    code: "tool_timeout".into(),
                    message: format!("{} did not answer in time", exposed.catalog_name),
                })
                .await;
            "error: the page did not answer in time".into()
        }
    };
    Reply { content, site_answer, page_left }
}

/// A call whose arguments do not fit the tool: audited and counted as refused, shown to the user,
/// and sent back to the model to fix. The problems name paths and rules, never values, and are
/// redacted in the turn's scope like everything else the model reads.
async fn invalid_arguments(
    turn: &TurnContext,
    exposed: &ExposedTool,
    call_id: String,
    problems: &[String],
    events: &EventSender,
    scope: &mut policy::Placeholders,
) -> Reply {
    let problems = prompt::cap(&turn.view.redact(&problems.join("; "), scope).text, MAX_ERROR);
    turn.metrics.tool_decisions.with_label_values(&[turn.owner.site.as_str(), "deny"]).inc();
    record_call(turn, &exposed.catalog_name, "deny", "invalid_arguments", None).await;
    let tool = exposed.catalog_name.clone();
    events.send(&TurnEvent::ToolInvalid { call_id, tool, problems: problems.clone() }).await;
    format!("error: the arguments do not fit the tool's input schema ({problems}); call it again with arguments that fit")
        .into()
}

/// What the model is told when the page went away during a call.
const PAGE_CLOSED: &str = "error: the page was closed";
/// Longest error text from a page or a site passed to the model.
const MAX_ERROR: usize = 1000;
/// How long a turn whose page left waits for a form submission to reach the site.
const LEAVING_ARRIVAL: Duration = Duration::from_secs(5);
/// How long, once the site answered a form call, the turn waits to learn whether the page is
/// still there (its own result) or gone (its event stream closed).
const PAGE_GRACE: Duration = Duration::from_secs(3);

/// Waits for a call's result: the page's answer, or for a form tool the site's answer to its
/// submission, whichever comes first. When the page goes away, a plain call ends at once; a form
/// call waits (bounded) for the submission that navigated it away. `None`: no answer in time,
/// or the page left.
async fn wait_for_call(
    turn: &TurnContext,
    call_id: &str,
    is_form: bool,
    events: &EventSender,
    results: &mut mpsc::Receiver<ToolOutcome>,
) -> Option<(Result<serde_json::Value, String>, Option<&'static str>)> {
    let owner = &turn.owner.key();
    let deadline = tokio::time::Instant::now() + turn.tool_timeout;
    let from_site = |arrival| async move {
        let answer = if is_form { turn.outcomes.wait(owner, call_id, arrival, deadline).await } else { None };
        answer.map(|answer| (answer.tool_result(), Some(answer.label())))
    };
    let answered = tokio::select! {
        waited = wait_for_result(results, call_id, turn.tool_timeout) => return waited.map(|result| (result, None)),
        Some(answered) = from_site(turn.tool_timeout) => answered,
        () = events.closed() => return if is_form { from_site(LEAVING_ARRIVAL).await } else { None },
    };
    // The site answered. A submission that replaced the page: the page is gone. A page that sent
    // the submission itself (fetch) still posts its result, which carries the site's answer too.
    if turn.outcomes.navigated(owner, call_id).await {
        return Some(answered);
    }
    tokio::select! {
        waited = wait_for_result(results, call_id, PAGE_GRACE) => {
            Some(waited.map_or(answered, |result| (result, None)))
        }
        () = events.closed() => Some(answered),
    }
}

async fn wait_for_result(
    results: &mut mpsc::Receiver<ToolOutcome>,
    call_id: &str,
    timeout: Duration,
) -> Option<Result<serde_json::Value, String>> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match tokio::time::timeout_at(deadline, results.recv()).await {
            Ok(Some(outcome)) if outcome.call_id == call_id => return Some(outcome.result),
            // A late answer to an earlier call that timed out: ignore it.
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => return None,
        }
    }
}

async fn record_call(
    turn: &TurnContext,
    tool: &str,
    decision: &str,
    reason: &str,
    explanation: Option<serde_json::Value>,
) {
    let mut event =
        actor_event(turn, EventKind::ToolCall).resource(&format!("tool:{tool}")).decision(decision, reason);
    event.tool = Some(tool.to_owned());
    event.explanation = explanation;
    turn.audit.record_or_log(event).await;
}

async fn audit_llm(turn: &TurnContext, answer: Option<&Answer>, started: Instant, outcome: &str) {
    let mut event = actor_event(turn, EventKind::LlmCall)
        .decision(if answer.is_some() { "success" } else { "failure" }, outcome);
    event.model = Some(turn.llm.model().to_owned());
    event.latency_ms = Some(started.elapsed().as_millis() as u64);
    if let Some(answer) = answer {
        event.input_tokens = Some(answer.input_tokens);
        event.output_tokens = Some(answer.output_tokens);
    }
    turn.audit.record_or_log(event).await;
}

fn actor_event(turn: &TurnContext, kind: EventKind) -> AuditEvent {
    let (email, groups) = &turn.actor;
    let mut event = AuditEvent::new(kind)
        .actor(&turn.owner.user, email.as_deref(), groups)
        .site(&turn.owner.site)
        .request(&turn.request_id);
    event.session = Some(turn.owner.session.clone());
    event
}

/// The arguments with whole numbers written as integers (`42.0` → `42`), so the approval card
/// and the audit show the number as the page will spell it (the form guard compares numbers by
/// value either way).
fn integral_numbers(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    /// Integers up to 2^53 are exact in a double, and in JavaScript.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(float) if number.is_f64() && float.fract() == 0.0 && float.abs() <= EXACT => {
                Value::from(float as i64)
            }
            _ => Value::Number(number),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral_numbers).collect()),
        Value::Object(members) => {
            Value::Object(members.into_iter().map(|(name, value)| (name, integral_numbers(value))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::integral_numbers;
    use serde_json::json;

    #[test]
    fn whole_numbers_are_spelled_as_integers() {
        let args = json!({"amount": 42.0, "rate": 0.5, "ids": [3.0, 4], "nested": {"n": -7.0}, "big": 1e300});
        let normalized = integral_numbers(args);
        assert_eq!(
            crate::approvals::canonical_args(&normalized),
            r#"{"amount":42,"big":1e+300,"ids":[3,4],"nested":{"n":-7},"rate":0.5}"#
        );
    }
}
