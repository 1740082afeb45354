//! One completion in progress (`Exchange`): who asked, on which site, under which policy, with
//! which placeholders, and how its model calls and tool-call decisions are audited and counted.
//! Shared by the whole answer (`completion`), the call checks (`calls`), the answer's shape
//! (`response`) and the stream (`stream`), and importing none of them.

use crate::audit::AuditLog;
use crate::audit::event::{AuditEvent, EventKind};
use crate::llm::{LlmClient, LlmError, Usage};
use crate::metrics::Metrics;
use crate::sso::identity::Identity;
use policy::{Placeholders, PolicyView, ToolRef};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

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

impl Exchange {
    /// Audits and counts a model call that answered.
    pub fn model_answered(&self, usage: Option<Usage>, started: Instant) {
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
        // The call already happened (its exposure record was durable before it went out): the
        // answer does not wait for this record's flush, which joins the next group commit.
        self.audit.record_unawaited(event);
    }

    /// Audits and counts a model call that failed (or whose client left: `client_gone`).
    pub fn model_failed_with(&self, reason: &str, started: Instant) {
        self.metrics.llm_calls.with_label_values(&[self.site.as_str(), reason]).inc();
        let mut event = self.event(EventKind::LlmCall).decision("failure", reason);
        event.model = Some(self.model.clone());
        event.latency_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        self.audit.record_unawaited(event);
    }

    /// Audits and counts a failed model call.
    pub fn model_failed(&self, error: &LlmError, started: Instant) {
        self.model_failed_with(error.reason(), started);
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
