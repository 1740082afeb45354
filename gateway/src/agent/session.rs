//! `GET /.toolgate/agent/session`: who the runtime works for, its CSRF token, whether page tools
//! are on for this user here, and the limits it must respect.

use super::{Caller, catalog, csrf, json};
use crate::body::ProxyBody;
use crate::config::Site;
use crate::state::Gateway;
use http::{Response, StatusCode};
use serde_json::json;

/// How long the runtime waits for a page's tool to answer, unless a call says otherwise.
const CALL_TIMEOUT_MS: u64 = 30_000;

/// The session document.
pub fn respond(gateway: &Gateway, site: &Site, caller: &Caller) -> Response<ProxyBody> {
    let (id, name) = match &caller.identity {
        Some(identity) => {
            (identity.user.as_str(), identity.name.as_deref().unwrap_or(identity.user.as_str()))
        }
        None => (super::ANONYMOUS, "Anonymous"),
    };
    let body = json!({
        "user": {"id": id, "name": name},
        "site": site.id.as_str(),
        "csrf": csrf::token(gateway, site, caller),
        "page_tools": page_tools_on(gateway, site, caller),
        "limits": {
            "catalog_bytes": catalog::MAX_CATALOG_BYTES,
            "tools": catalog::MAX_TOOLS,
            "contexts": catalog::MAX_CONTEXTS,
            "call_timeout_ms": CALL_TIMEOUT_MS,
        },
    });
    json(StatusCode::OK, &body)
}

/// Page tools are on unless the site switches them off or the policy offers this user nothing.
pub fn page_tools_on(gateway: &Gateway, site: &Site, caller: &Caller) -> bool {
    site.page_tools && gateway.policy.current().view(&caller.subject(), &site.id).offers_tools()
}
