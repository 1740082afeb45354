//! A site's rules for turning legacy forms into tools, compiled once when the configuration is
//! loaded: selectors parsed, names checked, descriptions escaped.
//!
//! A bad rule is an error naming the rule's index and the problem, so a typo in the config never
//! silently turns into "no tool".

use lol_html::Selector;

use super::attribute_text::escape_to_ascii;
use super::form_names::is_valid_name;
use super::path_glob::PathGlob;

/// One rule as written in the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormRuleSpec {
    /// CSS selector (lol_html's subset) matching the `<form>` elements the rule applies to.
    pub selector: String,
    /// Tool name; must match `^[A-Za-z0-9_.-]{1,128}$`.
    pub name: String,
    /// Tool description; must not be blank.
    pub description: String,
    /// Control `name` → parameter description, written as `toolparamdescription`.
    pub params: Vec<(String, String)>,
    /// Control `name` → a JSON Schema fragment (serialized JSON object) for its parameter,
    /// written as `data-toolgate-schema`; the runtime merges it into the parameter's schema.
    pub param_schemas: Vec<(String, String)>,
    /// Whether the agent may submit the form without the user (`toolautosubmit`).
    pub autosubmit: bool,
    /// Only forms submitted with this method (`GET` or `POST`, any case); `None`: any.
    pub method: Option<String>,
    /// Only forms whose `action` resolves to a path one of these globs matches
    /// ([`PathGlob`]); empty: any action.
    pub action: Vec<String>,
}

/// Why a rule was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormRuleError {
    /// The selector is not one lol_html can match.
    #[error("form rule {rule}: invalid selector {selector:?}: {reason}")]
    Selector {
        /// Index of the rule in the list.
        rule: usize,
        /// The selector as written.
        selector: String,
        /// lol_html's explanation.
        reason: String,
    },
    /// The tool name does not match `^[A-Za-z0-9_.-]{1,128}$`.
    #[error("form rule {rule}: invalid tool name {name:?} (allowed: 1-128 of A-Z a-z 0-9 _ . -)")]
    Name {
        /// Index of the rule in the list.
        rule: usize,
        /// The name as written.
        name: String,
    },
    /// The description is empty or only whitespace.
    #[error("form rule {rule}: the description is empty")]
    EmptyDescription {
        /// Index of the rule in the list.
        rule: usize,
    },
    /// A parameter has an empty control name or an empty description.
    #[error("form rule {rule}: parameter {param:?} needs a control name and a description")]
    Param {
        /// Index of the rule in the list.
        rule: usize,
        /// The control name as written.
        param: String,
    },
    /// The method is neither `GET` nor `POST`.
    #[error("form rule {rule}: method {method:?} must be GET or POST")]
    Method {
        /// Index of the rule in the list.
        rule: usize,
        /// The method as written.
        method: String,
    },
    /// An `action` glob is not a URL path pattern.
    #[error("form rule {rule}: action {reason}")]
    Action {
        /// Index of the rule in the list.
        rule: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// The compiled rules of one site, shared by every response of that site.
#[derive(Debug, Clone, Default)]
pub struct FormRules {
    pub(super) rules: Vec<FormRule>,
    pub(super) auto: bool,
    /// The path of the page being rewritten, against which forms' actions resolve (`/` unless
    /// [`FormRules::at_page`] set it).
    pub(super) page_path: Option<String>,
}

/// One compiled rule; attribute values are stored already escaped.
#[derive(Debug, Clone)]
pub(super) struct FormRule {
    pub(super) selector: Selector,
    pub(super) name: String,
    pub(super) description: String,
    pub(super) params: Vec<(String, String)>,
    pub(super) param_schemas: Vec<(String, String)>,
    pub(super) autosubmit: bool,
    /// Upper case; `None`: any method.
    pub(super) method: Option<String>,
    /// Globs on the resolved action path; empty: any.
    pub(super) action: Vec<PathGlob>,
}

impl FormRules {
    /// Compiles `rules`; `auto` turns on deriving tools for forms no rule matches.
    pub fn new(rules: Vec<FormRuleSpec>, auto: bool) -> Result<Self, FormRuleError> {
        let rules = rules
            .into_iter()
            .enumerate()
            .map(|(index, spec)| compile(index, spec))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules, auto, page_path: None })
    }

    /// The same rules for the page at `path` (forms' actions resolve against it).
    #[must_use]
    pub fn at_page(mut self, path: &str) -> Self {
        self.page_path = Some(path.to_owned());
        self
    }

    /// Whether a rule is scoped by its form's action (then the page's path matters).
    pub fn scopes_actions(&self) -> bool {
        self.rules.iter().any(|rule| !rule.action.is_empty())
    }

    /// Whether any rule exists or auto mode is on (otherwise forms are only filtered).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && !self.auto
    }

    /// Whether auto mode is on.
    pub fn auto(&self) -> bool {
        self.auto
    }

    /// The same rules but only those `keep` accepts by index (the order of [`FormRules::new`]),
    /// for a page some rules do not apply to; auto mode is kept as it is.
    pub fn only(&self, keep: impl Fn(usize) -> bool) -> Self {
        let rules =
            self.rules.iter().enumerate().filter(|(index, _)| keep(*index)).map(|(_, rule)| rule.clone());
        Self { rules: rules.collect(), auto: self.auto, page_path: self.page_path.clone() }
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub(super) fn has_params(&self) -> bool {
        self.rules.iter().any(FormRule::describes_controls)
    }
}

impl FormRule {
    /// Whether the rule writes anything on its form's controls.
    pub(super) fn describes_controls(&self) -> bool {
        !self.params.is_empty() || !self.param_schemas.is_empty()
    }
}

fn compile(rule: usize, spec: FormRuleSpec) -> Result<FormRule, FormRuleError> {
    let selector = spec.selector.parse::<Selector>().map_err(|error| FormRuleError::Selector {
        rule,
        selector: spec.selector.clone(),
        reason: error.to_string(),
    })?;
    if !is_valid_name(&spec.name) {
        return Err(FormRuleError::Name { rule, name: spec.name });
    }
    if spec.description.trim().is_empty() {
        return Err(FormRuleError::EmptyDescription { rule });
    }
    let mut params = Vec::with_capacity(spec.params.len());
    for (control, description) in spec.params {
        if control.is_empty() || description.trim().is_empty() {
            return Err(FormRuleError::Param { rule, param: control });
        }
        params.push((control, escape_to_ascii(description.trim())));
    }
    let method = match spec.method.map(|method| method.trim().to_ascii_uppercase()) {
        None => None,
        Some(method) if method == "GET" || method == "POST" => Some(method),
        Some(method) => return Err(FormRuleError::Method { rule, method }),
    };
    let action = spec
        .action
        .iter()
        .map(|pattern| PathGlob::new(pattern))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|reason| FormRuleError::Action { rule, reason })?;
    let mut param_schemas = Vec::with_capacity(spec.param_schemas.len());
    for (control, fragment) in spec.param_schemas {
        if control.is_empty() || !(fragment.starts_with('{') && fragment.ends_with('}')) {
            return Err(FormRuleError::Param { rule, param: control });
        }
        param_schemas.push((control, escape_to_ascii(&fragment)));
    }
    Ok(FormRule {
        selector,
        name: spec.name,
        description: escape_to_ascii(spec.description.trim()),
        params,
        param_schemas,
        autosubmit: spec.autosubmit,
        method,
        action,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(selector: &str, name: &str, description: &str) -> FormRuleSpec {
        FormRuleSpec {
            selector: selector.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            params: Vec::new(),
            param_schemas: Vec::new(),
            autosubmit: false,
            method: None,
            action: Vec::new(),
        }
    }

    #[test]
    fn compiles_good_rules() {
        let rules = FormRules::new(vec![spec("form#search", "search", "Find <things> & \"more\"")], true);
        let rules = rules.unwrap_or_else(|error| panic!("{error}"));
        assert!(rules.auto());
        assert_eq!(rules.rules[0].description, "Find &lt;things&gt; &amp; &quot;more&quot;");
    }

    #[test]
    fn names_the_bad_rule_and_problem() {
        let good = spec("form", "ok", "fine");
        let cases = [
            (spec("form[", "x", "d"), "form rule 1: invalid selector \"form[\""),
            (spec("form", "bad name", "d"), "form rule 1: invalid tool name \"bad name\""),
            (spec("form", "x", "  "), "form rule 1: the description is empty"),
        ];
        for (bad, message) in cases {
            let error = FormRules::new(vec![good.clone(), bad], false).err().map(|error| error.to_string());
            assert!(error.as_deref().is_some_and(|text| text.starts_with(message)), "{error:?}");
        }
        let mut with_param = good.clone();
        with_param.params.push(("q".to_owned(), String::new()));
        let error = FormRules::new(vec![with_param], false).err();
        assert_eq!(error, Some(FormRuleError::Param { rule: 0, param: "q".to_owned() }));
    }

    #[test]
    fn form_rules_are_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<FormRules>();
    }
}
