//! The Effective permissions page: for a user (and groups) on a site, what every tool and
//! context the inventory knows of comes out as, and why — the policy engine's own explanation.

use super::{Context, respond};
use crate::http::body::ProxyBody;
use crate::inventory::EntryKind;
use dashboard::{DecisionRow, Nav, PermissionsData, PermissionsResult};
use http::{Response, StatusCode};
use policy::{ContextName, SiteId, Subject, ToolRef, UserId};

/// `GET /permissions?user=…&groups=a,b&site=…`.
pub(super) async fn page(context: &Context<'_>) -> Response<ProxyBody> {
    let gateway = context.gateway;
    let (user, groups, site) = (context.param("user"), context.param("groups"), context.param("site"));
    let sites: Vec<String> = gateway.config.sites.iter().map(|site| site.id.to_string()).collect();
    let result = if user.trim().is_empty() || !sites.iter().any(|known| known == site) {
        None
    } else {
        let entries = match gateway.inventory.list(Some(site)).await {
            Ok(entries) => entries,
            Err(_) => {
                return respond::store_unavailable("The inventory cannot be read right now.");
            }
        };
        let subject = Subject {
            user: UserId::new(user.trim()),
            email: None,
            groups: groups
                .split(',')
                .map(str::trim)
                .filter(|group| !group.is_empty())
                .map(policy::GroupName::new)
                .collect(),
        };
        let view = gateway.policy.current().view(&subject, &SiteId::new(site));
        let mut tools = Vec::new();
        let mut contexts = Vec::new();
        for entry in &entries {
            match entry.kind {
                EntryKind::Tool => {
                    let (decision, explanation) = view.tool(&ToolRef::named(entry.name.as_str()));
                    tools.push(DecisionRow {
                        name: entry.name.clone(),
                        decision: decision.label().to_owned(),
                        detail: decision.to_string(),
                        explanation: explanation.to_string(),
                    });
                }
                EntryKind::Context => {
                    let (decision, explanation) = view.context(&ContextName::new(&entry.name));
                    contexts.push(DecisionRow {
                        name: entry.name.clone(),
                        decision: decision.label().to_owned(),
                        detail: decision.to_string(),
                        explanation: explanation.to_string(),
                    });
                }
            }
        }
        Some(PermissionsResult {
            offers_tools: view.offers_tools(),
            redactions: view.redactions().iter().map(ToString::to_string).collect(),
            tools,
            contexts,
        })
    };
    let data = PermissionsData {
        user: user.to_owned(),
        groups: groups.to_owned(),
        site: site.to_owned(),
        sites,
        result,
    };
    respond::page(StatusCode::OK, dashboard::permissions(&context.shell(Nav::Permissions, None), &data))
}
