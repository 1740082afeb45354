//! The typed `[sites.<id>.forms]` section: which legacy forms of a site become agent tools, by
//! CSS selector rules or the opt-in `auto` mode. Rules are compiled (selectors parsed, names
//! checked) once here, so a typo is a configuration error with its line, not a page failure.

use super::raw;
use injector::{FormRuleSpec, FormRules};
use std::sync::Arc;

impl super::Checker<'_> {
    /// Compiles a site's form rules; every broken rule is reported.
    pub(super) fn forms(&mut self, site_key: &str, raw: Option<&raw::RawForms>) -> Option<Arc<FormRules>> {
        let Some(raw) = raw else { return Some(Arc::new(FormRules::default())) };
        let mut specs = Vec::with_capacity(raw.rules.len());
        let mut broken = false;
        for (index, rule) in raw.rules.iter().enumerate() {
            let key = format!("{site_key}.forms.rule[{index}]");
            let spec = FormRuleSpec {
                selector: rule.get_ref().selector.clone(),
                name: rule.get_ref().name.clone(),
                description: rule.get_ref().description.clone(),
                params: rule
                    .get_ref()
                    .params
                    .iter()
                    .map(|(name, text)| (name.clone(), text.clone()))
                    .collect(),
                autosubmit: rule.get_ref().autosubmit,
            };
            // Compiled alone first, so each broken rule is reported with its own line.
            if let Err(error) = FormRules::new(vec![spec.clone()], false) {
                let message = error.to_string();
                let message = message.split_once(": ").map_or(message.as_str(), |(_, rest)| rest);
                self.problem(rule, &key, message);
                broken = true;
            }
            specs.push(spec);
        }
        if broken {
            return None;
        }
        match FormRules::new(specs, raw.auto) {
            Ok(rules) => Some(Arc::new(rules)),
            Err(error) => {
                self.problem(&raw.rules[0], &format!("{site_key}.forms"), &error.to_string());
                None
            }
        }
    }
}
