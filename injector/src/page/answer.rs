//! Reading a site's answer to a form submission: while the answer page streams through the
//! rewriter, an [`AnswerProbe`] notes its title, the forms it shows (method and `action` as
//! written) and the text of its error markers. The gateway then decides whether the site took
//! the submission or refused it (a refusal shows the same form again, with errors).
//!
//! The error markers are the ones frameworks render: Django's `.errorlist`, Bootstrap's
//! `.invalid-feedback`, ARIA's `[role="alert"]` and `[aria-invalid="true"]`, plus any selectors
//! the site's form rules name. Only the outermost marker of a nested group counts, so a message
//! is read once. Everything is bounded: a page cannot make the probe grow.
//!
//! The probe runs only on the answer to an agent's submission, never on ordinary pages, so its
//! attribute selectors (which take lol_html off its fast path) cost nothing elsewhere.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use lol_html::html_content::{EndTag, TextChunk};
use lol_html::{DocumentContentHandlers, Selector, send};

use super::attribute_text::decode_character_references;
use super::form_names::{clean_text, push_bounded};
use super::selectors::{on_element, on_text, selector};

/// The error markers every probe looks for.
pub const BUILT_IN_ERROR_MARKERS: &str =
    ".errorlist, .invalid-feedback, [role=\"alert\"], [aria-invalid=\"true\"]";
/// At most this many error messages are kept.
const MAX_ERRORS: usize = 10;
/// At most this many forms are noted.
const MAX_FORMS: usize = 32;
/// Raw text kept per message or title before it is cleaned (and capped again, in characters).
const RAW_TEXT_LIMIT: usize = 2048;
/// Raw `action` text kept per form.
const MAX_ACTION: usize = 2048;
/// Hidden inputs kept per form, and the longest value kept.
const MAX_HIDDEN: usize = 20;
const MAX_HIDDEN_VALUE: usize = 512;

/// A form an answer page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormSeen {
    /// Its method, lowercase (`get` when absent or unknown, as browsers read it).
    pub method: String,
    /// Its `action` attribute with character references decoded; `None` when absent.
    pub action: Option<String>,
    /// Its hidden inputs (name, value), in order: at most 20, values cut at 512 bytes. They may
    /// hold tokens: never log them.
    pub hidden: Vec<(String, String)>,
}

/// What a probe read from an answer page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageAnswer {
    /// The document's title, whitespace collapsed (empty without one).
    pub title: String,
    /// The forms on the page, in document order (at most 32).
    pub forms: Vec<FormSeen>,
    /// The text of each error marker, in document order (at most 10, each cleaned and capped).
    pub errors: Vec<String>,
}

/// Watches one answer page. Clone it before handing it to the rewriter
/// ([`PageRewriter::with_answer_probe`](super::PageRewriter::with_answer_probe)); read it with
/// [`answer`](Self::answer) when the page has ended.
#[derive(Debug, Clone)]
pub struct AnswerProbe {
    extra_markers: Vec<String>,
    found: Arc<Mutex<Found>>,
}

#[derive(Debug, Default)]
struct Found {
    titles: u32,
    title: String,
    forms: Vec<FormSeen>,
    /// Whether the last form noted is still open (its hidden inputs are its own).
    form_open: bool,
    /// Open markers; text counts only inside one.
    depth: u32,
    /// Raw text of each message so far.
    errors: Vec<String>,
}

impl AnswerProbe {
    /// A probe for the built-in markers plus `extra_markers` (CSS selectors, each checked with
    /// [`check_error_selector`]; one that does not parse is skipped).
    pub fn new(extra_markers: Vec<String>) -> Self {
        Self { extra_markers, found: Arc::default() }
    }

    /// What the page showed so far (all of it once the rewriter ended).
    pub fn answer(&self) -> PageAnswer {
        let found = self.found.lock().unwrap_or_else(PoisonError::into_inner);
        PageAnswer {
            title: clean_text(&found.title),
            forms: found.forms.clone(),
            errors: found.errors.iter().map(|raw| clean_text(raw)).filter(|text| !text.is_empty()).collect(),
        }
    }

    /// Adds the probe's handlers to a rewriter's settings.
    pub(super) fn append_handlers(
        &self,
        settings: send::Settings<'static, 'static>,
    ) -> send::Settings<'static, 'static> {
        let share = || Arc::clone(&self.found);
        let (titles, title_text, forms, text, separate, hidden) =
            (share(), share(), share(), share(), share(), share());
        let mut settings = settings
            .append_element_content_handler(on_element(selector!("title"), move |_| {
                lock(&titles).titles += 1;
                Ok(())
            }))
            .append_element_content_handler(on_text(selector!("title"), move |chunk| {
                let mut found = lock(&title_text);
                if found.titles == 1 {
                    push_bounded(&mut found.title, chunk.as_str(), RAW_TEXT_LIMIT);
                }
                Ok(())
            }))
            .append_element_content_handler(on_element(selector!("form"), move |element| {
                let method = element.get_attribute("method").map(|raw| raw.trim().to_ascii_lowercase());
                let method = match method.as_deref() {
                    Some("post") => "post",
                    Some("dialog") => "dialog",
                    _ => "get",
                };
                let action = element.get_attribute("action").map(|raw| {
                    let mut action = String::new();
                    push_bounded(&mut action, &decode_character_references(&raw), MAX_ACTION);
                    action
                });
                let mut found = lock(&forms);
                if found.forms.len() >= MAX_FORMS {
                    return Ok(());
                }
                found.forms.push(FormSeen { method: method.to_owned(), action, hidden: Vec::new() });
                found.form_open = true;
                drop(found);
                let closing = Arc::clone(&forms);
                element.on_end_tag(Box::new(move |_: &mut EndTag<'_>| {
                    lock(&closing).form_open = false;
                    Ok(())
                }))
            }))
            .append_element_content_handler(on_element(
                selector!("form input[type=hidden]"),
                move |element| {
                    let name = element
                        .get_attribute("name")
                        .map(|raw| decode_character_references(&raw).into_owned());
                    let value = element.get_attribute("value").unwrap_or_default();
                    let mut found = lock(&hidden);
                    if let (true, Some(name), Some(form)) = (found.form_open, name, found.forms.last_mut())
                        && form.hidden.len() < MAX_HIDDEN
                    {
                        let mut kept = String::new();
                        push_bounded(&mut kept, &decode_character_references(&value), MAX_HIDDEN_VALUE);
                        form.hidden.push((name, kept));
                    }
                    Ok(())
                },
            ))
            // Items of a list are separate words: every element inside a message starts one.
            .append_element_content_handler(on_element(selector!("*"), move |_| {
                let mut found = lock(&separate);
                if found.depth > 0
                    && let Some(message) = found.errors.last_mut()
                {
                    push_bounded(message, " ", RAW_TEXT_LIMIT);
                }
                Ok(())
            }))
            .append_document_content_handler(DocumentContentHandlers::default().text(
                move |chunk: &mut TextChunk<'_>| {
                    let mut found = lock(&text);
                    if found.depth > 0
                        && let Some(message) = found.errors.last_mut()
                    {
                        push_bounded(message, chunk.as_str(), RAW_TEXT_LIMIT);
                    }
                    Ok(())
                },
            ));
        let markers = std::iter::once(selector!(BUILT_IN_ERROR_MARKERS))
            .chain(self.extra_markers.iter().filter_map(|css| css.parse::<Selector>().ok().map(Cow::Owned)));
        for marker in markers {
            let found = share();
            settings = settings.append_element_content_handler(on_element(marker, move |element| {
                open_marker(&found, element)
            }));
        }
        settings
    }
}

/// Starts a message at an outermost marker; a control marked invalid (no content) is named.
fn open_marker(found: &Arc<Mutex<Found>>, element: &mut send::Element<'_, '_>) -> lol_html::HandlerResult {
    if !element.can_have_content() {
        let name = element.get_attribute("name").map(|raw| clean_text(&raw)).unwrap_or_default();
        let mut found = lock(found);
        if found.depth == 0 && found.errors.len() < MAX_ERRORS {
            let field = if name.is_empty() { "a field".to_owned() } else { format!("the field {name}") };
            found.errors.push(format!("{field} is marked invalid"));
        }
        return Ok(());
    }
    {
        let mut found = lock(found);
        if found.depth == 0 {
            if found.errors.len() >= MAX_ERRORS {
                return Ok(());
            }
            found.errors.push(String::new());
        }
        found.depth += 1;
    }
    let found = Arc::clone(found);
    // An element closed implicitly (no end tag of its own) never calls back; the next marker
    // then nests under it, which only merges messages: bounded either way.
    element.on_end_tag(Box::new(move |_: &mut EndTag<'_>| {
        let mut found = lock(&found);
        found.depth = found.depth.saturating_sub(1);
        Ok(())
    }))
}

/// Whether `css` is a selector the probe can use (lol_html's supported subset of CSS).
pub fn check_error_selector(css: &str) -> Result<(), String> {
    css.parse::<Selector>().map(|_| ()).map_err(|error| error.to_string())
}

fn lock(found: &Arc<Mutex<Found>>) -> std::sync::MutexGuard<'_, Found> {
    found.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{PageRewriter, PageSettings};

    fn probe(html: &str, extra: &[&str]) -> PageAnswer {
        let probe = AnswerProbe::new(extra.iter().map(|css| (*css).to_owned()).collect());
        let settings = PageSettings {
            script_src: "/.toolgate/runtime.js".into(),
            integrity: "sha384-x".into(),
            nonce: "n".into(),
            script_url: "http://a.test/.toolgate/runtime.js".into(),
            declared_charset: Some("utf-8".into()),
            memory_limit: 1 << 20,
            inject: true,
        };
        let mut rewriter = PageRewriter::new(settings).with_answer_probe(probe.clone());
        let mut out = Vec::new();
        // Byte by byte: the probe must not depend on how the page is split.
        for byte in html.as_bytes() {
            rewriter.write(std::slice::from_ref(byte), &mut out).expect("write");
        }
        rewriter.end(&mut out).expect("end");
        probe.answer()
    }

    #[test]
    fn a_django_error_page_shows_its_form_and_messages() {
        let html = r#"<!doctype html><html><head><title>Add employee | Django site admin</title></head>
            <body><svg><title>icon</title></svg>
            <form enctype="multipart/form-data" method="post" id="employee_form" novalidate>
            <input type="hidden" name="csrf" value="a&amp;b"><input type="hidden" value="no name">
            <p class="errornote">Please correct the error below.</p>
            <ul class="errorlist" id="id_email_error"><li>Employee with this Email already exists.</li></ul>
            <input type="email" name="email" aria-invalid="true" aria-describedby="id_email_error">
            <ul class="errorlist"><li>Enter a valid date &amp; time.</li><li>Second.</li></ul>
            </form><input type="hidden" name="outside" value="x"><form action="/logout/" method=POST></form></body></html>"#;
        let answer = probe(html, &[]);
        assert_eq!(answer.title, "Add employee | Django site admin");
        assert_eq!(
            answer.forms,
            [
                FormSeen { method: "post".into(), action: None, hidden: vec![("csrf".into(), "a&b".into())] },
                FormSeen { method: "post".into(), action: Some("/logout/".into()), hidden: vec![] }
            ]
        );
        assert_eq!(
            answer.errors,
            [
                "Employee with this Email already exists.",
                "the field email is marked invalid",
                "Enter a valid date & time. Second."
            ]
        );
    }

    #[test]
    fn nested_markers_count_once_and_rules_add_their_own() {
        let html = r#"<div role="alert"><ul class="errorlist"><li>Only once</li></ul></div>
            <span class="field-error">Name is taken</span><p class="other">not an error</p>"#;
        assert_eq!(probe(html, &[]).errors, ["Only once"]);
        assert_eq!(
            probe(html, &["span.field-error", "not a [selector"]).errors,
            ["Only once", "Name is taken"]
        );
    }

    #[test]
    fn a_page_cannot_make_the_probe_grow() {
        let many = "<ul class=errorlist><li>x</li></ul>".repeat(50);
        let long = format!("<div role=alert>{}</div>", "y".repeat(100_000));
        let forms = "<form></form>".repeat(100);
        let answer = probe(&format!("{long}{many}{forms}"), &[]);
        assert_eq!(answer.errors.len(), MAX_ERRORS);
        assert!(answer.errors[0].chars().count() <= 160, "{}", answer.errors[0].len());
        assert_eq!(answer.forms.len(), MAX_FORMS);
    }

    #[test]
    fn error_selectors_are_checked() {
        assert!(check_error_selector(".errors li").is_ok());
        assert!(check_error_selector("div[").is_err());
        assert!(check_error_selector("a:hover").is_err());
    }
}
