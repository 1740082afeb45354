//! The Audit page: search by time, user, site, kind and decision (oldest first, a page at a
//! time), one record in full with its hash checked, chain verification, and the matching
//! records as JSON lines (the same format as `toolgate audit export`).

use super::{Context, respond};
use crate::audit::chain::Record;
use crate::audit::event::EventKind;
use crate::audit::query::{self, Filter};
use crate::http::body::ProxyBody;
use crate::store::Table;
use dashboard::{AuditData, AuditQuery, AuditRow, Nav, RecordData};
use http::{Response, StatusCode};
use std::time::SystemTime;

/// Records per page.
const PAGE: usize = 100;
/// Most records in one export from the dashboard (bigger exports: `toolgate audit export`).
const MAX_EXPORT: usize = 100_000;

/// `GET /audit`.
pub(super) async fn search(context: &Context<'_>) -> Response<ProxyBody> {
    let query = query_of(context);
    let (filter, problem) = match filter(&query) {
        Ok(filter) => (Some(filter), None),
        Err(problem) => (None, Some(problem)),
    };
    let after = context.param("after").parse::<u64>().unwrap_or(0);
    // Everything queued before this request (a model's answer) is in the search.
    if context.gateway.audit.flush().await.is_err() {
        return respond::store_unavailable("The audit log cannot be read right now.");
    }
    let (rows, next) = match &filter {
        Some(filter) => match context
            .gateway
            .audit
            .read({
                let filter = filter.clone();
                move |store| query::find(store, &filter, after, PAGE)
            })
            .await
        {
            Ok(page) => (page.records.iter().map(row).collect(), page.next),
            Err(_) => {
                return respond::store_unavailable("The audit log cannot be read right now.");
            }
        },
        None => (Vec::new(), None),
    };
    let encoded = encode(&query);
    let data = AuditData {
        kinds: EventKind::ALL.iter().map(|kind| kind.as_str().to_owned()).collect(),
        rows,
        next_href: next.map(|next| format!("/audit?{encoded}&after={next}")),
        export_href: format!("/audit/export?{encoded}"),
        chain: context.gateway.dashboard.chain.recent(&context.gateway.audit, &context.gateway.metrics).await,
        problem,
        query,
    };
    let status = if data.problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    respond::page(status, dashboard::audit(&context.shell(Nav::Audit, None), &data))
}

/// `GET /audit/records/{seq}`.
pub(super) async fn record(context: &Context<'_>, seq: &str) -> Response<ProxyBody> {
    let Ok(seq) = seq.parse::<u64>() else { return respond::not_found() };
    let stored =
        match context.gateway.audit.read(move |store| store.get(Table::Audit, &Record::key(seq))).await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return respond::not_found(),
            Err(_) => {
                return respond::store_unavailable("The audit log cannot be read right now.");
            }
        };
    let (json_pretty, hash_valid) = match serde_json::from_slice::<Record>(&stored) {
        Ok(record) => (serde_json::to_string_pretty(&record).unwrap_or_default(), record.hash_is_valid()),
        Err(_) => (String::from_utf8_lossy(&stored).into_owned(), false),
    };
    let data = RecordData { seq, json_pretty, hash_valid };
    respond::page(StatusCode::OK, dashboard::audit_record(&context.shell(Nav::Audit, None), &data))
}

/// `GET /audit/export`: the matching records as JSON lines.
pub(super) async fn export(context: &Context<'_>) -> Response<ProxyBody> {
    let Ok(filter) = filter(&query_of(context)) else {
        return respond::error(
            StatusCode::BAD_REQUEST,
            "Bad filter",
            "The times must be RFC 3339, e.g. 2026-11-22T10:00:00Z.",
        );
    };
    let exported = context
        .gateway
        .audit
        .read(move |store| {
            let mut lines = String::new();
            let (mut after, mut exported) = (0, 0);
            loop {
                let page = query::find(store, &filter, after, query::MAX_LIMIT)?;
                for record in &page.records {
                    lines.push_str(&crate::audit::export::json_line(record));
                    lines.push('\n');
                }
                exported += page.records.len();
                match page.next {
                    Some(next) if exported < MAX_EXPORT => after = next,
                    _ => return Ok(lines),
                }
            }
        })
        .await;
    let Ok(lines) = exported else {
        return respond::store_unavailable("The audit log cannot be read right now.");
    };
    respond::download("application/x-ndjson", "toolgate-audit.jsonl", lines)
}

/// `POST /audit/verify`: verifies the whole chain now and shows the outcome.
pub(super) async fn verify(context: &Context<'_>) -> Response<ProxyBody> {
    context.gateway.dashboard.chain.verify(&context.gateway.audit, &context.gateway.metrics).await;
    respond::see_other("/audit")
}

/// A record as a result row.
pub(super) fn row(record: &Record) -> AuditRow {
    let event = &record.event;
    AuditRow {
        seq: record.seq,
        time: record.time.clone(),
        kind: event.kind.map_or("", |kind| kind.as_str()).to_owned(),
        user: event.actor.as_ref().map(|actor| actor.user_id.clone()).unwrap_or_default(),
        site: event.site.clone().unwrap_or_default(),
        resource: event.resource.clone().or_else(|| event.tool.clone()).unwrap_or_default(),
        decision: event.decision.clone().unwrap_or_default(),
        reason: event.reason.clone().unwrap_or_default(),
    }
}

fn query_of(context: &Context<'_>) -> AuditQuery {
    AuditQuery {
        since: context.param("since").trim().to_owned(),
        until: context.param("until").trim().to_owned(),
        user: context.param("user").trim().to_owned(),
        site: context.param("site").trim().to_owned(),
        kind: context.param("kind").trim().to_owned(),
        decision: context.param("decision").trim().to_owned(),
    }
}

fn filter(query: &AuditQuery) -> Result<Filter, String> {
    let time = |text: &str, name: &str| -> Result<Option<SystemTime>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        humantime::parse_rfc3339_weak(text)
            .map(Some)
            .map_err(|_| format!("{name}: {text:?} is not a time; write it as 2026-11-22T10:00:00Z"))
    };
    let some = |text: &str| Some(text.to_owned()).filter(|text| !text.is_empty());
    Ok(Filter {
        since: time(&query.since, "since")?,
        until: time(&query.until, "until")?,
        user: some(&query.user),
        site: some(&query.site),
        kind: some(&query.kind),
        decision: some(&query.decision),
    })
}

fn encode(query: &AuditQuery) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("since", &query.since)
        .append_pair("until", &query.until)
        .append_pair("user", &query.user)
        .append_pair("site", &query.site)
        .append_pair("kind", &query.kind)
        .append_pair("decision", &query.decision)
        .finish()
}
