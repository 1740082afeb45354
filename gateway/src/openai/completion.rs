//! `POST /v1/chat/completions`, top to bottom: bearer token → site scope → request → policy
//! filtering and redaction → the user's limits → catalog exposure audited → the model → tool
//! calls checked → the answer (whole here, streamed in `stream.rs`).
//!
//! Limits are the agent panel's (`[agent]`): an API request counts as one running turn of the
//! user while it runs (`max_concurrent_turns`) and its tokens count against `tokens_per_hour`.

use super::{ApiError, authenticate, calls, request, response, site_scope, stream};
use crate::audit::AuditLog;
use crate::audit::event::{AuditEvent, EventKind};
use crate::http::body::{IdleTimeout, ProxyBody};
use crate::http::hex;
use crate::http::request_id::RequestId;
use crate::llm::{ChatResponse, LlmClient, LlmError, Usage};
use crate::metrics::Metrics;
use crate::sso::Sso;
use crate::sso::identity::Identity;
use crate::state::Gateway;
use crate::state::turns::{Owner, Refusal};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use policy::{Placeholders, PolicyView, ToolRef};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Largest request body (the whole conversation and the tools).
const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;
/// The model name clients may always use, whatever the configured model is called.
pub const ALIAS: &str = "toolgate";

/// One completion in progress, owned (a streamed one runs in its own task).
pub struct Exchange {
    /// `chatcmpl-…`.
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    /// The model id reported to the client (the configured model name).
    pub model: String,
    /// Who asked.
    pub identity: Identity,
    /// The site id.
    pub site: String,
    /// The site's origin, where the assistant panel (and approvals) live.
    pub site_origin: String,
    /// The policy for this user on this site.
    pub view: PolicyView,
    /// Tools offered to the model, by name.
    pub offered: HashMap<String, ToolRef>,
    /// The request's placeholders, to restore the originals in the calls returned.
    pub scope: Placeholders,
    /// The model.
    pub llm: LlmClient,
    /// The audit log.
    pub audit: Arc<AuditLog>,
    /// Metrics.
    pub metrics: Metrics,
    /// The request id.
    pub request_id: String,
}

/// Serves one chat completion.
pub async fn respond(
    gateway: &Gateway,
    sso: &Sso,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<Response<ProxyBody>, ApiError> {
    let identity = authenticate(sso, request.headers()).await?;
    let site = site_scope(gateway, &identity, request.headers(), request_id).await?;
    let llm = gateway.llm.clone().ok_or_else(ApiError::no_model)?;
    let body: request::ChatBody = read_json(gateway, request).await?;
    if let Some(asked) = body.model.as_deref().filter(|asked| *asked != llm.model() && *asked != ALIAS) {
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
        .map_err(|refusal| {
            // OpenAI's vocabulary for the concurrency limit; the message is the panel's.
            let code = match refusal {
                Refusal::TooManyTurns(_) => "too_many_requests",
                Refusal::TokenBudget(_) => "token_budget",
            };
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, code, refusal.message())
        })?;

    let exposure = exposure_event(&identity, site.id.as_str(), &prepared, request_id);
    let texts = [("prompt", prepared.last_user_text.as_str())];
    gateway
        .audit
        .record_with_texts(exposure, &texts, site.capture_content)
        .await
        .map_err(|_| ApiError::audit_unavailable())?;

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
    let turns = gateway.turns.clone();
    if body.stream {
        let include_usage = body.stream_options.is_some_and(|options| options.include_usage);
        let user = exchange.identity.user.clone();
        // Runs when the stream ends, however it ends: the tokens are charged, the turn released.
        let finished = move |tokens| {
            turns.spend(&user, tokens);
            drop(guard);
        };
        return stream::start(exchange, prepared.request, include_usage, finished).await;
    }
    let started = Instant::now();
    let answer = exchange.llm.complete(prepared.request).await;
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => {
            exchange.model_failed(&error, started).await;
            return Err(ApiError::from_llm(&error));
        }
    };
    exchange.model_answered(answer.usage, started).await;
    turns.spend(&exchange.identity.user, tokens(answer.usage));
    drop(guard);
    let ChatResponse { content, tool_calls, finish_reason, usage } = answer;
    let checked = calls::check(&exchange, tool_calls).await;
    let body = response::completion(&exchange, content, &checked, finish_reason.as_deref(), usage);
    Ok(response::json(StatusCode::OK, &body))
}

impl Exchange {
    /// Audits and counts a model call that answered.
    pub async fn model_answered(&self, usage: Option<Usage>, started: Instant) {
        let usage = usage.unwrap_or(Usage { input_tokens: 0, output_tokens: 0 });
        self.metrics.llm_calls.with_label_values(&[self.site.as_str(), "ok"]).inc();
        self.metrics.llm_tokens.with_label_values(&["input"]).inc_by(usage.input_tokens);
        self.metrics.llm_tokens.with_label_values(&["output"]).inc_by(usage.output_tokens);
        self.metrics.llm_latency.observe(started.elapsed().as_secs_f64());
        let mut event = self.event(EventKind::LlmCall).decision("success", "ok");
        event.model = Some(self.model.clone());
        event.latency_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        event.input_tokens = Some(usage.input_tokens);
        event.output_tokens = Some(usage.output_tokens);
        self.audit.record_or_log(event).await;
    }

    /// Audits and counts a model call that failed (or whose client left: `client_gone`).
    pub async fn model_failed_with(&self, reason: &str, started: Instant) {
        self.metrics.llm_calls.with_label_values(&[self.site.as_str(), reason]).inc();
        let mut event = self.event(EventKind::LlmCall).decision("failure", reason);
        event.model = Some(self.model.clone());
        event.latency_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        self.audit.record_or_log(event).await;
    }

    /// Audits and counts a failed model call.
    pub async fn model_failed(&self, error: &LlmError, started: Instant) {
        self.model_failed_with(error.reason(), started).await;
    }

    /// Audits one tool-call decision.
    pub async fn record_call(
        &self,
        tool: &str,
        decision: &str,
        reason: &str,
        explanation: Option<serde_json::Value>,
    ) {
        let mut event =
            self.event(EventKind::ToolCall).resource(&format!("tool:{tool}")).decision(decision, reason);
        event.tool = Some(tool.to_owned());
        event.explanation = explanation;
        self.audit.record_or_log(event).await;
    }

    /// Counts one tool-call decision.
    pub fn count_decision(&self, decision: &str) {
        self.metrics.tool_decisions.with_label_values(&[self.site.as_str(), decision]).inc();
    }

    fn event(&self, kind: EventKind) -> AuditEvent {
        let identity = &self.identity;
        AuditEvent::new(kind)
            .actor(&identity.user, identity.email.as_deref(), &identity.groups)
            .site(&self.site)
            .request(&self.request_id)
    }
}

/// Tokens in and out.
pub fn tokens(usage: Option<Usage>) -> u64 {
    usage.map_or(0, |usage| usage.input_tokens + usage.output_tokens)
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
