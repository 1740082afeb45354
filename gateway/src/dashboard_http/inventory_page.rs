//! The Tool inventory page: every tool and context pages reported, per site, with its dialect,
//! schema, first and last sighting and change flags, and one-click rules: allow, approve or deny
//! one tool for one group (or everyone), written into the policy through the same validated,
//! versioned, audited path as an edit on the Policies page.

use super::form::Form;
use super::policies::{self, Refusal};
use super::{Context, respond};
use crate::http::body::ProxyBody;
use crate::inventory::{EntryKind, InventoryEntry};
use dashboard::rules::{Effect, GeneratedRule};
use dashboard::{InventoryData, InventoryRow, InventorySite, Nav, Notice};
use http::{Response, StatusCode};
use policy::{ContextName, Subject, ToolRef, UserId};

/// `GET /inventory`.
pub(super) async fn page(context: &Context<'_>, notice: Option<(StatusCode, Notice)>) -> Response<ProxyBody> {
    let gateway = context.gateway;
    let entries = match gateway.inventory.list(None).await {
        Ok(entries) => entries,
        Err(_) => {
            return respond::store_unavailable("The inventory cannot be read right now.");
        }
    };
    let policy = gateway.policy.current();
    let mut sites: Vec<InventorySite> = Vec::new();
    for entry in &entries {
        let row = row(&policy, entry);
        match sites.last_mut() {
            Some(site) if site.site == entry.site => site.entries.push(row),
            _ => sites.push(InventorySite { site: entry.site.clone(), entries: vec![row], sandboxed: None }),
        }
    }
    // Pages served without the runtime (CSP sandbox): their tools are off, and no catalog comes.
    for configured in &gateway.config.sites {
        let Ok(Some(pages)) = gateway.inventory.sandboxed(configured.id.as_str()).await else { continue };
        let note = format!(
            "{} page loads served sandboxed (CSP sandbox without allow-same-origin), last {}: no runtime and \
             no page tools there. Latest: {}",
            pages.count,
            super::utc(pages.last_seen),
            pages.recent.join(", ")
        );
        match sites.iter_mut().find(|site| site.site == configured.id.as_str()) {
            Some(site) => site.sandboxed = Some(note),
            None => sites.push(InventorySite {
                site: configured.id.as_str().to_owned(),
                entries: Vec::new(),
                sandboxed: Some(note),
            }),
        }
    }
    let notice = match (notice, context.param("written")) {
        (Some(notice), _) => Some(notice),
        (None, "") => None,
        (None, version) => Some((
            StatusCode::OK,
            Notice::Success(format!("Rule written: policy version {version} is in force.")),
        )),
    };
    let (status, notice) = notice.map_or((StatusCode::OK, None), |(status, notice)| (status, Some(notice)));
    let data = InventoryData {
        sites,
        groups: policy.declared_groups().map(ToString::to_string).collect(),
        can_edit: context.caller.roles.admin && gateway.config.policy_in_store,
    };
    respond::page(status, dashboard::inventory(&context.shell(Nav::Inventory, notice), &data))
}

/// `POST /inventory/rule`: `site`, `kind`, `name`, `group` ("" = everyone), `effect`.
pub(super) async fn write_rule(context: &Context<'_>, form: &Form) -> Response<ProxyBody> {
    let Some(versions) = context.gateway.policy_versions.as_ref() else {
        return policies::managed_elsewhere();
    };
    let Some(kind) = dashboard::EntryKind::parse(form.text("kind")) else {
        return respond::error(StatusCode::BAD_REQUEST, "Unknown kind", "Pick a tool or a context.");
    };
    let Some(effect) = Effect::parse(form.text("effect")) else {
        return respond::error(StatusCode::BAD_REQUEST, "Unknown effect", "Pick allow, approve or deny.");
    };
    let site = form.text("site");
    if !context.gateway.config.sites.iter().any(|known| known.id.as_str() == site) {
        return respond::error(StatusCode::BAD_REQUEST, "Unknown site", "Pick a site from the inventory.");
    }
    let group = Some(form.text("group").to_owned()).filter(|group| !group.is_empty());
    let rule =
        GeneratedRule { site: site.to_owned(), kind, name: form.text("name").to_owned(), group, effect };
    let current = match versions.current().await {
        Ok(Some(current)) => current,
        _ => {
            return respond::store_unavailable("The policy cannot be read right now.");
        }
    };
    let text = match dashboard::rules::upsert(&current.text, &rule) {
        Ok(text) => text,
        Err(error) => return respond::error(StatusCode::BAD_REQUEST, "No rule written", &error.to_string()),
    };
    let comment = format!(
        "inventory: {} {} {:?} for {}",
        form.text("effect"),
        form.text("kind"),
        rule.name,
        rule.group.as_deref().unwrap_or("everyone")
    );
    match policies::apply(context, versions, &text, current.version, &comment, "inventory_rule").await {
        Ok(version) => respond::see_other(&format!("/inventory?written={}", version.version)),
        Err(Refusal::Invalid(problems)) => {
            let message = format!(
                "The rule would make the policy invalid, so nothing was written: {}",
                problems.join("; ")
            );
            page(context, Some((StatusCode::UNPROCESSABLE_ENTITY, Notice::Error(message)))).await
        }
        Err(Refusal::Stale(message)) => {
            page(context, Some((StatusCode::CONFLICT, Notice::Error(message)))).await
        }
        Err(Refusal::Unavailable(response)) => response,
    }
}

fn row(policy: &policy::Policy, entry: &InventoryEntry) -> InventoryRow {
    let everyone = Subject { user: UserId::new("-"), email: None, groups: Vec::new() };
    let view = policy.view(&everyone, &policy::SiteId::new(&entry.site));
    let (kind, decision) = match entry.kind {
        EntryKind::Tool => {
            (dashboard::EntryKind::Tool, view.tool(&ToolRef::named(entry.name.as_str())).0.to_string())
        }
        EntryKind::Context => {
            (dashboard::EntryKind::Context, view.context(&ContextName::new(&entry.name)).0.to_string())
        }
    };
    let changed = entry.changed.as_ref().map(|change| {
        let what = match (change.description, change.schema) {
            (true, true) => "description and schema",
            (true, false) => "description",
            _ => "schema",
        };
        format!("{what} changed {}× (last {})", change.count, super::utc(change.at))
    });
    InventoryRow {
        kind,
        name: entry.name.clone(),
        dialect: entry.source.clone(),
        description: entry.description.clone(),
        schema: serde_json::to_string_pretty(&entry.schema).unwrap_or_default(),
        first_seen: super::utc(entry.first_seen),
        last_seen: super::utc(entry.last_seen),
        changed,
        target: entry.target.clone(),
        same_name_different_targets: entry.same_name_different_targets,
        decision_everyone: Some(decision),
    }
}
