//! `GET /.toolgate/agent/session`: who the runtime works for, its CSRF token, whether page tools
//! are on for this user here, the limits it must respect, and which of the names it asks about
//! (`?tool=a&tool=b&context=c`, e.g. the ones in the page it was loaded with) are visible, and
//! whether a turn is waiting to continue here (`state::continuations`).

use super::{Caller, catalog, csrf, json};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::state::Gateway;
use http::{Response, StatusCode};
use policy::{ContextDecision, ContextName, ToolRef};
use serde_json::json;

/// The session document; `query` may name tools and contexts to decide.
pub fn respond(gateway: &Gateway, site: &Site, caller: &Caller, query: &str) -> Response<ProxyBody> {
    let (id, name) = match &caller.identity {
        Some(identity) => {
            (identity.user.as_str(), identity.name.as_deref().unwrap_or(identity.user.as_str()))
        }
        None => (super::ANONYMOUS, "Anonymous"),
    };
    let tools_on = super::page_tools_on(gateway, site, caller);
    let continuation = continuation(gateway, site, caller);
    let body = json!({
        "user": {"id": id, "name": name},
        "site": site.id.as_str(),
        "csrf": csrf::token(gateway, site, caller),
        "page_tools": tools_on,
        "visible": visible(gateway, site, caller, tools_on, query),
        "continuation": continuation,
        "limits": {
            "catalog_bytes": catalog::MAX_CATALOG_BYTES,
            "tools": catalog::MAX_TOOLS,
            "contexts": catalog::MAX_CONTEXTS,
            // One setting governs how long a tool may run, on the page and at the gateway.
            "call_timeout_ms": u64::try_from(gateway.config.agent.tool_timeout.as_millis()).unwrap_or(u64::MAX),
        },
    });
    json(StatusCode::OK, &body)
}

/// A turn a form submission took away from the previous page, for this page to continue: kept
/// already (the tool and what the site did), or still waiting for the site's answer (`pending`).
fn continuation(gateway: &Gateway, site: &Site, caller: &Caller) -> Option<serde_json::Value> {
    let owner = caller.owner(gateway, site);
    if let Some((tool, outcome)) = gateway.continuations.pending(&owner.key()) {
        return Some(json!({"tool": tool, "outcome": outcome}));
    }
    let waiting = gateway.turns.running_of(&owner).iter().any(|turn| {
        gateway.outcomes.navigated_recently(
            &owner.key(),
            &format!("{turn}-"),
            gateway.config.agent.tool_timeout,
        )
    });
    waiting.then(|| json!({"tool": null, "outcome": "pending"}))
}

/// Of the names in `query` (`tool=` and `context=`, repeated; invalid names and names beyond
/// the limits are ignored), the ones this user may see.
fn visible(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    tools_on: bool,
    query: &str,
) -> serde_json::Value {
    let (mut tools, mut contexts) = (Vec::new(), Vec::new());
    if tools_on {
        let view = gateway.policy.current().view(&caller.subject(), &site.id);
        for (key, name) in url::form_urlencoded::parse(query.as_bytes()) {
            if !catalog::valid_name(&name) {
                continue;
            }
            match key.as_ref() {
                "tool"
                    if tools.len() < catalog::MAX_TOOLS
                        && !view.tool(&ToolRef::named(name.as_ref())).0.is_deny() =>
                {
                    tools.push(name.into_owned());
                }
                "context"
                    if contexts.len() < catalog::MAX_CONTEXTS
                        && matches!(
                            view.context(&ContextName::new(name.as_ref())).0,
                            ContextDecision::Allow { .. }
                        ) =>
                {
                    contexts.push(name.into_owned());
                }
                _ => {}
            }
        }
    }
    json!({"tools": tools, "contexts": contexts})
}
