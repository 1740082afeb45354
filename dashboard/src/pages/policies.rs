//! The policy pages: the policy in force, the editor with its problems and diff preview, the
//! version history, and one version with its rollback form.

use crate::diff::{DiffLine, render};
use crate::html::Html;
use crate::layout::{Shell, csrf_input, page};

/// The policies page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoliciesData {
    /// Where the policy in force comes from.
    pub source: PolicySource,
    /// The policy in force.
    pub text_in_force: String,
    /// The editor, when this user may edit and the dashboard manages the policy.
    pub editor: Option<Editor>,
    /// Stored versions, newest first.
    pub history: Vec<VersionRow>,
    /// The diff from the policy in force to the draft, after "Check and show diff".
    pub preview: Option<Vec<DiffLine>>,
    /// Why the draft was refused ("line N: key: message" each).
    pub problems: Vec<String>,
}

/// Where the policy in force comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicySource {
    /// A version stored by the dashboard.
    Dashboard {
        /// The version in force.
        version: u64,
    },
    /// A file managed outside the dashboard.
    File {
        /// Its path.
        path: String,
    },
    /// The demo's policy, embedded in the binary.
    Embedded,
    /// No policy configured: the built-in default.
    BuiltIn,
}

/// The editor's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Editor {
    /// The text in the editor (the policy in force, or the draft sent back).
    pub draft: String,
    /// The version the draft was started from (a save on top of another fails).
    pub base_version: u64,
    /// The comment typed so far (kept across a check).
    pub comment: String,
}

/// One stored version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionRow {
    /// Its number.
    pub version: u64,
    /// Who saved it.
    pub author: String,
    /// When.
    pub at: String,
    /// Why (the author's comment).
    pub comment: String,
    /// The text's digest (hex).
    pub digest: String,
    /// Whether it is the version in force.
    pub in_force: bool,
}

/// One version's page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionData {
    /// The version.
    pub row: VersionRow,
    /// Its text.
    pub text: String,
    /// The diff from the version in force to this one.
    pub diff_from_force: Vec<DiffLine>,
    /// Whether this user may roll back to it.
    pub can_roll_back: bool,
}

/// The policies page.
pub fn policies(shell: &Shell, data: &PoliciesData) -> String {
    let mut html = Html::new();
    source(&mut html, &data.source);
    if !data.problems.is_empty() {
        html.raw("<section class=\"problems\" role=\"alert\" aria-labelledby=\"problems-heading\">")
            .raw("<h2 id=\"problems-heading\">The draft was not saved</h2><ul>");
        for problem in &data.problems {
            html.raw("<li>").text(problem).raw("</li>");
        }
        html.raw("</ul></section>");
    }
    if let Some(preview) = &data.preview {
        html.raw("<section aria-labelledby=\"preview-heading\"><h2 id=\"preview-heading\">Changes against the policy in force</h2>")
            .markup(&render(preview, "Changes against the policy in force"))
            .raw("</section>");
    }
    if let Some(editor) = &data.editor {
        editor_form(&mut html, shell, editor);
        html.raw("<details class=\"in-force\"><summary>Policy in force</summary>");
    } else {
        html.raw("<section aria-labelledby=\"force-heading\"><h2 id=\"force-heading\">Policy in force</h2>");
    }
    html.raw("<pre class=\"code\">").text(&data.text_in_force).raw("</pre>");
    html.raw(if data.editor.is_some() { "</details>" } else { "</section>" });
    history(&mut html, &data.history);
    page(shell, "Policies", &html.finish())
}

/// One stored version: details, text, diff from the version in force, rollback.
pub fn policy_version(shell: &Shell, data: &VersionData) -> String {
    let row = &data.row;
    let mut html = Html::new();
    html.raw("<p><a href=\"/policies\">Back to the policies</a></p><dl class=\"facts\">")
        .raw("<dt>Author</dt><dd>")
        .text(&row.author)
        .raw("</dd><dt>Saved</dt><dd>")
        .text(&row.at)
        .raw("</dd><dt>Comment</dt><dd>")
        .text(&row.comment)
        .raw("</dd><dt>Digest</dt><dd class=\"hash\">")
        .text(&row.digest)
        .raw("</dd><dt>State</dt><dd>")
        .raw(if row.in_force { "in force" } else { "not in force" })
        .raw("</dd></dl>");
    if data.can_roll_back && !row.in_force {
        html.raw("<form method=\"post\" action=\"/policies/rollback\" class=\"stack\">");
        csrf_input(&mut html, shell.csrf);
        html.raw("<input type=\"hidden\" name=\"version\" value=\"")
            .num(row.version)
            .raw("\"><p class=\"field\"><label for=\"rollback-comment\">Why roll back</label>")
            .raw("<input type=\"text\" id=\"rollback-comment\" name=\"comment\" maxlength=\"500\" required></p>")
            .raw("<p><button type=\"submit\">Roll back to version ")
            .num(row.version)
            .raw("</button></p></form>");
    }
    html.raw("<section aria-labelledby=\"diff-heading\"><h2 id=\"diff-heading\">Changes from the version in force</h2>")
        .markup(&render(&data.diff_from_force, "Changes from the version in force"))
        .raw("</section><section aria-labelledby=\"text-heading\"><h2 id=\"text-heading\">Text</h2><pre class=\"code\">")
        .text(&data.text)
        .raw("</pre></section>");
    let title = format!("Policy version {}", row.version);
    page(shell, &title, &html.finish())
}

fn source(html: &mut Html, source: &PolicySource) {
    html.raw("<section class=\"source\" aria-label=\"Policy source\"><p>");
    match source {
        PolicySource::Dashboard { version } => {
            html.raw("Version ").num(*version).raw(" is in force, stored by the dashboard.");
        }
        PolicySource::File { path } => {
            html.raw("This policy comes from <code>").text(path).raw(
                "</code>, managed outside the dashboard; edit it there (it reloads on change and on SIGHUP).",
            );
        }
        PolicySource::Embedded => {
            html.raw("This is the demo's policy, embedded in the binary; it cannot be edited here.");
        }
        PolicySource::BuiltIn => {
            html.raw("No policy is configured: the built-in default is in force.");
        }
    }
    html.raw(" <a href=\"/policies/export\" download>Export the policy in force</a></p></section>");
}

fn editor_form(html: &mut Html, shell: &Shell, editor: &Editor) {
    html.raw("<section aria-labelledby=\"editor-heading\"><h2 id=\"editor-heading\">Edit</h2>")
        .raw("<form method=\"post\" action=\"/policies\" class=\"stack\">");
    csrf_input(html, shell.csrf);
    // A textarea drops one leading newline; the one written here keeps the draft's own.
    html.raw("<input type=\"hidden\" name=\"base_version\" value=\"")
        .num(editor.base_version)
        .raw("\"><p class=\"field\"><label for=\"policy-text\">Policy (TOML)</label>")
        .raw("<textarea id=\"policy-text\" name=\"policy\" class=\"code\" rows=\"24\" spellcheck=\"false\" autocapitalize=\"off\">\n")
        .text(&editor.draft)
        .raw("</textarea></p><p class=\"field\"><label for=\"policy-comment\">Comment (why this change)</label>")
        .raw("<input type=\"text\" id=\"policy-comment\" name=\"comment\" maxlength=\"500\" value=\"")
        .text(&editor.comment)
        .raw("\"></p>")
        .raw("<p class=\"actions\"><button type=\"submit\" name=\"action\" value=\"preview\">Check and show diff</button> ")
        .raw("<button type=\"submit\" name=\"action\" value=\"save\">Save as new version</button></p></form></section>");
}

fn history(html: &mut Html, history: &[VersionRow]) {
    html.raw("<section aria-labelledby=\"history-heading\"><h2 id=\"history-heading\">History</h2>");
    if history.is_empty() {
        html.raw("<p class=\"empty\">No version has been stored by the dashboard.</p></section>");
        return;
    }
    html.raw("<div class=\"scroll\"><table><caption>Stored versions, newest first</caption><thead><tr>")
        .raw("<th scope=\"col\">Version</th><th scope=\"col\">Author</th><th scope=\"col\">Time</th>")
        .raw("<th scope=\"col\">Comment</th><th scope=\"col\">Digest</th><th scope=\"col\">State</th></tr></thead><tbody>");
    for row in history {
        let digest: String = row.digest.chars().take(12).collect();
        html.raw("<tr><td><a href=\"/policies/versions/")
            .num(row.version)
            .raw("\">")
            .num(row.version)
            .raw("</a></td><td>")
            .text(&row.author)
            .raw("</td><td class=\"nowrap\">")
            .text(&row.at)
            .raw("</td><td class=\"wrap\">")
            .text(&row.comment)
            .raw("</td><td><code title=\"")
            .text(&row.digest)
            .raw("\">")
            .text(&digest)
            .raw("</code></td><td>")
            .raw(if row.in_force { "<span class=\"badge allow\">in force</span>" } else { "" })
            .raw("</td></tr>");
    }
    html.raw("</tbody></table></div></section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Nav;
    use crate::diff::lines;
    use crate::pages::test_support::{
        EVIL, admin, assert_no_injection, assert_post_forms_carry_csrf, auditor,
    };

    fn version(n: u64, text: &str, in_force: bool) -> VersionRow {
        VersionRow {
            version: n,
            author: text.into(),
            at: text.into(),
            comment: text.into(),
            digest: format!("{text}0123456789abcdef"),
            in_force,
        }
    }

    fn editable(text: &str) -> PoliciesData {
        PoliciesData {
            source: PolicySource::Dashboard { version: 3 },
            text_in_force: text.into(),
            editor: Some(Editor { draft: format!("\n{text}"), base_version: 3, comment: text.into() }),
            history: vec![version(3, text, true), version(2, text, false)],
            preview: Some(lines("a\n", &format!("a\n{text}\n"), 3)),
            problems: vec![format!("line 4: rule[0].groups[0]: {text}")],
        }
    }

    #[test]
    fn the_editor_has_its_fields_buttons_problems_and_preview() {
        let out = policies(&admin(Nav::Policies), &editable("groups = []"));
        assert!(out.contains("<form method=\"post\" action=\"/policies\""));
        assert!(out.contains("<label for=\"policy-text\">") && out.contains("name=\"policy\""));
        assert!(
            out.contains("spellcheck=\"false\" autocapitalize=\"off\">\n\ngroups = []</textarea>"),
            "leading newline kept"
        );
        assert!(out.contains("name=\"base_version\" value=\"3\""));
        assert!(out.contains("<label for=\"policy-comment\">") && out.contains("name=\"comment\""));
        assert!(out.contains("name=\"action\" value=\"preview\">Check and show diff</button>"));
        assert!(out.contains("name=\"action\" value=\"save\">Save as new version</button>"));
        assert!(
            out.contains("role=\"alert\"") && out.contains("<li>line 4: rule[0].groups[0]: groups = []</li>")
        );
        assert!(out.contains("<ins class=\"added\">+ groups = []</ins>"));
        assert!(out.contains("<a href=\"/policies/versions/2\">2</a>"));
        assert!(out.contains("<span class=\"badge allow\">in force</span>"));
        assert!(out.contains(">groups = []0</code>"), "digest cut to 12 characters");
        assert_post_forms_carry_csrf(&out, "csrf-token-123");
    }

    #[test]
    fn file_sourced_policies_say_so_and_offer_export_not_edit() {
        let data = PoliciesData {
            source: PolicySource::File { path: "/etc/toolgate/policy.toml".into() },
            text_in_force: "groups = []".into(),
            editor: None,
            history: Vec::new(),
            preview: None,
            problems: Vec::new(),
        };
        let out = policies(&auditor(Nav::Policies), &data);
        assert!(out.contains(
            "This policy comes from <code>/etc/toolgate/policy.toml</code>, managed outside the dashboard; edit it there (it reloads on change and on SIGHUP)."
        ));
        assert!(out.contains("<a href=\"/policies/export\" download>"));
        assert!(!out.contains("<textarea") && !out.contains("method=\"post\" action=\"/policies\""));
        assert!(out.contains("<pre class=\"code\">groups = []</pre>"));
    }

    #[test]
    fn a_version_page_offers_rollback_only_when_allowed_and_not_in_force() {
        let data = VersionData {
            row: version(2, "bob", false),
            text: "groups = [\"a\"]".into(),
            diff_from_force: lines("groups = []\n", "groups = [\"a\"]\n", 3),
            can_roll_back: true,
        };
        let out = policy_version(&admin(Nav::Policies), &data);
        assert!(out.contains("<h1>Policy version 2</h1>"));
        assert!(out.contains("<form method=\"post\" action=\"/policies/rollback\""));
        assert!(
            out.contains("name=\"version\" value=\"2\"") && out.contains("<label for=\"rollback-comment\">")
        );
        assert!(out.contains("<del class=\"removed\">- groups = []</del>"));
        assert_post_forms_carry_csrf(&out, "csrf-token-123");
        let read_only =
            policy_version(&auditor(Nav::Policies), &VersionData { can_roll_back: false, ..data.clone() });
        assert!(!read_only.contains("/policies/rollback"));
        let in_force = VersionData { row: version(2, "bob", true), ..data };
        assert!(!policy_version(&admin(Nav::Policies), &in_force).contains("/policies/rollback"));
    }

    #[test]
    fn every_field_is_escaped() {
        assert_no_injection(&policies(&admin(Nav::Policies), &editable(EVIL)));
        let file =
            PoliciesData { source: PolicySource::File { path: EVIL.into() }, editor: None, ..editable(EVIL) };
        assert_no_injection(&policies(&auditor(Nav::Policies), &file));
        let data = VersionData {
            row: version(2, EVIL, false),
            text: EVIL.into(),
            diff_from_force: lines("", EVIL, 1),
            can_roll_back: true,
        };
        assert_no_injection(&policy_version(&admin(Nav::Policies), &data));
        let breakout = editable("</textarea><script>alert(1)</script>");
        assert!(policies(&admin(Nav::Policies), &breakout).contains("&lt;/textarea&gt;&lt;script&gt;"));
    }
}
