//! Fills a tool's arguments from the user's message, guided by the tool's JSON schema: numbers
//! go to `number`/`integer` properties, a `YYYY-MM-DD` date to `date`-format properties, an
//! enum value the message mentions to that enum, `name: value` or quoted text to strings, and
//! what is left of the message to the one remaining text property. Deterministic by design.

use super::words::{all_words, is_filler, same_word, words};
use serde_json::{Map, Value};

/// The arguments for a tool with `schema`, from `message`; `tool_words` are the words that
/// chose the tool, which are not part of any value.
pub(super) fn fill(schema: &Value, message: &str, tool_words: &[String]) -> Map<String, Value> {
    let mut pieces = Pieces::of(message);
    let mut arguments = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return arguments;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Required properties choose first, so optional ones never take their values.
    let mut order: Vec<(&String, &Value)> = properties.iter().collect();
    order.sort_by_key(|(name, _)| !required.contains(&name.as_str()));

    let mut rest_target = None;
    for (name, property) in order {
        let value = match kind(property) {
            Kind::Enum(values) => pieces
                .take_enum(&values)
                .or_else(|| required.contains(&name.as_str()).then(|| values.first().cloned()).flatten()),
            Kind::Date => {
                pieces.take_labelled(name, property).or_else(|| pieces.take_date()).map(Value::String)
            }
            Kind::Number { integer } => pieces.take_number(integer),
            Kind::Boolean => pieces
                .mentions(name)
                .then_some(Value::Bool(true))
                .or_else(|| required.contains(&name.as_str()).then_some(Value::Bool(false))),
            Kind::Text => {
                let value = pieces.take_labelled(name, property).or_else(|| pieces.take_quoted());
                if value.is_none() && rest_target.is_none() {
                    rest_target = Some(name.clone());
                }
                value.map(Value::String)
            }
            Kind::Other => None,
        };
        if let Some(value) = value {
            arguments.insert(name.clone(), value);
        }
    }
    if let Some(name) = rest_target
        && let Some(rest) = pieces.rest(tool_words)
    {
        arguments.insert(name, Value::String(rest));
    }
    arguments
}

/// What kind of value a property takes.
enum Kind {
    Enum(Vec<Value>),
    Date,
    Number { integer: bool },
    Boolean,
    Text,
    Other,
}

fn kind(property: &Value) -> Kind {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Kind::Enum(values.iter().filter(|value| !value.is_null()).cloned().collect());
    }
    let declared = match property.get("type") {
        Some(Value::String(name)) => Some(name.as_str()),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).find(|name| *name != "null"),
        _ => None,
    };
    match declared {
        Some("number") => Kind::Number { integer: false },
        Some("integer") => Kind::Number { integer: true },
        Some("boolean") => Kind::Boolean,
        Some("string") | None if property.get("format").and_then(Value::as_str) == Some("date") => Kind::Date,
        Some("string") | None => Kind::Text,
        Some(_) => Kind::Other,
    }
}

/// The message cut into pieces, each used at most once.
struct Pieces {
    /// Quoted passages, in order.
    quoted: Vec<(String, bool)>,
    /// The words outside quotes (punctuation trimmed), in order, with a used flag.
    words: Vec<(String, bool)>,
}

impl Pieces {
    fn of(message: &str) -> Self {
        let mut quoted = Vec::new();
        let mut outside = String::new();
        let mut chars = message.chars().peekable();
        let mut previous = ' ';
        while let Some(c) = chars.next() {
            let close = match c {
                '"' => Some('"'),
                '“' => Some('”'),
                '«' => Some('»'),
                // An apostrophe inside a word (don't) is no quote.
                '\'' if !previous.is_alphanumeric() => Some('\''),
                _ => None,
            };
            if let Some(close) = close {
                let passage: String = chars.by_ref().take_while(|&next| next != close).collect();
                if !passage.trim().is_empty() {
                    quoted.push((passage.trim().to_owned(), false));
                }
                outside.push(' ');
                previous = ' ';
                continue;
            }
            outside.push(c);
            previous = c;
        }
        let words = outside
            .split_whitespace()
            .map(|word| word.trim_matches(|c: char| ",;:!?()[]{}".contains(c)))
            .map(|word| word.strip_suffix('.').unwrap_or(word))
            .filter(|word| !word.is_empty())
            .map(|word| (word.to_owned(), false))
            .collect();
        Self { quoted, words }
    }

    fn take_quoted(&mut self) -> Option<String> {
        let (passage, used) = self.quoted.iter_mut().find(|(_, used)| !used)?;
        *used = true;
        Some(passage.clone())
    }

    fn take_date(&mut self) -> Option<String> {
        self.take_word(|word| is_date(word).then(|| word.to_owned()))
    }

    fn take_number(&mut self, integer: bool) -> Option<Value> {
        self.take_word(|word| {
            let digits = word.trim_start_matches(['#', '$', '€', '£']);
            let number: f64 = digits.parse().ok().filter(|number: &f64| number.is_finite())?;
            if integer {
                digits.parse::<i64>().ok().map(Value::from)
            } else {
                serde_json::Number::from_f64(number).map(Value::Number)
            }
        })
    }

    /// The first enum value the message names (a word or a quoted passage).
    fn take_enum(&mut self, values: &[Value]) -> Option<Value> {
        for (word, used) in &mut self.words {
            let found = values
                .iter()
                .find(|value| enum_text(value).is_some_and(|text| text.eq_ignore_ascii_case(word)));
            if let Some(value) = found.filter(|_| !*used) {
                *used = true;
                return Some(value.clone());
            }
        }
        let (position, value) = self.quoted.iter().enumerate().find_map(|(position, (passage, used))| {
            let value = values
                .iter()
                .find(|value| enum_text(value).is_some_and(|text| text.eq_ignore_ascii_case(passage)));
            value.filter(|_| !used).map(|value| (position, value.clone()))
        })?;
        self.quoted[position].1 = true;
        Some(value)
    }

    /// `name: value`, `name = value`, `name is value` or `name value`: the value after the
    /// property's name, or after the last word of its `title` (`Destination London`).
    fn take_labelled(&mut self, name: &str, property: &Value) -> Option<String> {
        let title = property.get("title").and_then(Value::as_str);
        self.take_after(&all_words(name)).or_else(|| title.and_then(|title| self.take_after(&words(title))))
    }

    /// The unused word after the first unused occurrence of `label`'s last word.
    fn take_after(&mut self, label: &[String]) -> Option<String> {
        let at = self.words.iter().position(|(word, used)| {
            !used && label.last().is_some_and(|last| same_word(&word.to_lowercase(), last))
        })?;
        let mut next = at + 1;
        while self
            .words
            .get(next)
            .is_some_and(|(word, _)| matches!(word.to_lowercase().as_str(), "is" | "=" | "of" | "to" | "as"))
        {
            next += 1;
        }
        let (value, used) = self.words.get(next)?;
        if *used || is_filler(&value.to_lowercase()) {
            return None;
        }
        let value = value.clone();
        self.words[at].1 = true;
        for word in &mut self.words[at + 1..=next] {
            word.1 = true;
        }
        Some(value)
    }

    fn mentions(&mut self, name: &str) -> bool {
        let label = words(name);
        self.words.iter().any(|(word, _)| label.iter().any(|part| same_word(&word.to_lowercase(), part)))
    }

    /// The unused words, without the tool's own words and filler at the start or filler at the
    /// end, joined.
    fn rest(&mut self, tool_words: &[String]) -> Option<String> {
        let mut rest: Vec<&str> = self
            .words
            .iter()
            .filter(|(_, used)| !used)
            .map(|(word, _)| word.as_str())
            .skip_while(|word| {
                let lower = word.to_lowercase();
                is_filler(&lower) || tool_words.iter().any(|tool| same_word(&lower, tool))
            })
            .collect();
        while rest.last().is_some_and(|word| is_filler(&word.to_lowercase())) {
            rest.pop();
        }
        (!rest.is_empty()).then(|| rest.join(" "))
    }

    fn take_word<T>(&mut self, mut parse: impl FnMut(&str) -> Option<T>) -> Option<T> {
        self.words.iter_mut().filter(|(_, used)| !used).find_map(|(word, used)| {
            let value = parse(word)?;
            *used = true;
            Some(value)
        })
    }
}

fn enum_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// `YYYY-MM-DD` with a plausible month and day.
fn is_date(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && [0..4, 5..7, 8..10].into_iter().all(|range| bytes[range].iter().all(u8::is_ascii_digit))
        && matches!(word[5..7].parse::<u8>(), Ok(1..=12))
        && matches!(word[8..10].parse::<u8>(), Ok(1..=31))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filled(schema: Value, message: &str, tool: &[&str]) -> Value {
        let tool: Vec<String> = tool.iter().map(|word| (*word).to_owned()).collect();
        Value::Object(fill(&schema, message, &tool))
    }

    #[test]
    fn numbers_dates_enums_quotes_and_the_rest() {
        let schema = json!({
            "type": "object",
            "properties": {
                "amount": { "type": "number" },
                "count": { "type": "integer" },
                "date": { "type": "string", "format": "date" },
                "urgency": { "enum": ["low", "high", null] },
                "summary": { "type": "string" },
                "note": { "type": "string" }
            },
            "required": ["summary"]
        });
        let arguments = filled(
            schema,
            "Open a ticket: \"Printer on fire\", high, 2 pages, 42.5 on 2025-03-14 x",
            &["open", "ticket"],
        );
        assert_eq!(
            arguments,
            json!({
                "summary": "Printer on fire",
                "amount": 2.0,
                "date": "2025-03-14",
                "urgency": "high",
                "note": "pages 42.5 on x",
            })
        );
    }

    #[test]
    fn labelled_values_and_the_rest_of_the_message() {
        let schema = json!({ "properties": { "currency": { "type": "string" }, "description": { "type": "string" } } });
        assert_eq!(
            filled(schema, "Submit an expense, currency EUR, for the team lunch", &["submit", "expense"]),
            json!({ "currency": "EUR", "description": "team lunch" })
        );
        let schema = json!({ "properties": { "title": { "type": "string" } }, "required": ["title"] });
        assert_eq!(filled(schema, "Add a task: buy milk", &["add", "task"]), json!({ "title": "buy milk" }));
        let schema = json!({ "properties": { "id": { "type": "number" } } });
        assert_eq!(filled(schema, "complete task #3", &["complete", "task"]), json!({ "id": 3.0 }));
    }

    #[test]
    fn dates_are_checked() {
        assert!(
            is_date("2025-03-14")
                && !is_date("2025-13-14")
                && !is_date("20250314xx")
                && !is_date("2025-03-1a")
        );
    }
}
