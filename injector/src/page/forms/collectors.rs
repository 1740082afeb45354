//! Auto mode's text collectors: the heading before a form, and the legend, labels and submit
//! text of the form being held. Text inside removed elements never counts.

use super::state::{FormState, HeldForm};
use super::{MAX_LABELS, TEXT_LIMIT, with_filter};
use crate::page::form_names::push_bounded;
use crate::page::selectors::{on_element, on_text, selector};
use crate::page::shared::SharedState;
use lol_html::send;

pub(super) fn append_handlers(
    settings: send::Settings<'static, 'static>,
    state: &SharedState,
) -> send::Settings<'static, 'static> {
    const HEADINGS: &str = "h1, h2, h3, h4, h5, h6";
    let on = |state: &SharedState| SharedState::clone(state);
    let (s1, s2, s3, s4, s5, s6, s7, s8) =
        (on(state), on(state), on(state), on(state), on(state), on(state), on(state), on(state));
    settings
        .append_element_content_handler(on_element(selector!(HEADINGS), move |_| {
            collect(&s1, |forms| forms.heading.clear());
            Ok(())
        }))
        .append_element_content_handler(on_text(selector!(HEADINGS), move |chunk| {
            collect(&s2, |forms| push_bounded(&mut forms.heading, chunk.as_str(), TEXT_LIMIT));
            Ok(())
        }))
        .append_element_content_handler(on_element(selector!("form legend"), move |_| {
            held(&s3, |form| form.legends += 1);
            Ok(())
        }))
        .append_element_content_handler(on_text(selector!("form legend"), move |chunk| {
            held(&s4, |form| {
                if form.legends == 1 {
                    push_bounded(&mut form.facts.legend, chunk.as_str(), TEXT_LIMIT);
                }
            });
            Ok(())
        }))
        .append_element_content_handler(on_element(selector!("form label"), move |_| {
            held(&s5, |form| {
                form.labels += 1;
                if form.facts.labels.len() < MAX_LABELS {
                    form.facts.labels.push(String::new());
                }
            });
            Ok(())
        }))
        .append_element_content_handler(on_text(selector!("form label"), move |chunk| {
            held(&s6, |form| {
                let index = form.labels.saturating_sub(1) as usize;
                if let Some(label) = form.facts.labels.get_mut(index) {
                    push_bounded(label, chunk.as_str(), TEXT_LIMIT);
                }
            });
            Ok(())
        }))
        .append_element_content_handler(on_element(
            selector!("form button, form input[type]"),
            move |element| {
                let kind = element.get_attribute("type").map(|kind| kind.trim().to_ascii_lowercase());
                let is_button = element.tag_name() == "button";
                let value = element.get_attribute("value").unwrap_or_default();
                held(&s7, |form| {
                    if is_button {
                        form.buttons += 1;
                        if form.submit_button.is_none() && kind.as_deref().is_none_or(|kind| kind == "submit")
                        {
                            form.submit_button = Some(form.buttons);
                        }
                    } else if form.submit_button.is_none() && kind.as_deref() == Some("submit") {
                        form.submit_button = Some(0);
                        push_bounded(&mut form.facts.submit, &value, TEXT_LIMIT);
                    }
                });
                Ok(())
            },
        ))
        .append_element_content_handler(on_text(selector!("form button"), move |chunk| {
            held(&s8, |form| {
                if form.submit_button.is_some_and(|button| button != 0 && button == form.buttons) {
                    push_bounded(&mut form.facts.submit, chunk.as_str(), TEXT_LIMIT);
                }
            });
            Ok(())
        }))
}

/// Runs `action` on the form state unless the text sits inside removed content.
fn collect(state: &SharedState, action: impl FnOnce(&mut FormState)) {
    with_filter(state, |_, filter| {
        if filter.suppressed == 0 {
            action(&mut filter.forms);
        }
    });
}

/// Runs `action` on the held form, if any, unless inside removed content.
fn held(state: &SharedState, action: impl FnOnce(&mut HeldForm)) {
    collect(state, |forms| {
        if let Some(form) = forms.held.as_mut() {
            action(form);
        }
    });
}
