//! `POST /.toolgate/agent/turn` (the user's message and the page's catalog in, a Server-Sent
//! Events stream out) and `POST /.toolgate/agent/result` (the page's answer to a tool call).
//!
//! Both need the session's CSRF token. A turn starts only within the user's limits (concurrent
//! turns, tokens per hour: 429 otherwise) and when a model is configured (503 otherwise).

use super::catalog::ReportedTool;
use super::context::TurnContext;
use super::memory::Memory;
use super::prompt::{self, PageContext};
use super::sse::{self, TurnEvent, Withheld};
use super::turn;
use super::{ApiError, Caller, csrf, json};
use crate::audit::event::AuditEvent;
use crate::config::Site;
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::hex;
use crate::http::request_id::RequestId;
use crate::state::Gateway;
use crate::state::continuations::Continuation;
use crate::state::conversations::{self, Conversation};
use crate::state::turns::{Refusal, ToolOutcome};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Largest turn request (message, catalog and context texts).
const MAX_TURN_BYTES: usize = 512 * 1024;
/// How long a page that continues a turn waits for the turn to leave its conversation (the
/// page can load before the turn has the site's answer).
const CONTINUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Largest tool result a page may post.
const MAX_RESULT_BYTES: usize = 256 * 1024;

#[derive(Deserialize)]
struct TurnRequest {
    #[serde(default)]
    message: String,
    /// Continue the turn a submission took away from the previous page
    /// (`state::continuations`) instead of starting from a message.
    #[serde(default, rename = "continue")]
    resume: bool,
    /// The conversation this turn goes on (`state::conversations`); none, or one that is not
    /// kept for this user here, starts a new one.
    #[serde(default)]
    conversation: Option<String>,
    #[serde(default)]
    tools: Vec<ReportedTool>,
    #[serde(default)]
    contexts: Vec<PageContext>,
}

#[derive(Deserialize)]
struct ResultRequest {
    turn_id: String,
    call_id: String,
    #[serde(default)]
    ok: bool,
    #[serde(default)]
    result: serde_json::Value,
    #[serde(default)]
    error: Option<String>,
}

/// Starts a turn and answers with its event stream.
pub async fn start(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<Response<ProxyBody>, ApiError> {
    check_csrf(gateway, site, caller, &request)?;
    let Some(llm) = gateway.llm.clone() else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "llm_not_configured",
            "no language model is configured for this gateway",
        ));
    };
    let body: TurnRequest = read_json(gateway, request, MAX_TURN_BYTES).await?;
    let owner = caller.owner(gateway, site);
    let resumed = if body.resume {
        let taken = gateway.continuations.take_within(&owner.key(), CONTINUE_WAIT).await;
        Some(taken.ok_or_else(|| {
            ApiError::new(
                StatusCode::CONFLICT,
                "nothing_to_continue",
                "there is no turn to continue on this page",
            )
        })?)
    } else if body.message.trim().is_empty() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "empty_message", "the message is empty"));
    } else {
        None
    };
    let view = gateway.policy.current().view(&caller.subject(), &site.id);
    let tools_on = super::page_tools_on(gateway, site, caller);
    let (tools, contexts) = if tools_on { (body.tools, body.contexts) } else { (Vec::new(), Vec::new()) };
    let user_name = caller
        .identity
        .as_ref()
        .and_then(|identity| identity.name.clone())
        .unwrap_or_else(|| caller.user_id().to_owned());
    let boundary = hex(&crate::support::random::random_bytes::<12>());
    let message = resumed.is_none().then_some(body.message.as_str());
    let (conversation_id, earlier) = conversation(gateway, &owner.key(), resumed.as_ref(), body.conversation);
    let scope = resumed.as_ref().map_or_else(|| earlier.scope.clone(), |resumed| resumed.scope.clone());
    let mut prepared =
        prompt::prepare(&view, (site.id.as_str(), &user_name), message, &tools, &contexts, &boundary, scope);
    // The conversation so far goes between the system prompt and the new message: a continued
    // turn's own messages, or the latest earlier turns that fit the token budget.
    let (replayed, turns) = match resumed {
        Some(resumed) => {
            let replayed = resumed.conversation.len();
            prepared.messages.extend(resumed.conversation);
            (replayed, earlier.turns)
        }
        None => {
            let history = conversations::replay(&earlier.messages, gateway.config.agent.history_tokens);
            let replayed = history.len();
            prepared.messages.splice(1..1, history.iter().cloned());
            (replayed, earlier.turns + 1)
        }
    };
    let memory = Memory {
        conversations: gateway.conversations.clone(),
        id: conversation_id.clone(),
        earlier: earlier.messages,
        replayed,
        turns,
    };

    let turn_id = hex(&crate::support::random::random_bytes::<12>());
    let limits = &gateway.config.agent;
    let (guard, results) = gateway
        .turns
        .start(turn_id.clone(), owner.clone(), limits.max_concurrent_turns, limits.tokens_per_hour)
        .await
        .map_err(|refusal| {
            let code = match refusal {
                Refusal::TooManyTurns(_) => "too_many_turns",
                Refusal::TokenBudget(_) => "token_budget",
                Refusal::Unavailable => "store_unavailable",
            };
            ApiError::new(refusal.status(), code, refusal.message())
        })?;

    let mut exposure = exposure_event(caller, site, &prepared, request_id);
    if let Some(serde_json::Value::Object(explanation)) = exposure.explanation.as_mut() {
        explanation.insert("conversation".into(), conversation_id.clone().into());
        explanation.insert("replayed_messages".into(), replayed.into());
        if message.is_none() {
            // A turn that goes on after its form submission replaced the page.
            explanation.insert("continued".into(), serde_json::Value::Bool(true));
        }
    }
    let texts = [("prompt", body.message.as_str())];
    gateway.audit.record_with_texts(exposure, &texts, site.capture_content).await.map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "audit_unavailable",
            "the audit log cannot be written right now",
        )
    })?;

    let started = TurnEvent::Started {
        turn_id: turn_id.clone(),
        conversation_id,
        tools: prepared.names.values().map(|tool| tool.catalog_name.clone()).collect(),
        contexts: prepared.contexts_shown.clone(),
        withheld: prepared
            .withheld
            .iter()
            .map(|(kind, name, reason)| Withheld { kind, name: name.clone(), reason: reason.clone() })
            .collect(),
    };
    let (events, response) = sse::channel();
    let context = TurnContext {
        id: turn_id,
        owner,
        actor: caller
            .identity
            .as_ref()
            .map_or((None, Vec::new()), |identity| (identity.email.clone(), identity.groups.clone())),
        view,
        prepared,
        llm,
        approvals: gateway.approvals.clone(),
        deciders: gateway.sso.as_ref().map(|sso| {
            let admins = gateway.config.dashboard.as_ref().map(|dashboard| dashboard.admin_groups.clone());
            super::deciders::Deciders::new(sso.store.clone(), admins.unwrap_or_default())
        }),
        gated_forms: gateway.gated_forms.clone(),
        outcomes: gateway.outcomes.clone(),
        continuations: gateway.continuations.clone(),
        memory,
        audit: gateway.audit.clone(),
        metrics: gateway.metrics.clone(),
        max_rounds: limits.max_rounds,
        approval_timeout: limits.approval_timeout,
        tool_timeout: limits.tool_timeout,
        request_id: request_id.as_str().to_owned(),
    };
    tokio::spawn(async move {
        let tokens =
            if events.send(&started).await { turn::run(context, events, results).await.tokens } else { 0 };
        guard.finish(tokens).await;
    });
    Ok(response)
}

/// The conversation a turn goes on: a continued turn's own, the one the page named if it is
/// kept for this owner, or a new one (a fresh random id).
fn conversation(
    gateway: &Gateway,
    owner: &str,
    resumed: Option<&Continuation>,
    named: Option<String>,
) -> (String, Conversation) {
    let id = match resumed {
        Some(resumed) => Some(resumed.conversation_id.clone()),
        None => named.filter(|id| conversations::valid_id(id)),
    };
    match id.and_then(|id| gateway.conversations.get(owner, &id).map(|found| (id, found))) {
        Some(found) => found,
        None => match resumed {
            // Its conversation expired meanwhile: the turn goes on under the same id.
            Some(resumed) => (resumed.conversation_id.clone(), Conversation::default()),
            None => (hex(&crate::support::random::random_bytes::<12>()), Conversation::default()),
        },
    }
}

/// Hands a tool result to its turn.
pub async fn result(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, ApiError> {
    check_csrf(gateway, site, caller, &request)?;
    let body: ResultRequest = read_json(gateway, request, MAX_RESULT_BYTES).await?;
    let result =
        if body.ok { Ok(body.result) } else { Err(body.error.unwrap_or_else(|| "the tool failed".into())) };
    let outcome = ToolOutcome { call_id: body.call_id, result };
    if !gateway.turns.deliver(&body.turn_id, &caller.owner(gateway, site), outcome).await {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no_such_turn",
            "this turn is over or is not yours",
        ));
    }
    Ok(json(StatusCode::ACCEPTED, &serde_json::json!({"accepted": true})))
}

pub(super) fn check_csrf<B>(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    request: &Request<B>,
) -> Result<(), ApiError> {
    let token = request.headers().get(csrf::HEADER).and_then(|value| value.to_str().ok()).unwrap_or("");
    if csrf::verify(gateway, site, caller, token) {
        Ok(())
    } else {
        Err(ApiError::new(StatusCode::FORBIDDEN, "csrf_failed", "missing or wrong X-Toolgate-CSRF token"))
    }
}

async fn read_json<T: DeserializeOwned>(
    gateway: &Gateway,
    request: Request<Incoming>,
    limit: usize,
) -> Result<T, ApiError> {
    let body = IdleTimeout::new(request.into_body(), gateway.config.timeouts.body_idle);
    let bytes = Limited::new(body, limit)
        .collect()
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                format!("the request exceeds {limit} bytes"),
            )
        })?
        .to_bytes();
    serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("the request is not valid: {error}"),
        )
    })
}

/// The audit record of what the model is shown: tool and context names, what was withheld.
fn exposure_event(
    caller: &Caller,
    site: &Site,
    prepared: &prompt::Prepared,
    request_id: &RequestId,
) -> AuditEvent {
    let (email, groups) = caller
        .identity
        .as_ref()
        .map_or((None, &[][..]), |identity| (identity.email.as_deref(), identity.groups.as_slice()));
    let mut shown: Vec<String> =
        prepared.names.values().map(|tool| format!("tool:{}", tool.catalog_name)).collect();
    shown.sort();
    shown.extend(prepared.contexts_shown.iter().map(|name| format!("context:{name}")));
    let mut event = prompt::exposure_event(&shown, prepared.withheld.len(), &prepared.redactions)
        .actor(caller.user_id(), email, groups)
        .site(site.id.as_str())
        .request(request_id.as_str());
    event.explanation = Some(serde_json::json!({
        "withheld": prepared.withheld.iter().map(|(kind, name, _)| format!("{kind}:{name}")).collect::<Vec<_>>(),
    }));
    event
}
