//! The Policies page: the policy in force, the editor (check with a diff, save as a new
//! version), version history and rollback, or — for a policy managed in files — an export.
//!
//! Every change goes through [`apply`]: the text is compiled first (the problems, with line and
//! key, go back to the editor), then stored as the next version with compare-and-swap (a stale
//! editor is refused), then put in force atomically, then audited. The inventory page's rules
//! take the same path.

use super::form::Form;
use super::{Context, respond};
use crate::audit::event::EventKind;
use crate::http::body::ProxyBody;
use crate::policy_store::versions::{PolicyVersion, PolicyVersions, SaveError};
use crate::support::clock::unix_now;
use dashboard::{DiffLine, Editor, Nav, Notice, PoliciesData, PolicySource, VersionData, VersionRow};
use http::{Response, StatusCode};
use policy::Policy;

/// Versions listed on the page.
const HISTORY: usize = 50;
/// Unchanged lines shown around each change in a diff.
const DIFF_CONTEXT: usize = 3;

/// What a submission left to show on the page.
pub(super) struct Outcome {
    status: StatusCode,
    draft: String,
    base_version: u64,
    comment: String,
    problems: Vec<String>,
    preview: Option<Vec<DiffLine>>,
    notice: Option<Notice>,
}

/// `GET /policies` (and the page after a refused or previewed submission).
pub(super) async fn page(context: &Context<'_>, outcome: Option<Outcome>) -> Response<ProxyBody> {
    let versions = versions(context);
    let Ok(current) = current(versions.as_ref()).await else { return unavailable() };
    let history = match &versions {
        Some(versions) => match versions.history(HISTORY).await {
            Ok(history) => history,
            Err(_) => return unavailable(),
        },
        None => Vec::new(),
    };
    let in_force = current.as_ref().map_or(0, |current| current.version);
    let text_in_force = match &current {
        Some(current) => current.text.clone(),
        None => text_outside_store(context),
    };
    let editable = context.gateway.config.policy_in_store && context.caller.roles.admin;
    let notice = match context.param("saved").parse::<u64>() {
        Ok(version) if outcome.is_none() => Some(Notice::Success(format!("Version {version} is in force."))),
        _ => None,
    };
    let (status, editor, problems, preview, notice) = match outcome {
        Some(outcome) => (
            outcome.status,
            editable.then_some(Editor {
                draft: outcome.draft,
                base_version: outcome.base_version,
                comment: outcome.comment,
            }),
            outcome.problems,
            outcome.preview,
            outcome.notice,
        ),
        None => (
            StatusCode::OK,
            editable.then(|| Editor {
                draft: text_in_force.clone(),
                base_version: in_force,
                comment: String::new(),
            }),
            Vec::new(),
            None,
            notice,
        ),
    };
    let data = PoliciesData {
        source: source(context, in_force),
        text_in_force,
        editor,
        history: history.iter().map(|version| row(version, in_force)).collect(),
        preview,
        problems,
    };
    respond::page(status, dashboard::policies(&context.shell(Nav::Policies, notice), &data))
}

/// `POST /policies`: `action=preview` checks and shows the diff; `action=save` also stores.
pub(super) async fn submit(context: &Context<'_>, form: &Form) -> Response<ProxyBody> {
    let draft = form.text("policy").replace("\r\n", "\n");
    let base_version = form.text("base_version").parse::<u64>().unwrap_or(0);
    let save = form.text("action") == "save";
    let outcome = |status, problems, preview, notice| Outcome {
        status,
        draft: draft.clone(),
        base_version,
        comment: form.text("comment").to_owned(),
        problems,
        preview,
        notice,
    };
    let Some(versions) = context.gateway.policy_versions.as_ref() else {
        return managed_elsewhere();
    };
    if !save {
        return match compile(context, &draft) {
            Err(problems) => {
                page(context, Some(outcome(StatusCode::UNPROCESSABLE_ENTITY, problems, None, None))).await
            }
            Ok(_) => {
                let in_force = current_text(context).await;
                let diff = dashboard::diff::lines(&in_force, &draft, DIFF_CONTEXT);
                let notice = Notice::Success("The policy is valid. Review the changes, then save.".into());
                page(context, Some(outcome(StatusCode::OK, Vec::new(), Some(diff), Some(notice)))).await
            }
        };
    }
    match apply(context, versions, &draft, base_version, form.text("comment"), "dashboard_edit").await {
        Ok(version) => respond::see_other(&format!("/policies?saved={}", version.version)),
        Err(Refusal::Invalid(problems)) => {
            page(context, Some(outcome(StatusCode::UNPROCESSABLE_ENTITY, problems, None, None))).await
        }
        Err(Refusal::Stale(message)) => {
            page(context, Some(outcome(StatusCode::CONFLICT, Vec::new(), None, Some(Notice::Error(message)))))
                .await
        }
        Err(Refusal::Unavailable(response)) => response,
    }
}

/// `POST /policies/rollback`: the text of an earlier version becomes the newest version.
pub(super) async fn roll_back(context: &Context<'_>, form: &Form) -> Response<ProxyBody> {
    let Some(versions) = context.gateway.policy_versions.as_ref() else {
        return managed_elsewhere();
    };
    let Ok(wanted) = form.text("version").parse::<u64>() else {
        return respond::error(
            StatusCode::BAD_REQUEST,
            "No such version",
            "Pick a version from the history.",
        );
    };
    let (old, current) = match (versions.get(wanted).await, versions.current().await) {
        (Ok(Some(old)), Ok(Some(current))) => (old, current),
        (Ok(None), _) => {
            return respond::error(
                StatusCode::NOT_FOUND,
                "No such version",
                "Pick a version from the history.",
            );
        }
        _ => return unavailable(),
    };
    let comment = format!("rollback to version {wanted}: {}", form.text("comment"));
    match apply(context, versions, &old.text, current.version, &comment, "rollback").await {
        Ok(version) => respond::see_other(&format!("/policies?saved={}", version.version)),
        Err(Refusal::Invalid(problems)) => respond::error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "That version no longer compiles",
            &format!("The sites changed since it was saved:\n{}", problems.join("\n")),
        ),
        Err(Refusal::Stale(message)) => respond::error(StatusCode::CONFLICT, "The policy changed", &message),
        Err(Refusal::Unavailable(response)) => response,
    }
}

/// `GET /policies/versions/{n}`: one version, and what it would change against the one in force.
pub(super) async fn version(context: &Context<'_>, wanted: &str) -> Response<ProxyBody> {
    let Some(versions) = versions(context) else { return respond::not_found() };
    let Ok(wanted) = wanted.parse::<u64>() else { return respond::not_found() };
    let (old, current) = match (versions.get(wanted).await, versions.current().await) {
        (Ok(Some(old)), Ok(current)) => (old, current),
        (Ok(None), _) => return respond::not_found(),
        _ => return unavailable(),
    };
    let in_force = current.as_ref().map_or(0, |current| current.version);
    let text_in_force = current.map(|current| current.text).unwrap_or_default();
    let data = VersionData {
        row: row(&old, in_force),
        diff_from_force: dashboard::diff::lines(&text_in_force, &old.text, DIFF_CONTEXT),
        text: old.text,
        can_roll_back: context.caller.roles.admin && wanted != in_force,
    };
    respond::page(StatusCode::OK, dashboard::policy_version(&context.shell(Nav::Policies, None), &data))
}

/// `GET /policies/export`: the policy in force as a file.
pub(super) async fn export(context: &Context<'_>) -> Response<ProxyBody> {
    respond::download("application/toml; charset=utf-8", "policy.toml", current_text(context).await)
}

/// Why a change did not take effect.
pub(super) enum Refusal {
    /// The text does not compile: its problems, each with line and key.
    Invalid(Vec<String>),
    /// Another version was saved since the editor was opened.
    Stale(String),
    /// The store or the audit log failed: this response says so.
    Unavailable(Response<ProxyBody>),
}

/// Compiles, stores, puts in force and audits `text` as the version after `base`.
pub(super) async fn apply(
    context: &Context<'_>,
    versions: &PolicyVersions,
    text: &str,
    base: u64,
    comment: &str,
    reason: &str,
) -> Result<PolicyVersion, Refusal> {
    let compiled = match compile(context, text) {
        Ok(compiled) => compiled,
        Err(problems) => {
            let mut event =
                context.actor(EventKind::PolicyRejected).resource("policy").decision("rejected", reason);
            event.explanation = Some(serde_json::json!({ "problems": problems }));
            context
                .gateway
                .audit
                .record(event)
                .await
                .map_err(|_| Refusal::Unavailable(audit_unavailable()))?;
            return Err(Refusal::Invalid(problems));
        }
    };
    let author = context.caller.identity.user.clone();
    let stored = match versions.save(base, text, &author, comment, unix_now()).await {
        Ok(stored) => stored,
        Err(conflict @ SaveError::Conflict { .. }) => return Err(Refusal::Stale(conflict.to_string())),
        Err(SaveError::Store(_)) => return Err(Refusal::Unavailable(unavailable())),
    };
    context.gateway.policy.install(compiled, stored.version);
    let mut event = context
        .actor(EventKind::PolicyChange)
        .resource(&format!("policy:v{}", stored.version))
        .decision("applied", reason);
    event.explanation = Some(serde_json::json!({
        "version": stored.version,
        "based_on": base,
        "digest": stored.digest,
        "comment": stored.comment,
    }));
    // The version is stored and in force; an audit failure is logged by `record_or_log` and
    // shows in the audit metrics (the change cannot be undone by failing the response).
    context.gateway.audit.record_or_log(event).await;
    tracing::info!(version = stored.version, reason, "dashboard policy version in force");
    Ok(stored)
}

fn compile(context: &Context<'_>, text: &str) -> Result<Policy, Vec<String>> {
    Policy::parse(text, "policy", &context.gateway.policy.sites())
        .map_err(|errors| errors.iter().map(ToString::to_string).collect())
}

fn versions(context: &Context<'_>) -> Option<PolicyVersions> {
    context.gateway.policy_versions.clone()
}

/// The refusal of an edit when the policy is managed in a file.
pub(super) fn managed_elsewhere() -> Response<ProxyBody> {
    respond::error(StatusCode::CONFLICT, "Managed elsewhere", "This policy comes from a file; edit the file.")
}

async fn current(
    versions: Option<&PolicyVersions>,
) -> Result<Option<PolicyVersion>, crate::store::StoreError> {
    match versions {
        Some(versions) => versions.current().await,
        None => Ok(None),
    }
}

/// The text of the policy in force.
async fn current_text(context: &Context<'_>) -> String {
    match versions(context) {
        Some(versions) => {
            versions.current().await.ok().flatten().map(|current| current.text).unwrap_or_default()
        }
        None => text_outside_store(context),
    }
}

/// The policy text when the store does not hold it: the file as it is now, or the embedded text.
fn text_outside_store(context: &Context<'_>) -> String {
    crate::policy_store::reload::source_text(&context.gateway.config)
        .map(|(text, _)| text)
        .unwrap_or_default()
}

fn source(context: &Context<'_>, version: u64) -> PolicySource {
    let config = &context.gateway.config;
    match (config.policy_in_store, &config.policy_file, config.embedded_policy) {
        (true, _, _) => PolicySource::Dashboard { version },
        (false, _, Some(_)) => PolicySource::Embedded,
        (false, Some(path), None) => PolicySource::File { path: path.display().to_string() },
        (false, None, None) => PolicySource::BuiltIn,
    }
}

fn row(version: &PolicyVersion, in_force: u64) -> VersionRow {
    VersionRow {
        version: version.version,
        author: version.author.clone(),
        at: super::utc(version.at),
        comment: version.comment.clone(),
        digest: version.digest.clone(),
        in_force: version.version == in_force,
    }
}

fn unavailable() -> Response<ProxyBody> {
    respond::store_unavailable(
        "The policy versions cannot be read or written right now; nothing was changed.",
    )
}

fn audit_unavailable() -> Response<ProxyBody> {
    respond::error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Audit log unavailable",
        "The change could not be audited, so it was not made.",
    )
}
