//! `POST /.toolgate/agent/catalog`: the runtime reports the tools and contexts it found on the
//! page; the gateway answers which ones the policy lets this user see (the runtime hides the
//! rest), records every sighting in the inventory, and audits new and changed tools.
//!
//! The report is the page's claim: it is size-limited, names are validated, and nothing in it
//! widens what the policy allows. The agent loop checks the policy again on every call.

use super::{ApiError, Caller, csrf, json};
use crate::approvals::FormTarget;
use crate::audit::event::{AuditEvent, EventKind};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::http::request_id::RequestId;
use crate::inventory::{EntryKind, Inventory, Observation, Sighting, sha256_hex};
use crate::state::Gateway;
use crate::store::StoreError;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use policy::SiteId;
use policy::{ContextDecision, ContextName, PolicyView, ToolAnnotations, ToolDecision, ToolRef, ToolSource};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// Largest report accepted, in bytes.
pub const MAX_CATALOG_BYTES: usize = 256 * 1024;
/// Most tools in one report.
pub const MAX_TOOLS: usize = 256;
/// Most contexts in one report.
pub const MAX_CONTEXTS: usize = 128;
/// Longest tool description accepted.
const MAX_DESCRIPTION: usize = 8 * 1024;

/// The runtime's report.
#[derive(Debug, Deserialize)]
pub struct CatalogReport {
    /// The tools found on the page.
    #[serde(default)]
    pub tools: Vec<ReportedTool>,
    /// The contexts found on the page (names only: their text never leaves the page here).
    #[serde(default)]
    pub contexts: Vec<ReportedContext>,
}

/// One tool as the runtime describes it.
#[derive(Debug, Deserialize)]
pub struct ReportedTool {
    /// Its catalog name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: Value,
    /// The page's hints.
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// The dialect.
    #[serde(default)]
    pub source: ToolSource,
    /// For a form tool: the form it submits (the page's claim, like everything here).
    #[serde(default)]
    pub form: Option<ReportedForm>,
}

/// The form a form tool submits, as the runtime reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct ReportedForm {
    /// The effective method (after a `_method` override field).
    pub method: String,
    /// The action's path on the site (the runtime leaves out actions on other origins).
    pub action: String,
}

impl ReportedTool {
    /// The form target the proxy can guard, when the tool reported a usable one.
    pub fn form_target(&self) -> Option<FormTarget> {
        let form = self.form.as_ref()?;
        crate::approvals::reported_target(&form.method, &form.action)
    }
}

/// One context as the runtime describes it.
#[derive(Debug, Deserialize)]
pub struct ReportedContext {
    /// Its name.
    pub name: String,
    /// The dialect.
    #[serde(default)]
    pub source: ToolSource,
}

/// Checks, decides, records and answers one report.
pub async fn respond(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Result<Response<ProxyBody>, ApiError> {
    let token = request.headers().get(csrf::HEADER).and_then(|value| value.to_str().ok()).unwrap_or("");
    if !csrf::verify(gateway, site, caller, token) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "csrf_failed",
            "missing or wrong X-Toolgate-CSRF token",
        ));
    }
    if !is_json(&request) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the catalog as application/json",
        ));
    }
    let report = read_report(request, gateway.config.timeouts.body_idle).await?;
    let view = gateway.policy.current().view(&caller.subject(), &site.id);
    let tools_on = super::page_tools_on(gateway, site, caller);
    let (tools, contexts, gated) = decide(gateway, site, &view, tools_on, &report);
    // An approval-gated form: the proxy checks agent-marked submissions to its action.
    for target in &gated {
        gateway.gated_forms.remember(site.id.as_str(), target, crate::support::clock::unix_now()).await;
    }
    record(gateway, site, caller, report, request_id).await?;
    Ok(json(StatusCode::OK, &json!({"tools": tools, "contexts": contexts})))
}

async fn read_report(
    request: Request<Incoming>,
    idle: std::time::Duration,
) -> Result<CatalogReport, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the catalog report exceeds {MAX_CATALOG_BYTES} bytes"),
        )
    };
    // A sender that stalls mid-body is cut off like any other upload.
    let body = crate::http::body::IdleTimeout::new(request.into_body(), idle);
    let bytes = Limited::new(body, MAX_CATALOG_BYTES)
        .collect()
        .await
        .map_err(|error| {
            if error.is::<http_body_util::LengthLimitError>() {
                too_large()
            } else {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", "the request body could not be read")
            }
        })?
        .to_bytes();
    let report: CatalogReport = serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_catalog",
            format!("the catalog is not valid: {error}"),
        )
    })?;
    if report.tools.len() > MAX_TOOLS || report.contexts.len() > MAX_CONTEXTS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_entries",
            format!("at most {MAX_TOOLS} tools and {MAX_CONTEXTS} contexts per page"),
        ));
    }
    let names = report.tools.iter().map(|tool| ("tool", tool.name.as_str()));
    let mut names = names.chain(report.contexts.iter().map(|context| ("context", context.name.as_str())));
    if let Some((kind, _)) = names.find(|(_, name)| !valid_name(name)) {
        // The bad name itself is not echoed: it is page input.
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_name",
            format!("a {kind} name is not valid ([A-Za-z0-9_.-], 1 to 128 characters)"),
        ));
    }
    if report.tools.iter().any(|tool| tool.description.len() > MAX_DESCRIPTION) {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "description_too_long",
            format!("tool descriptions are limited to {MAX_DESCRIPTION} bytes"),
        ));
    }
    Ok(report)
}

/// The answer for each reported entry (visible means anything but `deny`), and the form actions
/// of the tools that need an approval.
fn decide(
    gateway: &Gateway,
    site: &Site,
    view: &PolicyView,
    tools_on: bool,
    report: &CatalogReport,
) -> (Vec<Value>, Vec<Value>, Vec<crate::approvals::FormTarget>) {
    let mut gated = Vec::new();
    const OFF: &str = "page tools are switched off for you on this site";
    let counter = |kind: &str, decision: &str| {
        gateway.metrics.catalog_decisions.with_label_values(&[site.id.as_str(), kind, decision]).inc();
    };
    let tools = report
        .tools
        .iter()
        .map(|tool| {
            let reference = ToolRef {
                name: tool.name.as_str().into(),
                source: tool.source,
                annotations: tool.annotations,
            };
            let (decision, reason) = match view.tool(&reference).0 {
                _ if !tools_on => ("deny", Some(OFF.to_owned())),
                ToolDecision::Deny { reason } => ("deny", Some(reason.to_string())),
                ToolDecision::AskApproval { approver } => {
                    ("ask_approval", Some(format!("needs approval by {approver}")))
                }
                ToolDecision::Allow => ("allow", None),
            };
            if let ("ask_approval", Some(target)) = (decision, tool.form_target()) {
                gated.push(target);
            }
            counter("tool", decision);
            entry(&tool.name, decision, reason)
        })
        .collect();
    let contexts = report
        .contexts
        .iter()
        .map(|context| {
            let (decision, reason) = match view.context(&ContextName::new(context.name.as_str())).0 {
                _ if !tools_on => ("deny", Some(OFF.to_owned())),
                ContextDecision::Deny { reason } => ("deny", Some(reason.to_string())),
                ContextDecision::Allow { .. } => ("allow", None),
            };
            counter("context", decision);
            entry(&context.name, decision, reason)
        })
        .collect();
    (tools, contexts, gated)
}

fn entry(name: &str, decision: &str, reason: Option<String>) -> Value {
    match reason {
        Some(reason) => json!({"name": name, "decision": decision, "reason": reason}),
        None => json!({"name": name, "decision": decision}),
    }
}

/// Puts every sighting into the inventory and audits the new and changed ones. An inventory
/// that cannot be written is logged and counted (the page still gets its answer); an audit
/// record that cannot be written refuses the report. Store work runs on the blocking pool; the
/// audit records are submitted together, so one group commit makes them durable.
async fn record(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    report: CatalogReport,
    request_id: &RequestId,
) -> Result<(), ApiError> {
    let observed = observe_all(&gateway.inventory, &site.id, caller.user_id(), &report).await;
    let mut writes = tokio::task::JoinSet::new();
    for (sighting, observation) in observed {
        let observation = match observation {
            Ok(observation) => observation,
            Err(error) => {
                gateway
                    .metrics
                    .inventory_changes
                    .with_label_values(&[site.id.as_str(), "store_failed"])
                    .inc();
                tracing::warn!(site = %site.id, error = %error, "inventory not updated");
                continue;
            }
        };
        let reason = match observation {
            Observation::Unchanged => continue,
            Observation::Ignored => {
                gateway.metrics.inventory_changes.with_label_values(&[site.id.as_str(), "ignored"]).inc();
                continue;
            }
            Observation::New => "first_seen",
            Observation::Changed { description: true, schema: true } => "description_and_schema_changed",
            Observation::Changed { description: true, schema: false } => "description_changed",
            Observation::Changed { .. } => "schema_changed",
        };
        let change = if reason == "first_seen" { "new" } else { "changed" };
        gateway.metrics.inventory_changes.with_label_values(&[site.id.as_str(), change]).inc();
        let event = inventory_event(caller, site, &sighting, change, reason, request_id);
        let audit = Arc::clone(&gateway.audit);
        writes.spawn(async move { audit.record(event).await.is_ok() });
    }
    let mut all_written = true;
    while let Some(written) = writes.join_next().await {
        all_written &= written.unwrap_or(false);
    }
    if !all_written {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "audit_unavailable",
            "the audit log cannot be written right now; try again later",
        ));
    }
    Ok(())
}

/// One reported entry, owned, with what the inventory made of it.
struct Seen {
    kind: EntryKind,
    name: String,
    description: String,
    schema: Value,
    /// A form tool's target, `METHOD /path`.
    target: Option<String>,
}

async fn observe_all(
    inventory: &Inventory,
    site: &SiteId,
    user: &str,
    report: &CatalogReport,
) -> Vec<(Seen, Result<Observation, StoreError>)> {
    let now = crate::support::clock::unix_now();
    let tools = report.tools.iter().map(|tool| {
        let seen = Seen {
            kind: EntryKind::Tool,
            name: tool.name.clone(),
            description: tool.description.clone(),
            schema: tool.input_schema.clone(),
            target: tool.form_target().map(|form| format!("{} {}", form.method, form.action_path)),
        };
        (seen, tool.source)
    });
    let contexts = report.contexts.iter().map(|context| {
        let seen = Seen {
            kind: EntryKind::Context,
            name: context.name.clone(),
            description: String::new(),
            schema: Value::Null,
            target: None,
        };
        (seen, context.source)
    });
    let mut observed = Vec::new();
    for (seen, source) in tools.chain(contexts) {
        let sighting = Sighting {
            kind: seen.kind,
            name: &seen.name,
            source: source.as_str(),
            description: &seen.description,
            schema: &seen.schema,
            target: seen.target.as_deref(),
        };
        let observation = inventory.observe(site, user, &sighting, now).await;
        observed.push((seen, observation));
    }
    observed
}

fn inventory_event(
    caller: &Caller,
    site: &Site,
    seen: &Seen,
    change: &str,
    reason: &str,
    request_id: &RequestId,
) -> AuditEvent {
    let (email, groups) = caller
        .identity
        .as_ref()
        .map_or((None, &[][..]), |identity| (identity.email.as_deref(), identity.groups.as_slice()));
    let kind = match seen.kind {
        EntryKind::Tool => "tool",
        EntryKind::Context => "context",
    };
    let mut event = AuditEvent::new(EventKind::InventoryChange)
        .actor(caller.user_id(), email, groups)
        .site(site.id.as_str())
        .request(request_id.as_str())
        .resource(&format!("{kind}:{}", seen.name))
        .decision(change, reason);
    if seen.kind == EntryKind::Tool {
        event.tool = Some(seen.name.clone());
        let schema = crate::inventory::canonical_json(&seen.schema);
        event.digests.insert("description.sha256".into(), sha256_hex(seen.description.as_bytes()));
        event.digests.insert("schema.sha256".into(), sha256_hex(schema.as_bytes()));
    }
    if let Some(target) = &seen.target {
        event.explanation = Some(serde_json::json!({"target": target}));
    }
    event
}

fn is_json<B>(request: &Request<B>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Catalog names: `[A-Za-z0-9_.-]{1,128}`.
pub fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_catalog_rule() {
        for good in ["add_task", "a", "ns.tool-2", &"x".repeat(128)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "add task", "émoji", "a/b", "<script>", &"x".repeat(129)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn reports_parse_with_defaults_and_reject_unknown_dialects() {
        let report: CatalogReport = serde_json::from_str(
            r#"{"tools":[{"name":"t","source":"voix","annotations":{"read_only":true}}]}"#,
        )
        .expect("report");
        assert_eq!(report.tools[0].source, ToolSource::Voix);
        assert!(report.tools[0].annotations.read_only);
        assert!(report.contexts.is_empty());
        assert_eq!(report.tools[0].form_target(), None);
        let report: CatalogReport = serde_json::from_str(
            r#"{"tools":[{"name":"f","source":"form","form":{"method":"post","action":"/submit"}},
                {"name":"g","source":"form","form":{"method":"POST","action":"https://elsewhere.example/x"}}]}"#,
        )
        .expect("report");
        let target = FormTarget { method: "POST".into(), action_path: "/submit".into() };
        assert_eq!(report.tools[0].form_target(), Some(target));
        assert_eq!(report.tools[1].form_target(), None, "another origin cannot be guarded");
        assert!(
            serde_json::from_str::<CatalogReport>(r#"{"tools":[{"name":"t","source":"flash"}]}"#).is_err()
        );
    }
}
