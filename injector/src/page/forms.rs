//! Forms as tools: applying site rules to legacy forms, filtering the page's own declarative
//! `<form toolname>` tools, and (auto mode) deriving tools for the remaining forms.
//!
//! A form whose `toolname` only a framework binds (`:toolname`, see `bindings.rs`) is left to
//! the framework and the runtime, like a `<tool :name>`; where the proxy refuses or replaces a
//! form's tool attributes it removes their bindings too, so a framework cannot render them back.
//!
//! Rules and declarative forms are decided at the start tag. An auto form's legend, labels and
//! submit text only come after its start tag, so its output is held back (see `output.rs`) until
//! its end tag and the start tag is completed then; a form whose output outgrows `HOLD_LIMIT`
//! is released early with what the start tag and the preceding heading give. Either way the
//! output depends only on the page, never on how it was chunked.

use std::borrow::Cow;

use lol_html::html_content::{EndTag, StreamingHandlerSink};
use lol_html::{ElementContentHandlers, send};

use super::attribute_text::{decode_character_references, escape_to_ascii};
use super::bindings::{is_bound, remove_bindings};
use super::form_names::{FormFacts, is_valid_name};
use super::path_glob::resolve_action_path;
use super::policy::ToolKind;
use super::selectors::{on_element, selector};
use super::shared::{FilterState, PageState, SharedState, lock};
use super::survey::{Survey, Tag};
use state::HeldForm;

/// Most output held back for one auto form before it is released with start-tag facts only.
pub(super) const HOLD_LIMIT: usize = 64 * 1024;

/// Bound for each piece of collected text (heading, legend, label, submit), in bytes.
const TEXT_LIMIT: usize = 1024;

/// At most this many labels are collected per form.
const MAX_LABELS: usize = 12;

/// The WebMCP declarative attributes a form tool carries.
const TOOL_ATTRIBUTES: [&str; 3] = ["toolname", "tooldescription", "toolautosubmit"];

/// Adds the form handlers, after the element filters (the controls' only for the kinds the page
/// may have, `survey`). Handler order matters: lol_html runs the handlers of one element in
/// registration order, so the rule handlers record their match before the `form` handler decides.
pub(super) fn append_handlers(
    mut settings: send::Settings<'static, 'static>,
    state: &SharedState,
    survey: &Survey,
) -> send::Settings<'static, 'static> {
    let rules = match lock(state).filter.as_ref() {
        Some(filter) => std::sync::Arc::clone(&filter.rules),
        None => return settings,
    };
    let page_path = rules.page_path.clone().unwrap_or_else(|| "/".to_owned());
    for (index, rule) in rules.rules.iter().enumerate() {
        let state = SharedState::clone(state);
        let method = rule.method.clone();
        let action = rule.action.clone();
        let page_path = page_path.clone();
        let handler = move |element: &mut send::Element<'_, '_>| {
            // The form's method as the browser reads it: `get` unless it says `post` or `dialog`.
            let form_method = element.get_attribute("method").map(|m| m.trim().to_ascii_uppercase());
            let form_method = match form_method.as_deref() {
                Some("POST") => "POST",
                Some("DIALOG") => "DIALOG",
                _ => "GET",
            };
            let method_fits = method.as_deref().is_none_or(|wanted| wanted == form_method);
            // Where the form submits, resolved against the page as the browser will.
            let action_fits = action.is_empty() || {
                let written =
                    element.get_attribute("action").map(|raw| decode_character_references(&raw).into_owned());
                let resolved = resolve_action_path(&page_path, written.as_deref());
                action.iter().any(|glob| glob.matches(&resolved))
            };
            if element.tag_name() == "form" && method_fits && action_fits {
                with_filter(&state, |_, filter| {
                    filter.forms.rule_match.get_or_insert(index);
                });
            }
            Ok(())
        };
        settings = settings.append_element_content_handler((
            Cow::Owned(rule.selector.clone()),
            ElementContentHandlers::default().element(handler),
        ));
    }
    let form_state = SharedState::clone(state);
    settings = settings.append_element_content_handler(on_element(selector!("form"), move |element| {
        form_start(&form_state, element)
    }));
    if rules.has_params() {
        let controls = [
            (Tag::Input, selector!("input[name]")),
            (Tag::Select, selector!("select[name]")),
            (Tag::Textarea, selector!("textarea[name]")),
        ];
        for (tag, selector) in controls {
            if survey.may_have(tag) {
                let state = SharedState::clone(state);
                settings = settings.append_element_content_handler(on_element(selector, move |element| {
                    describe_control(&state, element)
                }));
            }
        }
    }
    if rules.auto() {
        settings = collectors::append_handlers(settings, state);
    }
    settings
}

/// Called by the sink before `incoming` bytes are added: releases a held form that would
/// outgrow the limit.
pub(super) fn before_output(page: &mut PageState, incoming: usize) {
    if let Some((owner, held)) = page.output.held()
        && held.saturating_add(incoming) > HOLD_LIMIT
    {
        release(page, owner, false);
    }
}

/// Called after the last input: a form left open at the end of the document is complete.
pub(super) fn finish(page: &mut PageState) {
    if let Some((owner, _)) = page.output.held() {
        release(page, owner, true);
    }
}

fn with_filter<T>(
    state: &SharedState,
    action: impl FnOnce(&mut PageState, &mut FilterState) -> T,
) -> Option<T> {
    let mut page = lock(state);
    let mut filter = page.filter.take()?;
    let result = action(&mut page, &mut filter);
    page.filter = Some(filter);
    Some(result)
}

/// What the `form` handler does once it has looked at the start tag.
enum FormAction {
    Nothing,
    /// A rule with parameter descriptions applies: describe controls until the form ends.
    DescribeControls,
    /// Hold the form back and derive a tool at its end.
    Auto,
}

fn form_start(state: &SharedState, element: &mut send::Element<'_, '_>) -> lol_html::HandlerResult {
    // A page-supplied source marker would let a page pass its own tools off as proxy-made.
    element.remove_attribute("data-toolgate-source");
    let action =
        with_filter(state, |page, filter| -> Result<FormAction, lol_html::errors::AttributeNameError> {
            let rule = filter.forms.rule_match.take();
            if filter.suppressed > 0 {
                // Inside a removed element: nothing of it reaches the page.
                return Ok(FormAction::Nothing);
            }
            if let Some(index) = rule {
                let describe = apply_rule(filter, index, element)?;
                return Ok(if describe { FormAction::DescribeControls } else { FormAction::Nothing });
            }
            if let Some(raw) = element.get_attribute("toolname") {
                filter_declarative(filter, &raw, element);
                return Ok(FormAction::Nothing);
            }
            if filter.visibility.page_tools_on() && is_bound(element, "toolname") {
                // Named by a framework in the browser: no derived name may compete with it.
                return Ok(FormAction::Nothing);
            }
            let auto = filter.rules.auto()
                && element.can_have_content()
                && filter.forms.held.is_none()
                && page.output.held().is_none();
            Ok(if auto { FormAction::Auto } else { FormAction::Nothing })
        });
    match action {
        Some(Ok(FormAction::Auto)) => start_auto_form(state, element),
        Some(Ok(FormAction::DescribeControls)) => element.on_end_tag(Box::new(end_params(state))),
        Some(Err(error)) => Err(error.into()),
        Some(Ok(FormAction::Nothing)) | None => Ok(()),
    }
}

fn apply_rule(
    filter: &mut FilterState,
    index: usize,
    element: &mut send::Element<'_, '_>,
) -> Result<bool, lol_html::errors::AttributeNameError> {
    let rules = std::sync::Arc::clone(&filter.rules);
    let Some(rule) = rules.rules.get(index) else {
        return Ok(false);
    };
    // A rule overrides whatever the page declared.
    remove_tool_attributes(element);
    filter.names.reserve(&rule.name);
    if !filter.visibility.tool(&rule.name, ToolKind::Form) {
        filter.counts.tools_removed += 1;
        return Ok(false);
    }
    // Names are validated and descriptions escaped when the rules are compiled.
    element.set_attribute("toolname", &rule.name)?;
    element.set_attribute("tooldescription", &rule.description)?;
    if rule.autosubmit {
        element.set_attribute("toolautosubmit", "")?;
    }
    element.set_attribute("data-toolgate-source", "form")?;
    filter.counts.forms_tooled += 1;
    let describe = rule.describes_controls() && element.can_have_content();
    if describe {
        filter.forms.active_params = Some(index);
    }
    Ok(describe)
}

fn filter_declarative(filter: &mut FilterState, raw: &str, element: &mut send::Element<'_, '_>) {
    let name = decode_character_references(raw);
    if is_valid_name(&name) {
        filter.names.reserve(&name);
        if filter.visibility.tool(&name, ToolKind::Declarative) {
            return;
        }
    }
    remove_tool_attributes(element);
    filter.counts.tools_removed += 1;
}

/// Removes the WebMCP tool attributes and every framework binding of them.
fn remove_tool_attributes(element: &mut send::Element<'_, '_>) {
    for attribute in TOOL_ATTRIBUTES {
        element.remove_attribute(attribute);
        remove_bindings(element, attribute);
    }
}

fn start_auto_form(state: &SharedState, element: &mut send::Element<'_, '_>) -> lol_html::HandlerResult {
    // Stray tool attributes without a toolname would otherwise duplicate the generated ones.
    remove_tool_attributes(element);
    let attribute = |name: &str| element.get_attribute(name).unwrap_or_default();
    let (id, name, aria_label) = (attribute("id"), attribute("name"), attribute("aria-label"));
    let Some(form_id) = with_filter(state, |_, filter| {
        let form_id = filter.forms.next_id;
        filter.forms.next_id += 1;
        let facts =
            FormFacts { id, name, aria_label, heading: filter.forms.heading.clone(), ..FormFacts::default() };
        filter.forms.held =
            Some(HeldForm { id: form_id, facts, legends: 0, labels: 0, buttons: 0, submit_button: None });
        form_id
    }) else {
        return Ok(());
    };
    // The hold starts exactly where the start tag is serialized and the tag's end is recorded
    // right after it; the end tag (or an ancestor's, when the form is closed implicitly)
    // releases it. Streaming handlers run at serialization time, in output order.
    let self_closing = element.is_self_closing();
    let begin = SharedState::clone(state);
    element.streaming_before(Box::new(move |_: &mut StreamingHandlerSink<'_>| {
        lock(&begin).output.begin_hold(form_id, self_closing);
        Ok(())
    }));
    let mark = SharedState::clone(state);
    element.streaming_prepend(Box::new(move |_: &mut StreamingHandlerSink<'_>| {
        lock(&mark).output.mark_tag_end(form_id);
        Ok(())
    }));
    let end = SharedState::clone(state);
    element.on_end_tag(Box::new(move |end_tag: &mut EndTag<'_>| {
        let release_state = SharedState::clone(&end);
        end_tag.streaming_before(Box::new(move |_: &mut StreamingHandlerSink<'_>| {
            release(&mut lock(&release_state), form_id, true);
            Ok(())
        }));
        Ok(())
    }))
}

/// Names held form `owner` and releases its output; a no-op if it was released already or its
/// start tag never reached the output (it sat inside removed content).
fn release(page: &mut PageState, owner: u64, complete: bool) {
    let Some(filter) = page.filter.as_mut() else {
        return;
    };
    if filter.forms.held.as_ref().is_none_or(|held| held.id != owner) {
        return;
    }
    let Some(held) = filter.forms.held.take() else {
        return;
    };
    if page.output.held().is_none_or(|(holder, _)| holder != owner) {
        return;
    }
    let derived = held.facts.derive(complete);
    let name = filter.names.unique(&derived.base_name);
    let attributes = if filter.visibility.tool(&name, ToolKind::Form) {
        filter.counts.forms_tooled += 1;
        format!(
            r#" toolname="{name}" tooldescription="{}" data-toolgate-source="form""#,
            escape_to_ascii(&derived.description)
        )
    } else {
        filter.counts.tools_removed += 1;
        String::new()
    };
    page.output.release(owner, &attributes);
}

fn describe_control(state: &SharedState, element: &mut send::Element<'_, '_>) -> lol_html::HandlerResult {
    let Some(control) = element.get_attribute("name") else {
        return Ok(());
    };
    let control = decode_character_references(&control);
    let written = with_filter(state, |_, filter| {
        let index = filter.forms.active_params?;
        let rule = filter.rules.rules.get(index)?;
        let find = |list: &[(String, String)]| {
            list.iter().find(|(name, _)| *name == control).map(|(_, v)| v.clone())
        };
        Some((find(&rule.params), find(&rule.param_schemas)))
    });
    let Some(Some((description, schema))) = written else { return Ok(()) };
    if let Some(description) = description {
        element.set_attribute("toolparamdescription", &description)?;
    }
    // Only the gateway writes the schema fragment: a page's own value is replaced or removed.
    match schema {
        Some(schema) => element.set_attribute("data-toolgate-schema", &schema)?,
        None => element.remove_attribute("data-toolgate-schema"),
    }
    Ok(())
}

/// Rule forms with parameters: the parameters stop applying when the form ends (or is closed
/// implicitly by an ancestor's end tag).
fn end_params(
    state: &SharedState,
) -> impl FnOnce(&mut EndTag<'_>) -> lol_html::HandlerResult + Send + 'static {
    let state = SharedState::clone(state);
    move |_| {
        with_filter(&state, |_, filter| filter.forms.active_params = None);
        Ok(())
    }
}

mod collectors;
pub(super) mod state;
