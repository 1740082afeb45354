//! Tool names and descriptions: validating the names pages and rules use, and deriving a name and
//! a description for a legacy form in auto mode.
//!
//! Everything here is pure text work so it can be tested without a parser. Derived names are
//! sanitized to `[a-z0-9_.-]`, made unique on the page with `_2`, `_3`, … in document order, and
//! never depend on the user, so every user sees the same name for the same form.

use std::collections::HashSet;

use super::attribute_text::decode_character_references;

/// The longest valid tool or context name.
pub(super) const MAX_NAME_LENGTH: usize = 128;

/// Derived base names stay this short so that a `_<n>` suffix always fits.
const MAX_BASE_LENGTH: usize = 120;

/// Upper bound for a derived description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Upper bound for one piece of page text (heading, legend, label, …), in characters.
const MAX_PIECE_CHARS: usize = 160;

/// At most this many labels are listed in a derived description.
const MAX_LABELS: usize = 12;

/// Whether `name` matches `^[A-Za-z0-9_.-]{1,128}$`.
pub(super) fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LENGTH).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-'))
}

/// Turns free text into a name base: lowercase ASCII letters, digits, `.` and `-`, with every
/// other run of characters replaced by one `_`. `None` if nothing usable is left.
pub(super) fn sanitize(text: &str) -> Option<String> {
    let mut name = String::with_capacity(text.len().min(MAX_BASE_LENGTH));
    for character in text.chars() {
        if character.is_ascii_alphanumeric() || matches!(character, '.' | '-') {
            name.push(character.to_ascii_lowercase());
        } else if !name.ends_with('_') {
            name.push('_');
        }
        if name.len() > MAX_BASE_LENGTH {
            break;
        }
    }
    name.truncate(MAX_BASE_LENGTH);
    let name = name.trim_matches('_');
    (!name.is_empty()).then(|| name.to_owned())
}

/// Page text as a person reads it: character references decoded, whitespace collapsed, trimmed
/// and capped at `MAX_PIECE_CHARS` characters.
pub(super) fn clean_text(raw: &str) -> String {
    let decoded = decode_character_references(raw);
    let mut text = String::with_capacity(decoded.len().min(MAX_PIECE_CHARS));
    for word in decoded.split_whitespace() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    truncate_chars(&mut text, MAX_PIECE_CHARS);
    text
}

/// The names already in use on the page, in document order.
#[derive(Debug, Default)]
pub(super) struct NameRegistry {
    used: HashSet<String>,
}

impl NameRegistry {
    /// Records a name the page or a rule uses as is.
    pub(super) fn reserve(&mut self, name: &str) {
        if !self.used.contains(name) {
            self.used.insert(name.to_owned());
        }
    }

    /// Returns `base`, or `base_2`, `base_3`, … whichever is free first, and reserves it.
    pub(super) fn unique(&mut self, base: &str) -> String {
        let mut candidate = base.to_owned();
        let mut suffix = 2_u32;
        while self.used.contains(&candidate) {
            candidate = format!("{base}_{suffix}");
            suffix = suffix.saturating_add(1);
        }
        self.used.insert(candidate.clone());
        candidate
    }
}

/// What the page says about one form; raw text, cleaned when a name is derived.
#[derive(Debug, Default, Clone)]
pub(super) struct FormFacts {
    /// From the start tag.
    pub(super) id: String,
    pub(super) name: String,
    pub(super) aria_label: String,
    /// The text of the nearest heading before the form.
    pub(super) heading: String,
    /// From the form's content (only known at its end tag).
    pub(super) legend: String,
    pub(super) submit: String,
    pub(super) labels: Vec<String>,
}

/// A derived tool: the name base (not yet made unique) and the description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DerivedTool {
    pub(super) base_name: String,
    pub(super) description: String,
}

impl FormFacts {
    /// Derives a tool from the facts. With `complete == false` (the form was too large to hold)
    /// only the start tag and the preceding heading count, so the result cannot depend on how
    /// much of the content happened to be seen.
    pub(super) fn derive(&self, complete: bool) -> DerivedTool {
        let id = clean_text(&self.id);
        let name = clean_text(&self.name);
        let aria_label = clean_text(&self.aria_label);
        let heading = clean_text(&self.heading);
        let (legend, submit) = if complete {
            (clean_text(&self.legend), clean_text(&self.submit))
        } else {
            (String::new(), String::new())
        };

        let name_sources = [&id, &name, &aria_label, &legend, &submit, &heading];
        let base_name =
            name_sources.iter().find_map(|source| sanitize(source)).unwrap_or_else(|| "form".to_owned());

        let subject = [&aria_label, &legend, &heading, &id, &name]
            .into_iter()
            .find(|text| !text.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("Form {base_name}"));
        let mut description = subject;
        if complete {
            if !submit.is_empty() {
                description.push_str(&format!(". Submit button: {submit}"));
            }
            let labels: Vec<String> = self
                .labels
                .iter()
                .map(|label| clean_text(label))
                .filter(|label| !label.is_empty())
                .take(MAX_LABELS)
                .collect();
            if !labels.is_empty() {
                description.push_str(&format!(". Fields: {}", labels.join(", ")));
            }
        }
        truncate_chars(&mut description, MAX_DESCRIPTION_CHARS);
        DerivedTool { base_name, description }
    }
}

/// Appends `chunk` to `buffer` unless that would make it longer than `limit` bytes; text past
/// the limit is dropped (at a character boundary), which keeps collecting bounded.
pub(super) fn push_bounded(buffer: &mut String, chunk: &str, limit: usize) {
    let room = limit.saturating_sub(buffer.len());
    if chunk.len() <= room {
        buffer.push_str(chunk);
    } else {
        let mut end = room;
        while !chunk.is_char_boundary(end) {
            end -= 1;
        }
        buffer.push_str(&chunk[..end]);
    }
}

fn truncate_chars(text: &mut String, limit: usize) {
    if let Some((index, _)) = text.char_indices().nth(limit) {
        text.truncate(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_names() {
        assert!(is_valid_name("add_task"));
        assert!(is_valid_name("a.b-C_9"));
        assert!(is_valid_name(&"x".repeat(128)));
        for invalid in ["", "a b", "a/", "ä", "a<b", "a\"b", &"x".repeat(129)] {
            assert!(!is_valid_name(invalid), "{invalid:?}");
        }
    }

    #[test]
    fn sanitizes_free_text() {
        assert_eq!(sanitize("Search Orders").as_deref(), Some("search_orders"));
        assert_eq!(sanitize("  <script>alert(1)</script> ").as_deref(), Some("script_alert_1_script"));
        assert_eq!(sanitize("Größe & Maß").as_deref(), Some("gr_e_ma"));
        assert_eq!(sanitize("!!!"), None);
        assert_eq!(sanitize(""), None);
        let long = sanitize(&"ab".repeat(200)).unwrap_or_default();
        assert_eq!(long.len(), MAX_BASE_LENGTH);
        assert!(is_valid_name(&long));
    }

    #[test]
    fn unique_names_get_deterministic_suffixes() {
        let mut registry = NameRegistry::default();
        registry.reserve("search");
        assert_eq!(registry.unique("search"), "search_2");
        assert_eq!(registry.unique("search"), "search_3");
        assert_eq!(registry.unique("login"), "login");
        registry.reserve("x_2");
        assert_eq!(registry.unique("x"), "x");
        assert_eq!(registry.unique("x"), "x_3");
    }

    #[test]
    fn clean_text_decodes_and_collapses() {
        assert_eq!(clean_text("  Find &amp;\n\t filter  "), "Find & filter");
        assert_eq!(clean_text(&"é".repeat(500)).chars().count(), MAX_PIECE_CHARS);
    }

    #[test]
    fn derives_from_the_best_source() {
        let facts = FormFacts {
            id: String::new(),
            name: String::new(),
            aria_label: String::new(),
            heading: "Orders".to_owned(),
            legend: "Search orders".to_owned(),
            submit: "Go".to_owned(),
            labels: vec!["Customer".to_owned(), " ".to_owned(), "Date &lt;from&gt;".to_owned()],
        };
        assert_eq!(
            facts.derive(true),
            DerivedTool {
                base_name: "search_orders".to_owned(),
                description: "Search orders. Submit button: Go. Fields: Customer, Date <from>".to_owned(),
            }
        );
        // Too large to hold: the content does not count.
        assert_eq!(
            facts.derive(false),
            DerivedTool { base_name: "orders".to_owned(), description: "Orders".to_owned() }
        );
        let with_id = FormFacts { id: "searchForm".to_owned(), ..facts };
        assert_eq!(with_id.derive(true).base_name, "searchform");
        assert_eq!(FormFacts::default().derive(true).description, "Form form");
    }

    #[test]
    fn push_bounded_stops_at_a_character_boundary() {
        let mut buffer = String::from("ab");
        push_bounded(&mut buffer, "cdé", 5);
        assert_eq!(buffer, "abcd");
        push_bounded(&mut buffer, "x", 5);
        assert_eq!(buffer, "abcdx");
        push_bounded(&mut buffer, "y", 5);
        assert_eq!(buffer, "abcdx");
    }
}
