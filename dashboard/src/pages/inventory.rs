//! The tool inventory page: every tool and context the pages reported, per site, with its
//! dialect, schema, first and last sighting and change flag, and (for admins) the one-click form
//! that writes a policy rule through the validated edit path.

use crate::html::Html;
use crate::layout::{Shell, csrf_input, page};
use crate::pages::text_or_dash;
use crate::rules::EntryKind;

/// The inventory page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InventoryData {
    /// Sites with what they reported.
    pub sites: Vec<InventorySite>,
    /// The policy's declared groups (the rule form's group choices).
    pub groups: Vec<String>,
    /// Whether this user may write rules (admin, and the dashboard manages the policy).
    pub can_edit: bool,
}

/// One site's entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InventorySite {
    /// Site id.
    pub site: String,
    /// Tools and contexts seen there.
    pub entries: Vec<InventoryRow>,
    /// Pages served without the runtime (CSP sandbox), in words, if any.
    pub sandboxed: Option<String>,
}

/// One tool or context as the inventory recorded it (all of it page-supplied: hostile).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InventoryRow {
    /// Tool or context.
    pub kind: EntryKind,
    /// Its name.
    pub name: String,
    /// The dialect that declared it (voix, webmcp_declarative, …).
    pub dialect: String,
    /// The page's description.
    pub description: String,
    /// Its input schema as pretty JSON ("" for contexts).
    pub schema: String,
    /// First reported.
    pub first_seen: String,
    /// Last reported.
    pub last_seen: String,
    /// What changed since it was first seen, if anything.
    pub changed: Option<String>,
    /// For a form tool: where its form submits (`POST /staff/add/`).
    pub target: Option<String>,
    /// Another entry has the same name and submits elsewhere.
    pub same_name_different_targets: bool,
    /// The decision for a user in no group, e.g. "deny (default)".
    pub decision_everyone: Option<String>,
}

/// The inventory page.
pub fn inventory(shell: &Shell, data: &InventoryData) -> String {
    let mut html = Html::new();
    if data.sites.iter().all(|site| site.entries.is_empty() && site.sandboxed.is_none()) {
        html.raw("<p class=\"empty\">No page has reported a tool or context yet.</p>");
    }
    for (site_index, site) in data.sites.iter().enumerate() {
        if site.entries.is_empty() && site.sandboxed.is_none() {
            continue;
        }
        html.raw("<section aria-labelledby=\"site-")
            .count(site_index)
            .raw("\"><h2 id=\"site-")
            .count(site_index)
            .raw("\">")
            .text(&site.site)
            .raw("</h2>");
        if let Some(note) = &site.sandboxed {
            html.raw("<p class=\"notice\" data-note=\"sandboxed\">").text(note).raw("</p>");
        }
        if site.entries.is_empty() {
            html.raw("</section>");
            continue;
        }
        html.raw("<div class=\"scroll\"><table class=\"inventory\"><caption>Tools and contexts seen on ")
            .text(&site.site)
            .raw("</caption><thead><tr><th scope=\"col\">Name</th><th scope=\"col\">Kind</th>")
            .raw("<th scope=\"col\">Dialect</th><th scope=\"col\">Description</th><th scope=\"col\">First seen</th>")
            .raw("<th scope=\"col\">Last seen</th><th scope=\"col\">Changed</th><th scope=\"col\">Everyone gets</th>");
        if data.can_edit {
            html.raw("<th scope=\"col\">Rule</th>");
        }
        html.raw("</tr></thead><tbody>");
        for entry in &site.entries {
            row(&mut html, shell, data, &site.site, entry);
        }
        html.raw("</tbody></table></div></section>");
    }
    page(shell, "Tool inventory", &html.finish())
}

fn row(html: &mut Html, shell: &Shell, data: &InventoryData, site: &str, entry: &InventoryRow) {
    html.raw("<tr><th scope=\"row\" class=\"wrap\"><code>").text(&entry.name).raw("</code>");
    if let Some(target) = &entry.target {
        html.raw("<br><span class=\"muted\">submits to <code>").text(target).raw("</code></span>");
    }
    html.raw("</th><td>").raw(entry.kind.as_str()).raw("</td><td>");
    text_or_dash(html, &entry.dialect);
    html.raw("</td><td class=\"wrap description\">");
    text_or_dash(html, &entry.description);
    if !entry.schema.trim().is_empty() {
        html.raw("<details><summary>Schema</summary><pre class=\"code\">")
            .text(&entry.schema)
            .raw("</pre></details>");
    }
    html.raw("</td><td class=\"nowrap\">")
        .text(&entry.first_seen)
        .raw("</td><td class=\"nowrap\">")
        .text(&entry.last_seen)
        .raw("</td><td class=\"wrap\">");
    match &entry.changed {
        Some(change) => html.raw("<span class=\"flag\">changed</span> ").text(change),
        None => html.raw("<span class=\"muted\">no</span>"),
    };
    if entry.same_name_different_targets {
        // One rule matching two kinds of page, usually: scope it with `path` or `action`.
        html.raw("<br><span class=\"flag\">same name, different targets</span>");
    }
    html.raw("</td><td>");
    match &entry.decision_everyone {
        Some(decision) => html.text(decision),
        None => html.raw("<span class=\"muted\">—</span>"),
    };
    html.raw("</td>");
    if data.can_edit {
        html.raw("<td><form method=\"post\" action=\"/inventory/rule\" class=\"rule-form\">");
        csrf_input(html, shell.csrf);
        html.raw("<input type=\"hidden\" name=\"site\" value=\"")
            .text(site)
            .raw("\"><input type=\"hidden\" name=\"kind\" value=\"")
            .raw(entry.kind.as_str())
            .raw("\"><input type=\"hidden\" name=\"name\" value=\"")
            .text(&entry.name)
            .raw("\"><fieldset><legend>Write a policy rule</legend><label>For <select name=\"group\">");
        super::options(html, "everyone", &data.groups, "");
        html.raw("</select></label> ");
        let effects: &[(&str, &str)] = match entry.kind {
            EntryKind::Tool => &[("allow", "Allow"), ("approve", "Approve"), ("deny", "Deny")],
            EntryKind::Context => &[("allow", "Allow"), ("deny", "Deny")],
        };
        for (value, label) in effects {
            html.raw("<button type=\"submit\" name=\"effect\" value=\"")
                .raw(value)
                .raw("\" class=\"effect-")
                .raw(value)
                .raw("\">")
                .raw(label)
                .raw("<span class=\"visually-hidden\"> ")
                .text(&entry.name)
                .raw("</span></button> ");
        }
        html.raw("</fieldset></form></td>");
    }
    html.raw("</tr>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Nav;
    use crate::pages::test_support::{
        EVIL, admin, assert_no_injection, assert_post_forms_carry_csrf, auditor,
    };

    fn entry(kind: EntryKind, text: &str) -> InventoryRow {
        InventoryRow {
            kind,
            name: text.into(),
            dialect: text.into(),
            description: text.into(),
            schema: format!("{{\n  \"description\": {text:?}\n}}"),
            first_seen: text.into(),
            last_seen: text.into(),
            changed: Some(text.into()),
            target: Some(text.into()),
            same_name_different_targets: true,
            decision_everyone: Some(text.into()),
        }
    }

    fn sample(text: &str, can_edit: bool) -> InventoryData {
        InventoryData {
            sites: vec![InventorySite {
                site: text.into(),
                entries: vec![entry(EntryKind::Tool, text), entry(EntryKind::Context, text)],
                sandboxed: Some(text.into()),
            }],
            groups: vec!["hr-staff".into(), text.into()],
            can_edit,
        }
    }

    #[test]
    fn admins_get_one_rule_form_per_entry() {
        let out = inventory(&admin(Nav::Inventory), &sample("add_task", true));
        assert_eq!(out.matches("action=\"/inventory/rule\"").count(), 2);
        assert!(
            out.contains("name=\"site\" value=\"add_task\"")
                && out.contains("name=\"name\" value=\"add_task\"")
        );
        assert!(
            out.contains("name=\"kind\" value=\"tool\"") && out.contains("name=\"kind\" value=\"context\"")
        );
        assert!(out.contains("<legend>Write a policy rule</legend>"));
        assert!(out.contains(
            "<option value=\"\" selected>everyone</option><option value=\"hr-staff\">hr-staff</option>"
        ));
        // Approve is offered for the tool only.
        assert_eq!(out.matches("name=\"effect\" value=\"approve\"").count(), 1);
        assert_eq!(out.matches("name=\"effect\" value=\"allow\"").count(), 2);
        assert_eq!(out.matches("name=\"effect\" value=\"deny\"").count(), 2);
        assert!(out.contains("<details><summary>Schema</summary><pre class=\"code\">{"));
        assert!(out.contains("<span class=\"flag\">changed</span> add_task"));
        assert!(out.contains("submits to <code>add_task</code>"));
        assert!(out.contains("<p class=\"notice\" data-note=\"sandboxed\">add_task</p>"));
        assert!(out.contains("<span class=\"flag\">same name, different targets</span>"));
        assert!(out.contains("<div class=\"scroll\"><table class=\"inventory\">"));
        assert_post_forms_carry_csrf(&out, "csrf-token-123");
    }

    #[test]
    fn readers_get_no_forms_and_empty_inventories_say_so() {
        let out = inventory(&auditor(Nav::Inventory), &sample("add_task", false));
        assert!(
            !out.contains("<form method=\"post\" action=\"/inventory") && !out.contains("name=\"effect\"")
        );
        assert!(out.contains("<code>add_task</code>"));
        let empty = inventory(&admin(Nav::Inventory), &InventoryData::default());
        assert!(empty.contains("No page has reported a tool or context yet."));
    }

    #[test]
    fn every_field_is_escaped() {
        assert_no_injection(&inventory(&admin(Nav::Inventory), &sample(EVIL, true)));
    }
}
