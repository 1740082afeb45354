//! Per-user filtering of the page: wires every filtering handler, and removes the `<tool>` and
//! `<context>` elements the user may not see.
//!
//! An element is decided by its static `name`. One without it whose name a framework binds
//! (`:name`, see `bindings.rs`) is kept while the user has page tools at all: its name only
//! exists once the framework rendered it in the browser, where the runtime reports it to the
//! gateway like an element a script added.
//!
//! A refused element goes with all its content, and its end tag only if it is its own: an
//! element closed implicitly by an ancestor's end tag must not take that end tag (and with it
//! the ancestor's following siblings) along. A self-closing `<tool .../>` loses only its start
//! tag: HTML ignores the slash, so the "element" would otherwise swallow its siblings.

use lol_html::html_content::{ContentType, EndTag};
use lol_html::send;

use super::attribute_text::decode_character_references;
use super::bindings::is_bound;
use super::form_names::is_valid_name;
use super::policy::ToolKind;
use super::selectors::{on_element, selector};
use super::shared::{SharedState, lock};
use super::survey::{Survey, Tag};
use super::{forms, leaks};

/// Adds the filtering handlers the page may need (`survey`). A page's own
/// `data-toolgate-source` marker on a form is removed by the form handler (`forms.rs`) before
/// anything else it does: one handler fewer for lol_html to match every start tag against.
pub(super) fn append_handlers(
    mut settings: send::Settings<'static, 'static>,
    state: &SharedState,
    survey: &Survey,
) -> send::Settings<'static, 'static> {
    if survey.may_have(Tag::Tool) {
        let tools = SharedState::clone(state);
        settings = settings.append_element_content_handler(on_element(selector!("tool"), move |element| {
            filter_element(&tools, element, Marked::Tool)
        }));
    }
    if survey.may_have(Tag::Context) {
        let contexts = SharedState::clone(state);
        settings = settings
            .append_element_content_handler(on_element(selector!("context"), move |element| {
                filter_element(&contexts, element, Marked::Context)
            }));
    }
    let settings = leaks::append_handlers(settings, state, survey);
    if survey.may_have(Tag::Form) { forms::append_handlers(settings, state, survey) } else { settings }
}

#[derive(Clone, Copy)]
enum Marked {
    Tool,
    Context,
}

fn filter_element(
    state: &SharedState,
    element: &mut send::Element<'_, '_>,
    marked: Marked,
) -> lol_html::HandlerResult {
    let name = element.get_attribute("name").map(|raw| decode_character_references(&raw).into_owned());
    {
        let mut page = lock(state);
        let Some(filter) = page.filter.as_mut() else {
            return Ok(());
        };
        // Only a name the HTML leaves entirely to a framework waits for the browser: a static
        // name, even an invalid one, is decided here, and with page tools off nothing waits.
        if name.is_none() && filter.visibility.page_tools_on() && is_bound(element, "name") {
            return Ok(());
        }
        // A missing (and unbound) or invalid name is refused without asking: fail closed.
        let visible = name.as_deref().filter(|name| is_valid_name(name)).is_some_and(|name| match marked {
            Marked::Tool => filter.visibility.tool(name, ToolKind::Voix),
            Marked::Context => filter.visibility.context(name),
        });
        if visible {
            return Ok(());
        }
        if filter.suppressed == 0 {
            match marked {
                Marked::Tool => filter.counts.tools_removed += 1,
                Marked::Context => filter.counts.contexts_removed += 1,
            }
        }
    }
    if !element.can_have_content() {
        // Foreign content (`<svg><tool/></svg>`): the element is complete by itself.
        element.remove();
        return Ok(());
    }
    if is_self_closing_intent(element) {
        element.start_tag().remove();
        return Ok(());
    }
    element.start_tag().remove();
    element.set_inner_content("", ContentType::Text);
    if let Some(filter) = lock(state).filter.as_mut() {
        filter.suppressed += 1;
    }
    let tag = element.tag_name();
    let state = SharedState::clone(state);
    // lol_html runs this on the element's own end tag, or on the ancestor end tag that closes
    // it implicitly: only the former is removed. (`remove()` would remove either.)
    element.on_end_tag(Box::new(move |end: &mut EndTag<'_>| {
        if end.name() == tag {
            end.remove();
        }
        if let Some(filter) = lock(&state).filter.as_mut() {
            filter.suppressed = filter.suppressed.saturating_sub(1);
        }
        Ok(())
    }))
}

/// Whether the start tag was written as complete by itself: `<tool name="x"/>`, and also
/// `<tool name=x/>`, where HTML reads the slash into the unquoted value (`name="x/"`, invalid,
/// so refused) yet the author plainly meant a self-closing tag.
fn is_self_closing_intent(element: &send::Element<'_, '_>) -> bool {
    if element.is_self_closing() {
        return true;
    }
    let tag_end = element.source_location().bytes().end;
    element.attributes().last().is_some_and(|attribute| {
        attribute.value().ends_with('/')
            && attribute.value_source_location().is_some_and(|value| value.bytes().end + 1 == tag_end)
    })
}
