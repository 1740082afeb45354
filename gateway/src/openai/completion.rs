//! `POST /v1/chat/completions`, top to bottom: bearer token → site scope → request → policy
//! filtering and redaction → the user's limits → catalog exposure audited → the model → tool
//! calls checked → the answer (whole here, streamed in `stream.rs`).
//!
//! Limits are the agent panel's (`[agent]`): an API request counts as one running turn of the
//! user while it runs (`max_concurrent_turns`) and its tokens count against `tokens_per_hour`.

use super::exchange::{Exchange, tokens};
use super::{ApiError, authenticate, calls, request, response, site_scope, stream};
use crate::audit::event::AuditEvent;
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::hex;
use crate::http::request_id::RequestId;
use crate::llm::ChatResponse;
use crate::sso::Sso;
use crate::sso::identity::Identity;
use crate::state::Gateway;
use crate::state::turns::{Owner, Refusal};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use std::time::Instant;

/// Largest request body (the whole conversation and the tools).
const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;
/// The model name clients may always use, whatever the configured model is called.
pub const ALIAS: &str = "toolgate";

/// Serves one chat completion.
pub async fn respond(
    gateway: &Gateway,
    sso: &Sso,
    request: Request<Incoming>,
    named_site: Option<&str>,
    request_id: &RequestId,
) -> Result<Response<ProxyBody>, ApiError> {
    let identity = authenticate(sso, request.headers()).await?;
    let site = site_scope(gateway, &identity, named_site, request_id).await?;
    let llm = gateway.llm.clone().ok_or_else(ApiError::no_model)?;
    let body: request::ChatBody = read_json(gateway, request).await?;
    let served = |asked: &str| {
        asked == llm.model() || asked == ALIAS || llm.aliases().iter().any(|alias| alias == asked)
    };
    if let Some(asked) = body.model.as_deref().filter(|asked| !served(asked)) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "model_not_found",
            format!(
                "the model {:?} is not served here; use {:?} (see GET /v1/models)",
                request::cap(asked, 64),
                llm.model()
            ),
        ));
    }
    let view = gateway.policy.current().view(&identity.subject(), &site.id);
    let prepared = request::prepare(&view, &body, site.page_tools)?;

    let limits = &gateway.config.agent;
    let owner =
        Owner { user: identity.user.clone(), session: "openai-api".into(), site: site.id.to_string() };
    let id = format!("chatcmpl-{}", hex(&crate::support::random::random_bytes::<12>()));
    let (guard, _results) = gateway
        .turns
        .start(id.clone(), owner, limits.max_concurrent_turns, limits.tokens_per_hour)
        .await
        .map_err(|refusal| {
            // OpenAI's vocabulary for the concurrency limit; the message is the panel's.
            let code = match refusal {
                Refusal::TooManyTurns(_) => "too_many_requests",
                Refusal::TokenBudget(_) => "token_budget",
                Refusal::Unavailable => "store_unavailable",
            };
            ApiError::new(refusal.status(), code, refusal.message())
        })?;

    let exposure = exposure_event(&identity, site.id.as_str(), &prepared, request_id);
    let texts = [("prompt", prepared.last_user_text.as_str())];
    if gateway.audit.record_with_texts(exposure, &texts, site.capture_content).await.is_err() {
        // Released before the refusal leaves, as after a model failure below.
        guard.finish(0).await;
        return Err(ApiError::audit_unavailable());
    }

    let exchange = Exchange {
        id,
        created: crate::support::clock::unix_now(),
        model: llm.model().to_owned(),
        site: site.id.to_string(),
        site_origin: sso.site_origin(&site.host),
        identity,
        view,
        offered: prepared.offered,
        scope: prepared.scope,
        llm,
        audit: gateway.audit.clone(),
        metrics: gateway.metrics.clone(),
        request_id: request_id.as_str().to_owned(),
    };
    if body.stream {
        let include_usage = body.stream_options.is_some_and(|options| options.include_usage);
        // Runs when the stream ends, however it ends: the tokens are charged, the turn released.
        let finished = move |tokens| guard.finish(tokens);
        return stream::start(exchange, prepared.request, include_usage, finished).await;
    }
    let started = Instant::now();
    let answer = exchange.llm.complete(prepared.request).await;
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            exchange.model_failed(&error, started);
            // Released before the answer leaves, so a retry right after it finds the slot free
            // (dropping the guard would release it in the background, after the answer).
            guard.finish(0).await;
            return Err(ApiError::from_llm(&error));
        }
    };
    exchange.model_answered(answer.usage, started);
    guard.finish(tokens(answer.usage)).await;
    let ChatResponse { content, tool_calls, finish_reason, usage } = answer;
    let checked = calls::check(&exchange, tool_calls).await;
    let body = response::completion(&exchange, content, &checked, finish_reason.as_deref(), usage);
    Ok(response::json(StatusCode::OK, &body))
}

async fn read_json(gateway: &Gateway, request: Request<Incoming>) -> Result<request::ChatBody, ApiError> {
    let body = IdleTimeout::new(request.into_body(), gateway.config.timeouts.body_idle);
    let bytes = Limited::new(body, MAX_REQUEST_BYTES)
        .collect()
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                format!("the request exceeds {MAX_REQUEST_BYTES} bytes"),
            )
        })?
        .to_bytes();
    serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::invalid(
            "invalid_request",
            format!(
                "the body is not a chat completion request (line {}, column {})",
                error.line(),
                error.column()
            ),
        )
    })
}

/// The audit record of what the model is shown: tool names offered and withheld.
fn exposure_event(
    identity: &Identity,
    site: &str,
    prepared: &request::Prepared,
    request_id: &RequestId,
) -> AuditEvent {
    let mut shown: Vec<String> = prepared.offered.keys().map(|name| format!("tool:{name}")).collect();
    shown.sort();
    let mut event = crate::agent::exposure_event(&shown, prepared.withheld.len(), &prepared.redactions)
        .actor(&identity.user, identity.email.as_deref(), &identity.groups)
        .site(site)
        .request(request_id.as_str());
    event.explanation = Some(serde_json::json!({
        "via": "openai_api",
        "withheld": prepared.withheld.iter().map(|(name, _)| format!("tool:{name}")).collect::<Vec<_>>(),
    }));
    event
}
