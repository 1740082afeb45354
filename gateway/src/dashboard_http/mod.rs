//! The policy administration dashboard's HTTP side, on a host of its own (`[dashboard] host`):
//! never a site's host, so a script injected into any internal site shares no origin with admin
//! actions. The `dashboard` crate renders the pages; this module signs the user in, decides
//! what their groups may see and do, checks every form, gathers the data and audits changes.
//!
//! Every request: sign-in endpoints (the host signs in like a site host, with a handoff ticket)
//! → the session (none: sign in) → the roles (none: 403 without admin data) → for a POST, the
//! same-origin check and the form's CSRF token (bound to the session and to the dashboard, so
//! a token a site page can obtain is useless here) → the page's own role check → the handler.
//!
//! Layer 6 of the gateway (ARCHITECTURE.md, "Code map"): may import `approvals`, `approvals_http`,
//! `audit`, `config`, `http`, `inventory`, `policy_store`, `sso`, `state`, `store`, `support`.

mod access;
mod approvals_page;
mod audit_page;
mod form;
mod inventory_page;
mod overview;
mod permissions;
mod policies;
mod respond;

use crate::audit::event::{AuditEvent, EventKind};
use crate::config::DashboardConfig;
use crate::http::body::ProxyBody;
use crate::http::client::{ClientInfo, browser_scheme};
use crate::http::request_id::RequestId;
use crate::sso::identity::Identity;
use crate::sso::{self, SessionFailure, Sso};
use crate::state::Gateway;
use access::Need;
use dashboard::{Nav, Notice, Roles, Shell};
use form::Form;
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

/// A signed-in dashboard user.
pub(crate) struct Caller {
    identity: Identity,
    roles: Roles,
    csrf: String,
    logout_csrf: String,
}

/// What a handler gets.
pub(crate) struct Context<'a> {
    gateway: &'a Gateway,
    caller: &'a Caller,
    request_id: &'a RequestId,
    query: Vec<(String, String)>,
}

impl Context<'_> {
    fn shell(&self, active: Nav, notice: Option<Notice>) -> Shell<'_> {
        let user = self.caller.identity.name.as_deref().unwrap_or(&self.caller.identity.user);
        let caller = self.caller;
        Shell {
            user,
            roles: caller.roles,
            csrf: &caller.csrf,
            logout_csrf: &caller.logout_csrf,
            active,
            notice,
        }
    }

    fn param(&self, name: &str) -> &str {
        sso::login::param(&self.query, name).unwrap_or("")
    }

    fn actor(&self, kind: EventKind) -> AuditEvent {
        let identity = &self.caller.identity;
        AuditEvent::new(kind)
            .actor(&identity.user, identity.email.as_deref(), &identity.groups)
            .request(self.request_id.as_str())
    }
}

/// Answers one request to the dashboard's host.
pub async fn handle(
    gateway: &Gateway,
    sso: &Sso,
    config: &DashboardConfig,
    client: ClientInfo,
    request: Request<Incoming>,
    request_id: &RequestId,
) -> Response<ProxyBody> {
    let trusted = gateway.is_trusted_proxy(client.peer);
    let secure = browser_scheme(request.headers(), client, trusted) == "https";
    let path = request.uri().path().to_owned();
    if path.starts_with("/.toolgate/") {
        return match sso::login::site_host(sso, request, secure).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => respond::proxy_error(error, request_id),
            Err(_) => respond::not_found(),
        };
    }
    if request.method() == Method::GET && path == dashboard::STYLESHEET_PATH {
        return respond::stylesheet();
    }
    if path == "/favicon.ico" {
        return respond::no_content();
    }
    let session = match sso.session(request.headers(), secure).await {
        Ok(session) => session,
        Err(SessionFailure::Unavailable) => {
            return respond::proxy_error(crate::http::errors::ProxyError::SsoUnavailable, request_id);
        }
        Err(SessionFailure::Missing) => {
            let origin = sso::login::request_origin(&request, secure).unwrap_or_default();
            let target = request.uri().path_and_query().map_or("/", |path| path.as_str());
            let here = format!("{origin}{target}");
            return match sso::login::login_redirect(sso, request.headers(), request.method(), &here, secure) {
                Ok(redirect) => redirect,
                Err(error) => respond::proxy_error(error, request_id),
            };
        }
    };
    let identity = session.record.identity;
    let roles = access::roles(config, &identity.groups);
    if !access::any(roles) {
        let event = AuditEvent::new(EventKind::AccessDenied)
            .actor(&identity.user, identity.email.as_deref(), &identity.groups)
            .request(request_id.as_str())
            .resource("dashboard")
            .decision("deny", "not_in_dashboard_groups");
        gateway.audit.record_or_log(event).await;
        return respond::forbidden(
            &identity.user,
            "Your groups do not include the dashboard's administrators, auditors or approvers.",
            &sso.keys.csrf_token(&session.id),
        );
    }
    let csrf = sso.keys.csrf_token(&access::csrf_binding(&session.id));
    let logout_csrf = sso.keys.csrf_token(&session.id);
    let caller = Caller { identity, roles, csrf, logout_csrf };
    let query = sso::login::query_pairs(&request);
    let context = Context { gateway, caller: &caller, request_id, query };
    let method = request.method().clone();
    if method == Method::POST {
        // Unlike sign-out, a form with neither `Origin` nor `Referer` is refused: browsers send
        // `Origin` on every form POST, so its absence means something else built the request.
        if !sso::login::same_origin_request(&request, secure, false) {
            return respond::csrf_refused(&caller.identity.user, &caller.logout_csrf);
        }
        let form = match Form::read(request, gateway.config.timeouts.body_idle).await {
            Ok(form) => form,
            Err(status) => {
                return respond::error(
                    status,
                    "The form could not be read",
                    "It was too large or not a form.",
                );
            }
        };
        let token_ok = form
            .get("csrf")
            .is_some_and(|token| sso.keys.verify_csrf(&access::csrf_binding(&session.id), token));
        if !token_ok {
            return respond::csrf_refused(&caller.identity.user, &caller.logout_csrf);
        }
        return post(&context, &path, &form).await;
    }
    if method != Method::GET && method != Method::HEAD {
        return respond::error(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed",
            "The dashboard answers GET and POST.",
        );
    }
    get(&context, &path).await
}

async fn get(context: &Context<'_>, path: &str) -> Response<ProxyBody> {
    let roles = context.caller.roles;
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        [""] => overview::page(context).await,
        ["policies"] if access::allows(roles, Need::Read) => policies::page(context, None).await,
        ["policies", "export"] if access::allows(roles, Need::Read) => policies::export(context).await,
        ["policies", "versions", version] if access::allows(roles, Need::Read) => {
            policies::version(context, version).await
        }
        ["inventory"] if access::allows(roles, Need::Read) => inventory_page::page(context, None).await,
        ["permissions"] if access::allows(roles, Need::Read) => permissions::page(context).await,
        ["approvals"] if access::allows(roles, Need::SeeApprovals) => {
            approvals_page::page(context, None).await
        }
        ["audit"] if access::allows(roles, Need::Read) => audit_page::search(context).await,
        ["audit", "export"] if access::allows(roles, Need::Read) => audit_page::export(context).await,
        ["audit", "records", seq] if access::allows(roles, Need::Read) => {
            audit_page::record(context, seq).await
        }
        ["policies" | "inventory" | "permissions" | "approvals" | "audit", ..] => respond::role_refused(),
        _ => respond::not_found(),
    }
}

async fn post(context: &Context<'_>, path: &str, form: &Form) -> Response<ProxyBody> {
    let roles = context.caller.roles;
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["policies"] if access::allows(roles, Need::Edit) => policies::submit(context, form).await,
        ["policies", "rollback"] if access::allows(roles, Need::Edit) => {
            policies::roll_back(context, form).await
        }
        ["inventory", "rule"] if access::allows(roles, Need::Edit) => {
            inventory_page::write_rule(context, form).await
        }
        ["approvals", id] if access::allows(roles, Need::Approve) => {
            approvals_page::decide(context, id, form).await
        }
        ["audit", "verify"] if access::allows(roles, Need::Read) => audit_page::verify(context).await,
        ["policies" | "inventory" | "approvals" | "audit", ..] => respond::role_refused(),
        _ => respond::not_found(),
    }
}

pub(crate) use crate::support::clock::utc;
