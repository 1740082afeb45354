//! JSON carriers: tool results, search results and tool schemas, as values and as text.
//!
//! A document is first built as a [`J`] tree whose strings are pieces (carrier text and planted
//! values). It becomes either a `serde_json::Value` (every string leaf listed with its JSON
//! pointer, so the scorer can read each one back after `redact_json`) or serialized text whose
//! pieces are JSON-escaped one by one (escaping is per character, so that equals escaping the
//! whole string), compact or pretty-printed.

use serde_json::{Map, Value};

use super::labels::{label, name, sentence};
use super::rng::Rng;
use super::values_decoys::{date, uuid};
use super::{Channel, Doc, Lang, Piece, Planted};

/// A JSON tree with piece strings.
#[derive(Clone, Debug)]
pub enum J {
    /// An object, keys in order.
    Obj(Vec<(String, J)>),
    /// An array.
    Arr(Vec<J>),
    /// A string.
    Str(Vec<Piece>),
    /// A number, as written.
    Num(String),
    /// `null`.
    Null,
}

fn text(s: impl Into<String>) -> J {
    J::Str(vec![Piece { text: s.into(), value: None }])
}

/// The pieces of `before{value}after` around planted value `index`, inside `template` text.
fn planted_str(template: &str, planted: &[Planted], index: usize) -> J {
    let (head, tail) = template.split_once("{value}").unwrap_or(("", ""));
    let p = &planted[index];
    let mut pieces = Vec::new();
    let before = format!("{head}{}", p.before);
    if !before.is_empty() {
        pieces.push(Piece { text: before, value: None });
    }
    pieces.push(Piece { text: p.text.clone(), value: Some(index) });
    let after = format!("{}{tail}", p.after);
    if !after.is_empty() {
        pieces.push(Piece { text: after, value: None });
    }
    J::Str(pieces)
}

/// The value and its string leaves.
pub fn to_value(j: &J, pointer: &str, leaves: &mut Vec<(String, Vec<Piece>)>) -> Value {
    match j {
        J::Obj(fields) => {
            let mut map = Map::new();
            for (key, child) in fields {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                map.insert(key.clone(), to_value(child, &format!("{pointer}/{escaped}"), leaves));
            }
            Value::Object(map)
        }
        J::Arr(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, child)| to_value(child, &format!("{pointer}/{i}"), leaves))
                .collect(),
        ),
        J::Str(pieces) => {
            leaves.push((pointer.to_owned(), pieces.clone()));
            Value::String(pieces.iter().map(|p| p.text.as_str()).collect())
        }
        J::Num(n) => serde_json::from_str(n).unwrap_or(Value::Null),
        J::Null => Value::Null,
    }
}

fn push_text(out: &mut Vec<Piece>, text: &str) {
    match out.last_mut() {
        Some(last) if last.value.is_none() => last.text.push_str(text),
        _ => out.push(Piece { text: text.to_owned(), value: None }),
    }
}

fn escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Serializes `j` as text pieces; `indent` is `Some(depth)` for pretty printing.
pub fn to_text(j: &J, indent: Option<usize>, out: &mut Vec<Piece>) {
    let newline = |out: &mut Vec<Piece>, depth: usize| {
        if indent.is_some() {
            push_text(out, &format!("\n{}", "  ".repeat(depth)));
        }
    };
    let depth = indent.unwrap_or(0);
    let inner = indent.map(|d| d + 1);
    match j {
        J::Obj(fields) => {
            push_text(out, "{");
            for (n, (key, child)) in fields.iter().enumerate() {
                push_text(out, if n > 0 { "," } else { "" });
                newline(out, depth + 1);
                push_text(out, &format!("\"{}\":{}", escaped(key), if indent.is_some() { " " } else { "" }));
                to_text(child, inner, out);
            }
            newline(out, depth);
            push_text(out, "}");
        }
        J::Arr(items) => {
            push_text(out, "[");
            for (n, child) in items.iter().enumerate() {
                push_text(out, if n > 0 { "," } else { "" });
                newline(out, depth + 1);
                to_text(child, inner, out);
            }
            newline(out, depth);
            push_text(out, "]");
        }
        J::Str(pieces) => {
            push_text(out, "\"");
            for piece in pieces {
                match piece.value {
                    Some(_) => out.push(Piece { text: escaped(&piece.text), value: piece.value }),
                    None => push_text(out, &escaped(&piece.text)),
                }
            }
            push_text(out, "\"");
        }
        J::Num(n) => push_text(out, n),
        J::Null => push_text(out, "null"),
    }
}

/// A unique key for an object under construction.
fn unique(fields: &[(String, J)], key: &str) -> String {
    let mut candidate = key.to_owned();
    let mut n = 2;
    while fields.iter().any(|(k, _)| *k == candidate) {
        candidate = format!("{key}_{n}");
        n += 1;
    }
    candidate
}

/// A tool result: a record with fields and a free-text note.
fn tool_result(rng: &mut Rng, lang: Lang, planted: &[Planted]) -> J {
    let mut record = vec![
        ("id".to_owned(), J::Num(rng.range(1, 999_999).to_string())),
        ("name".to_owned(), text(name(rng))),
    ];
    let mut notes = Vec::new();
    for (i, p) in planted.iter().enumerate() {
        if rng.chance(0.3) {
            let template =
                sentence(rng, lang).replace("{label}", &label(p, lang)).replace("{name}", &name(rng));
            notes.push(planted_str(&template, planted, i));
        } else {
            let key = unique(&record, &p.key);
            record.push((key, planted_str("{value}", planted, i)));
        }
    }
    record.push(("updated_at".into(), text(date(rng))));
    J::Obj(vec![
        ("status".into(), text("ok")),
        ("request_id".into(), text(uuid(rng))),
        ("data".into(), J::Obj(vec![("record".into(), J::Obj(record)), ("notes".into(), J::Arr(notes))])),
        ("page".into(), J::Obj(vec![("size".into(), J::Num("20".into())), ("next".into(), J::Null)])),
    ])
}

/// Search results whose snippets quote the values.
fn search_results(rng: &mut Rng, lang: Lang, planted: &[Planted]) -> J {
    let results = (0..planted.len())
        .map(|i| {
            let template = sentence(rng, lang)
                .replace("{label}", &label(&planted[i], lang))
                .replace("{name}", &name(rng));
            let page = rng.range(100, 9999);
            J::Obj(vec![
                ("title".into(), text(format!("{} – wiki page {page}", name(rng)))),
                ("snippet".into(), planted_str(&format!("… {template} …"), planted, i)),
                ("url".into(), text(format!("https://intranet.acme-corp.com/wiki/{page}"))),
                ("score".into(), J::Num(format!("0.{}", rng.range(10, 99)))),
            ])
        })
        .collect();
    J::Obj(vec![
        ("query".into(), text("customer records")),
        ("total".into(), J::Num(planted.len().to_string())),
        ("results".into(), J::Arr(results)),
    ])
}

/// A tool definition whose schema strings carry the values.
fn schema(rng: &mut Rng, lang: Lang, planted: &[Planted]) -> J {
    let mut properties: Vec<(String, J)> = Vec::new();
    let mut description =
        vec![Piece { text: "Updates the selected record on the page.".into(), value: None }];
    for (i, p) in planted.iter().enumerate() {
        let key = unique(&properties, &p.key.to_lowercase());
        let human = label(p, lang);
        let mut field = vec![("type".to_owned(), text("string"))];
        match rng.below(7) {
            0 => field.push(("title".into(), planted_str(&format!("{human}: {{value}}"), planted, i))),
            1 => field.push((
                "description".into(),
                planted_str(&format!("The {human}, e.g. {{value}}."), planted, i),
            )),
            2 => field.push(("default".into(), planted_str("{value}", planted, i))),
            3 => field.push(("const".into(), planted_str("{value}", planted, i))),
            4 => field.push(("examples".into(), J::Arr(vec![planted_str("{value}", planted, i)]))),
            5 => {
                let option = planted_str("{value}", planted, i);
                let mut options = vec![
                    option,
                    text(format!("{} ({})", rng.pick(&["other", "andere", "autre"]), rng.range(1, 9))),
                ];
                rng.shuffle(&mut options);
                field.push(("enum".into(), J::Arr(options)));
            }
            _ => {
                if let J::Str(pieces) = planted_str(&format!(" Current {human}: {{value}}."), planted, i) {
                    description.extend(pieces);
                }
            }
        }
        field.push(("x-label".into(), text(human)));
        properties.push((key, J::Obj(field)));
    }
    J::Obj(vec![
        (
            "name".into(),
            text(format!(
                "{}_{}",
                rng.pick(&["update", "submit", "select"]),
                rng.pick(&["contact", "payment", "account"])
            )),
        ),
        ("description".into(), J::Str(description)),
        (
            "inputSchema".into(),
            J::Obj(vec![("type".into(), text("object")), ("properties".into(), J::Obj(properties))]),
        ),
    ])
}

/// A JSON document for `channel` holding every planted value once.
pub fn document(rng: &mut Rng, lang: Lang, channel: Channel, planted: &[Planted]) -> (&'static str, Doc) {
    let (carrier, tree) = match channel {
        Channel::JsonSchema => ("tool_schema", schema(rng, lang, planted)),
        _ if rng.chance(0.6) => ("tool_result", tool_result(rng, lang, planted)),
        _ => ("search_results", search_results(rng, lang, planted)),
    };
    let doc = if channel == Channel::JsonText {
        let mut pieces = Vec::new();
        to_text(&tree, if rng.chance(0.5) { Some(0) } else { None }, &mut pieces);
        Doc::Text(pieces)
    } else {
        let mut strings = Vec::new();
        let value = to_value(&tree, "", &mut strings);
        Doc::Json { value, strings }
    };
    (carrier, doc)
}
