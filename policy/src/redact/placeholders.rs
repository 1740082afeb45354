//! Reversible placeholders: one numbered placeholder per distinct value, and the way back.
//!
//! Within one scope (an agent turn, one `/v1` request) the same value always gets the same
//! placeholder, `[email 1]`, `[iban 2]`, so the model can still tell values apart and refer to
//! them. "The same value" is compared in a canonical spelling (digits and letters of a number,
//! an address in lower case), so `DE89 3704…` and `DE893704…` are one IBAN; the first spelling
//! seen is the one restored. Schemas are redacted value-first (see `json`), so the spelling
//! restored for a form's `enum`/`const` option is the option's own.
//!
//! When the model answers with a tool call, [`Placeholders::restore_json`] puts the originals back
//! before the call leaves the gateway (to the page that already holds them, or to the `/v1`
//! client that sent them). Only placeholders this scope issued are restored; any other bracketed
//! text is left as it is. The originals never leave this value: audit records count redactions.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use super::kind::RedactionKind;

/// The placeholders issued in one scope and the values they stand for.
#[derive(Default, Clone)]
pub struct Placeholders {
    by_value: HashMap<(RedactionKind, String), String>,
    originals: HashMap<String, String>,
    issued: HashMap<RedactionKind, usize>,
}

impl fmt::Debug for Placeholders {
    /// Never prints a value: only how many placeholders were issued.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Placeholders").field("issued", &self.originals.len()).finish()
    }
}

impl Placeholders {
    /// An empty scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// The placeholder for `original` of `kind`: the one already issued for the same value, or
    /// the next number for the kind.
    pub(crate) fn issue(&mut self, kind: &RedactionKind, original: &str) -> &str {
        let key = (kind.clone(), canonical(kind, original));
        if !self.by_value.contains_key(&key) {
            let number = self.issued.entry(kind.clone()).or_insert(0);
            *number += 1;
            let placeholder = format!("[{} {}]", kind.label(), number);
            self.originals.insert(placeholder.clone(), original.to_owned());
            self.by_value.insert(key.clone(), placeholder);
        }
        &self.by_value[&key]
    }

    /// How many distinct values have placeholders.
    pub fn len(&self) -> usize {
        self.originals.len()
    }

    /// True when nothing was issued.
    pub fn is_empty(&self) -> bool {
        self.originals.is_empty()
    }

    /// `text` with every placeholder this scope issued replaced by its original; returns the
    /// text and how many were restored.
    pub fn restore(&self, text: &str) -> (String, usize) {
        if self.originals.is_empty() || !text.contains('[') {
            return (text.to_owned(), 0);
        }
        let mut out = String::with_capacity(text.len());
        let mut restored = 0;
        let mut rest = text;
        while let Some(open) = rest.find('[') {
            out.push_str(&rest[..open]);
            rest = &rest[open..];
            let issued = rest
                .find(']')
                .filter(|&close| close <= MAX_PLACEHOLDER)
                .and_then(|close| self.originals.get(&rest[..=close]).map(|original| (close, original)));
            match issued {
                Some((close, original)) => {
                    out.push_str(original);
                    restored += 1;
                    rest = &rest[close + 1..];
                }
                None => {
                    out.push('[');
                    rest = &rest[1..];
                }
            }
        }
        out.push_str(rest);
        (out, restored)
    }

    /// Restores placeholders in every string of `value` (object keys are left alone); returns
    /// how many were restored.
    pub fn restore_json(&self, value: &mut Value) -> usize {
        match value {
            Value::String(text) => {
                let (restored, count) = self.restore(text);
                if count > 0 {
                    *text = restored;
                }
                count
            }
            Value::Array(items) => items.iter_mut().map(|item| self.restore_json(item)).sum(),
            Value::Object(map) => map.values_mut().map(|item| self.restore_json(item)).sum(),
            _ => 0,
        }
    }
}

/// Longest placeholder text: a label of up to 64 bytes, a space, a number.
const MAX_PLACEHOLDER: usize = 80;

/// The spelling two occurrences of one value share: for numbers and identifiers their letters and
/// digits in upper case, for addresses the text in lower case, for secrets the text as it is.
fn canonical(kind: &RedactionKind, original: &str) -> String {
    match kind {
        RedactionKind::Email => original.to_lowercase(),
        RedactionKind::Phone
        | RedactionKind::Iban
        | RedactionKind::Card
        | RedactionKind::Ssn
        | RedactionKind::DeTaxId
        | RedactionKind::FrNir
        | RedactionKind::UkNino
        | RedactionKind::EsDni
        | RedactionKind::ItCodiceFiscale
        | RedactionKind::BrCpf
        | RedactionKind::CnResidentId
        | RedactionKind::SePersonnummer
        | RedactionKind::InAadhaar
        | RedactionKind::PlPesel
        | RedactionKind::NlBsn => original
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '+')
            .flat_map(char::to_uppercase)
            .collect(),
        RedactionKind::Ipv6 => original.to_lowercase(),
        RedactionKind::Credentials | RedactionKind::Ipv4 | RedactionKind::Custom(_) => original.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_value_same_placeholder() {
        let mut scope = Placeholders::new();
        assert_eq!(scope.issue(&RedactionKind::Iban, "DE89 3704 0044 0532 0130 00"), "[iban 1]");
        assert_eq!(scope.issue(&RedactionKind::Iban, "DE89370400440532013000"), "[iban 1]");
        assert_eq!(scope.issue(&RedactionKind::Iban, "GB82 WEST 1234 5698 7654 32"), "[iban 2]");
        assert_eq!(scope.issue(&RedactionKind::Email, "A@B.com"), "[email 1]");
        assert_eq!(scope.issue(&RedactionKind::Email, "a@b.COM"), "[email 1]");
        assert_eq!(scope.issue(&RedactionKind::Credentials, "hunter2"), "[credential 1]");
        assert_eq!(scope.len(), 4);
    }

    #[test]
    fn restores_only_issued_placeholders() {
        let mut scope = Placeholders::new();
        scope.issue(&RedactionKind::Iban, "DE89 3704 0044 0532 0130 00");
        let (text, count) = scope.restore("pay [iban 1], not [iban 2] or [x] [");
        assert_eq!(text, "pay DE89 3704 0044 0532 0130 00, not [iban 2] or [x] [");
        assert_eq!(count, 1);
    }

    #[test]
    fn restores_inside_json_with_escaping() {
        let mut scope = Placeholders::new();
        scope.issue(&RedactionKind::Credentials, "p\"ss\\word");
        let mut value: Value =
            serde_json::from_str(r#"{"password":"[credential 1]","n":[1,"[credential 1]"]}"#).expect("JSON");
        let count = scope.restore_json(&mut value);
        assert_eq!(count, 2);
        let value: Value = serde_json::from_str(&value.to_string()).expect("still JSON");
        assert_eq!(value["password"], "p\"ss\\word");
        assert_eq!(value["n"][1], "p\"ss\\word");
    }

    #[test]
    fn debug_shows_no_values() {
        let mut scope = Placeholders::new();
        scope.issue(&RedactionKind::Email, "secret@example.com");
        assert!(!format!("{scope:?}").contains("secret"));
    }
}
