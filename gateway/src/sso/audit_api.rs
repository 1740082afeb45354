//! The audit query API (HTTP, so it lives here and not in `audit/`) for the dashboard and SIEM
//! pulls, on the gateway's own host:
//! `GET /.toolgate/audit/records?since=&until=&user=&site=&kind=&decision=&after=&limit=`
//! (RFC 3339 times; paginated by sequence number). Callers must be signed in (session or bearer)
//! and in one of `audit.reader_groups`.

use crate::audit::AuditLog;
use crate::audit::query::{self, Filter};
use crate::http::body::{self, ProxyBody};
use crate::http::errors::ProxyError;
use crate::sso::Sso;
use crate::sso::identity::Identity;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};

/// The query's path on the gateway's host.
pub const PATH: &str = "/.toolgate/audit/records";

/// Answers `GET` [`PATH`] for a caller signed in by session or bearer token.
pub async fn handle<B>(
    sso: &Sso,
    readers: &[String],
    request: &Request<B>,
    secure: bool,
) -> Result<Response<ProxyBody>, ProxyError> {
    if request.method() != Method::GET {
        return Err(ProxyError::NotFound);
    }
    let identity = super::login::caller(sso, request.headers(), secure).await?;
    records(&sso.audit, &identity, readers, &super::login::query_pairs(request)).await
}

/// Answers a records query for `identity`.
pub async fn records(
    audit: &AuditLog,
    identity: &Identity,
    readers: &[String],
    query: &[(String, String)],
) -> Result<Response<ProxyBody>, ProxyError> {
    if !identity.in_any(readers) {
        return Err(ProxyError::Forbidden);
    }
    let parameter = |name: &str| query.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
    let time = |name: &str| -> Result<Option<std::time::SystemTime>, ProxyError> {
        parameter(name)
            .map(|value| humantime::parse_rfc3339_weak(&value).map_err(|_| ProxyError::BadRequest))
            .transpose()
    };
    let filter = Filter {
        since: time("since")?,
        until: time("until")?,
        user: parameter("user"),
        site: parameter("site"),
        kind: parameter("kind"),
        decision: parameter("decision"),
    };
    let after = parameter("after")
        .map(|value| value.parse::<u64>().map_err(|_| ProxyError::BadRequest))
        .transpose()?;
    let limit = parameter("limit")
        .map(|value| value.parse::<usize>().map_err(|_| ProxyError::BadRequest))
        .transpose()?;
    // Read your writes: what was queued before this request (a model's answer) is in the page.
    audit.flush().await.map_err(|_| ProxyError::AuditUnavailable)?;
    let (after, limit) = (after.unwrap_or(0), limit.unwrap_or(100));
    let read = audit
        .read(move |store| {
            let page = query::find(store, &filter, after, limit)?;
            // Captured texts (sites with content capture, within their retention) ride along by seq.
            let mut content = serde_json::Map::new();
            for record in &page.records {
                let texts = crate::audit::content::of(store, record.seq)?;
                if !texts.is_empty() {
                    content.insert(record.seq.to_string(), serde_json::json!(texts));
                }
            }
            Ok((page, content))
        })
        .await;
    let (page, content) = read.map_err(|error| {
        tracing::error!(error = %error, "audit query failed");
        ProxyError::AuditUnavailable
    })?;
    let body = serde_json::to_vec(
        &serde_json::json!({ "records": page.records, "next": page.next, "content": content }),
    )
    .map_err(|_| ProxyError::AuditUnavailable)?;
    let mut response = Response::new(body::full(body));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
