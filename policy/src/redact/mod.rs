//! Redaction: finds personal data and secrets in text and replaces them with numbered
//! placeholders before anything reaches the model.
//!
//! One pass over a text:
//! 1. HTML character references are decoded (`entities`): the recognizers see what a reader sees.
//! 2. The scan text folds Unicode spaces, dashes, fullwidth forms and invisible characters to
//!    ASCII (`normalize`), so `4111\u{A0}1111…` reads as `4111 1111…`.
//! 3. Every built-in recognizer reports validated findings and *look-alikes* (a kind's shape that
//!    fails its validator). `finding::settle` keeps the longest; a look-alike is left whole and
//!    blocks every other kind inside it, so nothing is re-read in pieces.
//! 4. The findings of the kinds in the set are replaced in the decoded text by placeholders from
//!    the caller's [`Placeholders`] scope (`[iban 1]`), which can restore them in the model's
//!    tool calls. Admin `[[redactor]]` regexes run last, on the redacted text.
//!
//! Recognizers (each file owns one kind's rules and validator): `email` (IANA top-level
//! domains), `phone` (libphonenumber metadata), `card` (issuer prefixes and Luhn), `iban`
//! (country lengths and mod-97), `ssn` (SSA rules), `national` (national identification numbers
//! of eleven countries, one file each), `ip`, `credentials` (keys, tokens, passwords). `json`
//! walks structured values (tool results, input schemas) string by string.
//!
//! This module may use only the policy crate's ids; it knows nothing of HTTP or the gateway.

mod boundary;
mod card;
mod credentials;
mod custom;
mod digits;
mod email;
pub mod entities;
pub(crate) mod finding;
mod iban;
mod ip;
mod json;
mod kind;
mod national;
pub(crate) mod normalize;
mod phone;
mod placeholders;
mod set;
mod ssn;
mod tld;

use std::collections::BTreeMap;

use serde::Serialize;

pub use custom::CustomRecognizer;
pub use kind::RedactionKind;
pub use national::is_date;
pub use phone::{DEFAULT_PHONE_REGIONS, PhoneRegions, UnknownRegion};
pub use placeholders::Placeholders;
pub use set::RedactionSet;

use finding::Finding;
use normalize::Scan;

/// How many values of each kind were replaced.
pub type Counts = BTreeMap<RedactionKind, usize>;

/// Adds `more` to `counts`.
pub fn add_counts(counts: &mut Counts, more: Counts) {
    for (kind, count) in more {
        *counts.entry(kind).or_insert(0) += count;
    }
}

/// `3 redactions (email 2, iban 1)`: the total and the kinds, never a value.
pub fn summary(counts: &Counts) -> String {
    let total: usize = counts.values().sum();
    if total == 0 {
        return "0 redactions".to_owned();
    }
    let kinds: Vec<String> = counts.iter().map(|(kind, count)| format!("{kind} {count}")).collect();
    format!("{total} redaction{} ({})", if total == 1 { "" } else { "s" }, kinds.join(", "))
}

/// Redacted text and how many findings of each kind were replaced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Redacted {
    /// The entity-decoded text with placeholders.
    pub text: String,
    /// Replacements per kind (kinds with none are absent).
    pub counts: Counts,
}

impl Redacted {
    /// The total number of replacements.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

/// The recognizers of one policy: the built-ins, with the policy's phone regions, plus its admin
/// regexes.
#[derive(Clone, Debug)]
pub struct Redactor {
    phones: PhoneRegions,
    custom: Vec<CustomRecognizer>,
}

impl Redactor {
    /// The built-in recognizers with the default phone regions, plus `custom` admin regexes.
    pub fn new(custom: Vec<CustomRecognizer>) -> Self {
        Self { phones: PhoneRegions::default(), custom }
    }

    /// The same recognizers reading national phone numbers in `regions`.
    pub fn with_phone_regions(mut self, regions: PhoneRegions) -> Self {
        self.phones = regions;
        self
    }

    /// The admin recognizers, in document order.
    pub fn custom(&self) -> &[CustomRecognizer] {
        &self.custom
    }

    /// Redacts `text` with placeholders numbered from 1 (a scope of its own).
    pub fn redact(&self, text: &str, set: &RedactionSet) -> Redacted {
        self.redact_in(text, set, &mut Placeholders::new())
    }

    /// Decodes entities in `text`, then replaces every valid finding of a kind in `set` with its
    /// placeholder in `scope`.
    pub fn redact_in(&self, text: &str, set: &RedactionSet, scope: &mut Placeholders) -> Redacted {
        let decoded = entities::decode(text);
        let mut counts = Counts::new();
        let mut text = if set.iter().any(RedactionKind::is_builtin) {
            self.redact_builtin(&decoded, set, scope, &mut counts)
        } else {
            decoded.into_owned()
        };
        for recognizer in &self.custom {
            let kind = RedactionKind::Custom(recognizer.name().clone());
            if set.contains(&kind) {
                let count = recognizer.apply(&mut text, scope);
                if count > 0 {
                    *counts.entry(kind).or_insert(0) += count;
                }
            }
        }
        Redacted { text, counts }
    }

    /// Redacts every string inside `value` (see `json` for the order); returns the counts. A whole
    /// string under a key that names a secret (`"password": "…"`) is one credential.
    pub fn redact_json(
        &self,
        value: &mut serde_json::Value,
        set: &RedactionSet,
        scope: &mut Placeholders,
    ) -> Counts {
        let mut counts = Counts::new();
        let keys = set.contains(&RedactionKind::Credentials);
        json::redact_strings(value, &mut |key, text| {
            if let Some(json::Key::Number(name)) = key {
                return self.redact_number(name, text, set, scope, &mut counts);
            }
            let name = match key {
                Some(json::Key::Name(name)) => Some(name),
                _ => None,
            };
            let key_material = key == Some(json::Key::Private) && credentials::is_key_material(text);
            if keys && (key_material || name.is_some_and(|name| credentials::secret_under_key(name, text))) {
                *counts.entry(RedactionKind::Credentials).or_insert(0) += 1;
                return Some(scope.issue(&RedactionKind::Credentials, text).to_owned());
            }
            let redacted = match (key, name.and_then(credentials::cookie_header)) {
                (Some(json::Key::Cookie(cookie)), _) => {
                    self.redact_header_value(&format!("Cookie: {cookie}="), text, set, scope)
                }
                (_, Some(header)) => self.redact_header_value(header, text, set, scope),
                // A plain key is read as the words before its value: `{"pesel": "…"}` names its
                // number as `PESEL: …` does (the national numbers and SSNs that need their word).
                (Some(json::Key::Name(name)), None) if json::is_plain_name(name) => {
                    self.redact_header_value(&format!("{name}: "), text, set, scope)
                }
                _ => self.redact_in(text, set, scope),
            };
            let changed = redacted.text != text;
            add_counts(&mut counts, redacted.counts);
            changed.then_some(redacted.text)
        });
        counts
    }

    /// The placeholder for the JSON number `digits` under the key `name`, if it is one: a secret
    /// under a secret's name (`{"pin": 4829}`), a card number (Luhn and an issuer prefix), or an
    /// SSN or phone number under a name that says so (`{"ssn": 536221234}`,
    /// `{"phone": 4155552671}`). Other numbers stay numbers: ids, amounts and timestamps are not
    /// read as phone numbers without a name saying they are.
    fn redact_number(
        &self,
        name: &str,
        digits: &str,
        set: &RedactionSet,
        scope: &mut Placeholders,
        counts: &mut Counts,
    ) -> Option<String> {
        if set.contains(&RedactionKind::Credentials) && credentials::secret_under_key(name, digits) {
            *counts.entry(RedactionKind::Credentials).or_insert(0) += 1;
            return Some(scope.issue(&RedactionKind::Credentials, digits).to_owned());
        }
        let lower = name.to_ascii_lowercase();
        let named = |words: &[&str]| words.iter().any(|word| lower.contains(word));
        let kind = if named(&["ssn", "social"]) {
            RedactionKind::Ssn
        } else if named(&["phone", "tel", "mobile", "fax", "cell"]) {
            RedactionKind::Phone
        } else {
            RedactionKind::Card
        };
        // Read with its name before it, as a labelled value in text is.
        let label = format!("{name}: ");
        let labelled = format!("{label}{digits}");
        let scan = Scan::new(&labelled);
        let found = self.findings(scan.text()).into_iter().find(|finding| {
            finding.kind == kind
                && set.contains(&kind)
                && scan.original(finding.start, finding.end) == (label.len(), labelled.len())
        })?;
        *counts.entry(found.kind.clone()).or_insert(0) += 1;
        Some(scope.issue(&found.kind, digits).to_owned())
    }

    /// Redacts `value` as what follows `header` on a header line (`Cookie: `, `Cookie: sid=`): a
    /// structured log or a HAR file keeps a cookie header's value under its name, and a cookie's
    /// value beside its name, where no text shows what they are. No recognizer reports the header,
    /// so the redacted line still starts with it.
    fn redact_header_value(
        &self,
        header: &str,
        value: &str,
        set: &RedactionSet,
        scope: &mut Placeholders,
    ) -> Redacted {
        let Redacted { text, counts } = self.redact_in(&format!("{header}{value}"), set, scope);
        match text.strip_prefix(header) {
            Some(redacted) => Redacted { text: redacted.to_owned(), counts },
            // Never the case; if it were, the header shown is better than a value not redacted.
            None => Redacted { text, counts },
        }
    }

    /// Every built-in finding in `text`, settled: the valid ones in text order, in scan offsets.
    fn findings(&self, scan: &str) -> Vec<Finding> {
        let mut found = Vec::new();
        if scan.contains('@') {
            email::find(scan, &mut found);
        }
        email::find_spelled(scan, &mut found);
        let groups = digits::groups(scan);
        if !groups.is_empty() {
            iban::find(scan, &groups, &mut found);
            national::find(scan, &groups, &mut found);
            digits::for_each_joined(scan, &groups, digits::CARD_AND_SSN_SEPARATORS, |run| {
                card::in_run(scan, run, &mut found);
                ssn::in_run(scan, run, &mut found);
            });
            ssn::find_dotted(scan, &groups, &mut found);
            ip::find_ipv4(scan, &groups, &mut found);
            ip::find_ipv6(scan, &mut found);
            self.phones.find(scan, &groups, &finding::Claims::new(&found), &mut found);
        } else if scan.contains("::") {
            ip::find_ipv6(scan, &mut found);
        }
        credentials::find(scan, &groups, &mut found);
        finding::settle(found)
    }

    fn redact_builtin(
        &self,
        text: &str,
        set: &RedactionSet,
        scope: &mut Placeholders,
        counts: &mut Counts,
    ) -> String {
        let scan = Scan::new(text);
        let findings = self.findings(scan.text());
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for finding in findings.into_iter().filter(|finding| set.contains(&finding.kind)) {
            let (start, end) = scan.original(finding.start, finding.end);
            if start < copied {
                continue;
            }
            out.push_str(&text[copied..start]);
            out.push_str(scope.issue(&finding.kind, &text[start..end]));
            *counts.entry(finding.kind).or_insert(0) += 1;
            copied = end;
        }
        out.push_str(&text[copied..]);
        out
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RedactorName;

    fn redact(text: &str) -> Redacted {
        Redactor::default().redact(text, &RedactionSet::builtin())
    }

    #[test]
    fn replaces_each_kind_with_a_numbered_placeholder() {
        let out = redact(
            "Mail a.b@example.com, call +49 30 1234567, IBAN DE89 3704 0044 0532 0130 00, \
             card 4111-1111-1111-1111, SSN 123-45-6789, again a.b@example.com.",
        );
        assert_eq!(
            out.text,
            "Mail [email 1], call [phone 1], IBAN [iban 1], card [card 1], SSN [ssn 1], again [email 1]."
        );
        assert_eq!(out.total(), 6);
    }

    #[test]
    fn only_kinds_in_the_set() {
        let set: RedactionSet = [RedactionKind::Email].into_iter().collect();
        let out = Redactor::default().redact("a@b.com 4111111111111111", &set);
        assert_eq!(out.text, "[email 1] 4111111111111111");
    }

    #[test]
    fn stray_number_before_a_valid_one() {
        let out = redact("ref 12 4111 1111 1111 1111");
        assert_eq!(out.text, "ref 12 [card 1]");
    }

    #[test]
    fn unicode_separators_are_read_and_the_rest_kept() {
        let out = redact("Karte 4111\u{A0}1111\u{A0}1111\u{A0}1111 für Jürgen");
        assert_eq!(out.text, "Karte [card 1] für Jürgen");
    }

    #[test]
    fn escaped_text_is_read_through_and_replaced_as_written() {
        // A logged URL's query and the JSON a Python tool prints (every character outside ASCII
        // escaped): the model reads both through their escapes.
        let out = redact("GET /search?email=john.doe%40example.com&page=2");
        assert_eq!(out.text, "GET /search?email=[email 1]&page=2");
        let out = redact(
            r#"{"name": "J\u00f6rg", "mail": "j\u00f6rg@example.de", "iban": "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000"}"#,
        );
        assert_eq!(out.text, r#"{"name": "J\u00f6rg", "mail": "[email 1]", "iban": "[iban 1]"}"#);
        // An escaped delimiter stays one: the password is still taken whole.
        let out = redact("postgres://admin%40corp:S3cr3t%2Fx%23y@db.internal/app");
        assert_eq!(out.text, "postgres://admin%40corp:[credential 1]@db.internal/app");
        let out = redact("password=p%40ss%26w0rd&user=bob");
        assert_eq!(out.text, "password=[credential 1]&user=bob");
    }

    #[test]
    fn numbers_written_in_the_digits_of_other_scripts() {
        // Arabic-Indic digits in an Arabic page, Devanagari in a Hindi one.
        let out = redact(
            "رقم البطاقة \u{664}\u{661}\u{661}\u{661} \u{661}\u{661}\u{661}\u{661} \u{661}\u{661}\u{661}\u{661} \u{661}\u{661}\u{661}\u{661} شكرا",
        );
        assert_eq!(out.text, "رقم البطاقة [card 1] شكرا");
        let out = redact(
            "फ़ोन: +\u{96F}\u{967} \u{96F}\u{96E}\u{96D}\u{96C}\u{96B} \u{96A}\u{969}\u{968}\u{967}\u{966}",
        );
        assert_eq!(out.text, "फ़ोन: [phone 1]");
    }

    #[test]
    fn a_password_after_the_fullwidth_colon_of_cjk_text() {
        assert_eq!(redact("密码\u{FF1A}Xiatian2024!").text, "密码\u{FF1A}[credential 1]");
    }

    #[test]
    fn scope_numbers_across_calls_and_restores() {
        let redactor = Redactor::default();
        let set = RedactionSet::builtin();
        let mut scope = Placeholders::new();
        let first = redactor.redact_in("to a@b.com", &set, &mut scope);
        let second = redactor.redact_in("cc c@d.org and a@b.com", &set, &mut scope);
        assert_eq!(first.text, "to [email 1]");
        assert_eq!(second.text, "cc [email 2] and [email 1]");
        assert_eq!(scope.restore("[email 2]").0, "c@d.org");
    }

    #[test]
    fn custom_after_builtin() {
        let custom = CustomRecognizer::new(RedactorName::new("employee_id"), r"\bEMP-[0-9]{6}\b")
            .unwrap_or_else(|e| panic!("{e}"));
        let redactor = Redactor::new(vec![custom]);
        let mut set = RedactionSet::builtin();
        set.insert(RedactionKind::Custom(RedactorName::new("employee_id")));
        let out = redactor.redact("EMP-123456 wrote a@b.com, EMP-123456 again", &set);
        assert_eq!(out.text, "[employee_id 1] wrote [email 1], [employee_id 1] again");
    }
}
