//! Turns a policy document into a compiled policy, collecting every problem with its location.
//!
//! This is the only place that interprets the document: effect names, site and group references,
//! globs, CEL and admin regexes are all checked and compiled here, once. Structural TOML problems
//! stop at the first; semantic problems are all reported, in document order. Rules are
//! compiled in [`rule`].

mod rule;

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use toml::Spanned;

use crate::compiled::Compiled;
use crate::condition::{self, Condition};
use crate::document::Document;
use crate::error::{PolicyError, PolicyErrors};
use crate::ids::{GroupName, RedactorName, SiteId};
use crate::index::{PatternIndex, RuleIndex};
use crate::location::{Lines, key_path_at};
use crate::model::{ConsequentialHint, Defaults, Effect, SiteDefaults};
use crate::redact::{CustomRecognizer, PhoneRegions, RedactionKind, RedactionSet, Redactor};

/// Parses and compiles `text`; `source` names the file in messages.
pub(crate) fn compile(text: &str, source: &str, known_sites: &[SiteId]) -> Result<Compiled, PolicyErrors> {
    let lines = Lines::new(text);
    let document: Document = toml::from_str(text).map_err(|error| {
        let offset = error.span().map_or(0, |span| span.start);
        PolicyErrors {
            errors: vec![PolicyError {
                file: source.to_owned(),
                line: lines.line(offset),
                key: key_path_at(text, offset),
                message: error.message().trim_end().to_owned(),
            }],
        }
    })?;
    let mut compiler = Compiler {
        file: source,
        lines,
        errors: Vec::new(),
        known_sites: known_sites.iter().cloned().collect(),
        groups: HashSet::new(),
        redactors: HashSet::new(),
        environment: condition::standard_environment(),
    };
    let compiled = compiler.document(document);
    if compiler.errors.is_empty() {
        Ok(compiled)
    } else {
        let mut errors = compiler.errors;
        errors.sort_by_key(|error| error.line);
        Err(PolicyErrors { errors })
    }
}

pub(super) struct Compiler<'a> {
    pub(super) file: &'a str,
    pub(super) lines: Lines,
    pub(super) errors: Vec<PolicyError>,
    pub(super) known_sites: HashSet<SiteId>,
    pub(super) groups: HashSet<GroupName>,
    pub(super) redactors: HashSet<String>,
    pub(super) environment: Arc<cel::Env>,
}

impl Compiler<'_> {
    pub(super) fn error(&mut self, span: Range<usize>, key: impl Into<String>, message: impl Into<String>) {
        self.errors.push(PolicyError {
            file: self.file.to_owned(),
            line: self.lines.line(span.start),
            key: key.into(),
            message: message.into(),
        });
    }

    fn document(&mut self, document: Document) -> Compiled {
        for (index, group) in document.groups.iter().enumerate() {
            let key = format!("groups[{index}]");
            if group.get_ref().is_empty() {
                self.error(group.span(), key, "empty group name");
            } else if !self.groups.insert(GroupName::new(group.get_ref().as_str())) {
                self.error(group.span(), key, format!("group {:?} declared twice", group.get_ref()));
            }
        }
        let custom = self.redactors(&document);
        let defaults = self.defaults(&document);
        let sites = self.sites(&document);
        let mut rules = Vec::new();
        let mut tool_entries = Vec::new();
        let mut context_entries = Vec::new();
        let mut first_line: HashMap<String, usize> = HashMap::new();
        for (index, rule) in document.rules.iter().enumerate() {
            let id = rule.get_ref().id.get_ref();
            let line = self.lines.line(rule.get_ref().id.span().start);
            if id.is_empty() {
                self.error(rule.get_ref().id.span(), format!("rule[{index}].id"), "empty rule id");
            } else if let Some(first) = first_line.get(id) {
                let message = format!("duplicate rule id {id:?} (first used on line {first})");
                self.error(rule.get_ref().id.span(), format!("rule[{index}].id"), message);
            } else {
                first_line.insert(id.clone(), line);
            }
            let position = rules.len();
            rules.push(self.rule(index, position, rule.get_ref(), &mut tool_entries, &mut context_entries));
        }
        let tool_index = PatternIndex::new(&tool_entries);
        let context_index = PatternIndex::new(&context_entries);
        let rule_index = RuleIndex::new(&rules);
        Compiled {
            defaults,
            sites,
            rules,
            tool_entries,
            context_entries,
            tool_index,
            context_index,
            rule_index,
            redactor: Arc::new(Redactor::new(custom).with_phone_regions(self.phone_regions(&document))),
            environment: Arc::clone(&self.environment),
            groups: document.groups.iter().map(|group| GroupName::new(group.get_ref().as_str())).collect(),
        }
    }

    fn redactors(&mut self, document: &Document) -> Vec<CustomRecognizer> {
        let mut custom = Vec::new();
        for (index, redactor) in document.redactors.iter().enumerate() {
            let name = redactor.name.get_ref();
            let key = format!("redactor[{index}].name");
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
            if !valid {
                self.error(
                    redactor.name.span(),
                    key,
                    format!("redactor name {name:?} must be lowercase letters, digits, '_' or '-'"),
                );
                continue;
            }
            if name == "all" || RedactionKind::builtin(name).is_some() {
                self.error(
                    redactor.name.span(),
                    key,
                    format!("{name:?} is a built-in recognizer; choose another name"),
                );
                continue;
            }
            if !self.redactors.insert(name.clone()) {
                self.error(redactor.name.span(), key, format!("redactor {name:?} defined twice"));
                continue;
            }
            match CustomRecognizer::new(RedactorName::new(name.as_str()), redactor.pattern.get_ref()) {
                Ok(recognizer) => custom.push(recognizer),
                Err(error) => self.error(
                    redactor.pattern.span(),
                    format!("redactor[{index}].pattern"),
                    format!("invalid regex: {}", one_line(&error.to_string())),
                ),
            }
        }
        custom
    }

    fn defaults(&mut self, document: &Document) -> Defaults {
        let mut defaults = Defaults {
            unknown_tools: Effect::Deny,
            unknown_contexts: Effect::Deny,
            consequential_hint: ConsequentialHint::Ignore,
            redact: RedactionSet::new(),
        };
        let Some(raw) = &document.defaults else {
            return defaults;
        };
        if let Some(value) = &raw.unknown_tools {
            defaults.unknown_tools =
                self.tool_effect(value, "defaults.unknown_tools").unwrap_or(Effect::Deny);
        }
        if let Some(value) = &raw.unknown_contexts {
            defaults.unknown_contexts =
                self.context_effect(value, "defaults.unknown_contexts").unwrap_or(Effect::Deny);
        }
        if let Some(value) = &raw.consequential_hint {
            defaults.consequential_hint = match value.get_ref().as_str() {
                "approve" => ConsequentialHint::Approve,
                "ignore" => ConsequentialHint::Ignore,
                other => {
                    let message = format!("unknown value {other:?}; expected \"approve\" or \"ignore\"");
                    self.error(value.span(), "defaults.consequential_hint", message);
                    ConsequentialHint::Ignore
                }
            };
        }
        defaults.redact = self.redaction_set(&raw.redact, "defaults.redact");
        defaults
    }

    fn sites(&mut self, document: &Document) -> HashMap<SiteId, SiteDefaults> {
        let mut sites = HashMap::new();
        for (name, site) in &document.sites {
            let id = SiteId::new(name.as_str());
            if !self.known_sites.contains(&id) {
                self.error(
                    site.span(),
                    format!("sites.{name}"),
                    format!("unknown site {name:?}: not in the gateway configuration"),
                );
            }
            let raw = site.get_ref();
            let unknown_tools = raw
                .unknown_tools
                .as_ref()
                .and_then(|value| self.tool_effect(value, &format!("sites.{name}.unknown_tools")));
            let unknown_contexts = raw
                .unknown_contexts
                .as_ref()
                .and_then(|value| self.context_effect(value, &format!("sites.{name}.unknown_contexts")));
            sites.insert(id, SiteDefaults { unknown_tools, unknown_contexts });
        }
        sites
    }

    fn tool_effect(&mut self, value: &Spanned<String>, key: &str) -> Option<Effect> {
        match value.get_ref().as_str() {
            "deny" => Some(Effect::Deny),
            "allow" => Some(Effect::Allow),
            "approve" => Some(Effect::Approve),
            other => {
                let message = format!("unknown value {other:?}; expected \"deny\", \"allow\" or \"approve\"");
                self.error(value.span(), key, message);
                None
            }
        }
    }

    fn context_effect(&mut self, value: &Spanned<String>, key: &str) -> Option<Effect> {
        match value.get_ref().as_str() {
            "deny" => Some(Effect::Deny),
            "allow" => Some(Effect::Allow),
            other => {
                let message = format!("unknown value {other:?}; expected \"deny\" or \"allow\"");
                self.error(value.span(), key, message);
                None
            }
        }
    }

    /// `[redaction] phone_regions`, or the default regions.
    fn phone_regions(&mut self, document: &Document) -> PhoneRegions {
        let Some(regions) =
            document.redaction.as_ref().and_then(|redaction| redaction.phone_regions.as_ref())
        else {
            return PhoneRegions::default();
        };
        let mut known = Vec::new();
        for (index, region) in regions.get_ref().iter().enumerate() {
            match PhoneRegions::parse([region.get_ref().as_str()]) {
                Ok(_) => known.push(region.get_ref().as_str()),
                Err(error) => {
                    self.error(region.span(), format!("redaction.phone_regions[{index}]"), error.to_string())
                }
            }
        }
        PhoneRegions::parse(known).unwrap_or_default()
    }

    pub(super) fn redaction_set(&mut self, names: &[Spanned<String>], key: &str) -> RedactionSet {
        let mut set = RedactionSet::new();
        for (index, name) in names.iter().enumerate() {
            if name.get_ref() == "all" {
                set.extend_from(&RedactionSet::builtin());
                continue;
            }
            let Ok(kind) = name.get_ref().parse::<RedactionKind>();
            if matches!(kind, RedactionKind::Custom(_)) && !self.redactors.contains(name.get_ref()) {
                let builtin: Vec<&str> = RedactionKind::BUILTIN.iter().map(RedactionKind::as_str).collect();
                let message = format!(
                    "unknown redaction {:?}: use all, {} or a [[redactor]] name",
                    name.get_ref(),
                    builtin.join(", ")
                );
                self.error(name.span(), format!("{key}[{index}]"), message);
                continue;
            }
            set.insert(kind);
        }
        set
    }

    pub(super) fn condition(&mut self, source: &Spanned<String>, key: String) -> Option<Condition> {
        match Condition::compile(source.get_ref(), &self.environment) {
            Ok(condition) => Some(condition),
            Err(message) => {
                self.error(source.span(), key, format!("invalid CEL: {}", one_line(&message)));
                None
            }
        }
    }
}

/// Regex and CEL messages span several lines; error lines must stay one line each.
pub(super) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
