//! The Overview page: the sites, traffic and tool decisions over time, pending approvals, the
//! latest denials and the audit chain's state.

use super::access::{Need, allows};
use super::{Context, respond};
use crate::audit::query::Filter;
use crate::http::body::ProxyBody;
use crate::store::Table;
use dashboard::{Nav, OverviewData, SiteRow};
use http::{Response, StatusCode};

/// Denials listed.
const RECENT_DENIALS: usize = 10;
/// Records searched backwards for them.
const DENIAL_WINDOW: u64 = 5_000;

/// `GET /`.
pub(super) async fn page(context: &Context<'_>) -> Response<ProxyBody> {
    let gateway = context.gateway;
    let now = crate::support::clock::unix_now();
    let site_ids: Vec<String> = gateway.config.sites.iter().map(|site| site.id.to_string()).collect();
    let (traffic, decisions) = gateway.dashboard.activity.series(&gateway.metrics, &site_ids, now);
    let requests = gateway.metrics.totals_by("toolgate_requests_total", "site");
    let sites = gateway
        .config
        .sites
        .iter()
        .map(|site| SiteRow {
            id: site.id.to_string(),
            host: site.host.clone(),
            upstream: format!("{}://{}", site.upstream.scheme, site.upstream.authority),
            page_tools: site.page_tools,
            requests: requests.get(site.id.as_str()).copied().unwrap_or(0.0) as u64,
        })
        .collect();
    let pending_approvals = if allows(context.caller.roles, Need::SeeApprovals) {
        let queue = crate::approvals_http::api::queue(gateway, &context.caller.identity);
        gateway.approvals.pending_for(queue).await.map_or(0, |pending| pending.len())
    } else {
        0
    };
    let recent_denials =
        if allows(context.caller.roles, Need::Read) { recent_denials(context).await } else { Vec::new() };
    let chain = gateway.dashboard.chain.recent(&gateway.audit, &gateway.metrics).await;
    let data = OverviewData { sites, traffic, decisions, pending_approvals, recent_denials, chain };
    respond::page(StatusCode::OK, dashboard::overview(&context.shell(Nav::Overview, None), &data))
}

/// The newest denials among the last [`DENIAL_WINDOW`] records.
async fn recent_denials(context: &Context<'_>) -> Vec<dashboard::AuditRow> {
    let found = context
        .gateway
        .audit
        .read(|store| {
            let last = match store.last(Table::Audit)? {
                Some((key, _)) => u64::from_be_bytes(key.as_slice().try_into().unwrap_or([0; 8])),
                None => return Ok(Vec::new()),
            };
            let filter = Filter { decision: Some("deny".into()), ..Filter::default() };
            let mut after = last.saturating_sub(DENIAL_WINDOW);
            let mut found = Vec::new();
            loop {
                let page = crate::audit::query::find(store, &filter, after, crate::audit::query::MAX_LIMIT)?;
                found.extend(page.records);
                match page.next {
                    Some(next) => after = next,
                    None => return Ok(found),
                }
            }
        })
        .await
        .unwrap_or_default();
    found.iter().rev().take(RECENT_DENIALS).map(super::audit_page::row).collect()
}
