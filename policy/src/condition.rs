//! CEL conditions (`when = "args.amount > 1000"`): compiled once at load, evaluated per decision.
//!
//! Conditions see four variables: `user` {id, email, groups}, `site` (string), `tool` {name,
//! source, annotations {read_only, consequential, untrusted_content}} and `args` (the call's JSON
//! arguments). A condition that fails to evaluate, or yields a non-bool, is an error the caller
//! turns into a deny: conditions fail closed.

use std::sync::{Arc, LazyLock};

use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, Program, Value};

use crate::ids::SiteId;
use crate::subject::{Subject, ToolRef};

/// The CEL standard environment, built once per process: it is immutable and costly to build
/// (hundreds of overloads), and every policy uses the same one.
pub(crate) fn standard_environment() -> Arc<Env> {
    static STANDARD: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));
    Arc::clone(&STANDARD)
}

/// A compiled condition and the variables it reads.
pub(crate) struct Condition {
    source: String,
    program: Program,
    reads_tool: bool,
    reads_args: bool,
}

impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Condition").field("source", &self.source).finish()
    }
}

impl Condition {
    /// Compiles `source` for `environment`; the error is CEL's parse message.
    pub(crate) fn compile(source: &str, environment: &Env) -> Result<Self, String> {
        let program = environment.compile(source).map_err(|errors| {
            errors
                .errors
                .iter()
                .map(|error| format!("{}:{}: {}", error.pos.0, error.pos.1, error.msg))
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        // `references()` also lists macro-bound names (`x` in `list.all(x, …)`); a binder named
        // `args` or `tool` makes us think the condition reads the variable, which only makes the
        // catalog decision more careful, never less.
        let references = program.references();
        let reads_tool = references.has_variable("tool");
        let reads_args = references.has_variable("args");
        Ok(Self { source: source.to_owned(), program, reads_tool, reads_args })
    }

    /// The condition as written.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// Whether the condition reads `args` (and so can only be decided at call time).
    pub(crate) fn reads_args(&self) -> bool {
        self.reads_args
    }

    /// Whether it depends on nothing but the user and the site (and so can be decided once per view).
    pub(crate) fn reads_only_subject(&self) -> bool {
        !self.reads_tool && !self.reads_args
    }

    /// Evaluates with `bindings`; `Err` carries a message for the deny reason.
    pub(crate) fn evaluate(&self, environment: &Arc<Env>, bindings: &Bindings) -> Result<bool, String> {
        let mut context = Context::with_env(Arc::clone(environment));
        context.set_variable_resolver(bindings);
        match self.program.execute(&context) {
            Ok(Value::Bool(result)) => Ok(result),
            Ok(other) => Err(format!("condition yielded {:?}, not a bool", other.type_of())),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// The values conditions are evaluated over, converted to CEL once per view or decision and
/// shared (`Arc`) between the bindings derived from each other, so evaluating never copies them.
#[derive(Clone, Debug)]
pub(crate) struct Bindings {
    user: Arc<dyn Val>,
    site: Arc<dyn Val>,
    tool: Arc<dyn Val>,
    args: Arc<dyn Val>,
}

impl VariableResolver for Bindings {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        let value = match variable {
            "user" => &self.user,
            "site" => &self.site,
            "tool" => &self.tool,
            "args" => &self.args,
            _ => return None,
        };
        Some(CowVal::Borrowed(value.as_ref()))
    }
}

impl Bindings {
    /// Bindings for `subject` on `site`, with `tool` and `args` null.
    pub(crate) fn new(subject: &Subject, site: &SiteId) -> Result<Self, String> {
        let groups: Vec<Value> = subject.groups.iter().map(|g| Value::from(g.as_str())).collect();
        let user = map([
            ("id", Value::from(subject.user.as_str())),
            ("email", subject.email.as_deref().map_or(Value::Null, Value::from)),
            ("groups", Value::from(groups)),
        ]);
        Ok(Self {
            user: val(user)?,
            site: val(Value::from(site.as_str()))?,
            tool: val(Value::Null)?,
            args: val(Value::Null)?,
        })
    }

    /// These bindings with `tool` set.
    pub(crate) fn with_tool(&self, tool: &ToolRef) -> Result<Self, String> {
        let annotations = map([
            ("read_only", Value::Bool(tool.annotations.read_only)),
            ("consequential", Value::Bool(tool.annotations.consequential)),
            ("untrusted_content", Value::Bool(tool.annotations.untrusted_content)),
        ]);
        let tool = map([
            ("name", Value::from(tool.name.as_str())),
            ("source", Value::from(tool.source.as_str())),
            ("annotations", annotations),
        ]);
        Ok(Self { tool: val(tool)?, ..self.clone() })
    }

    /// These bindings with `args` set; JSON that CEL cannot represent is an error.
    pub(crate) fn with_args(&self, args: &serde_json::Value) -> Result<Self, String> {
        let args =
            cel::to_value(args).map_err(|error| format!("arguments not representable in CEL: {error}"))?;
        Ok(Self { args: val(args)?, ..self.clone() })
    }

    /// These bindings with `args` an empty map (context decisions have no call).
    pub(crate) fn with_empty_args(&self) -> Result<Self, String> {
        Ok(Self { args: val(map([]))?, ..self.clone() })
    }
}

fn val(value: Value) -> Result<Arc<dyn Val>, String> {
    let boxed: Box<dyn Val> = value
        .try_into()
        .map_err(|error: cel::ExecutionError| format!("value not representable in CEL: {error}"))?;
    Ok(Arc::from(boxed))
}

fn map<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let entries: std::collections::HashMap<String, Value> =
        entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    Value::from(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;

    fn environment() -> Arc<Env> {
        Arc::new(Env::stdlib())
    }

    fn subject() -> Subject {
        Subject {
            user: UserId::new("alice"),
            email: Some("alice@example.com".into()),
            groups: vec!["finance".into()],
        }
    }

    #[test]
    fn evaluates_over_user_site_tool_args() {
        let env = environment();
        let bindings = Bindings::new(&subject(), &SiteId::new("hr"))
            .and_then(|b| b.with_tool(&ToolRef::named("submit")))
            .and_then(|b| b.with_args(&serde_json::json!({"amount": 1500, "note": "x"})));
        let bindings = bindings.unwrap_or_else(|e| panic!("{e}"));
        for (source, expected) in [
            ("args.amount > 1000", true),
            ("'finance' in user.groups && site == 'hr'", true),
            ("tool.name.startsWith('sub') && !tool.annotations.read_only", true),
            ("user.email.endsWith('@example.com')", true),
            ("args.amount < 10", false),
        ] {
            let condition = Condition::compile(source, &env).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(condition.evaluate(&env, &bindings), Ok(expected), "{source}");
        }
    }

    #[test]
    fn errors_and_non_bools_are_errors() {
        let env = environment();
        let bindings = Bindings::new(&subject(), &SiteId::new("hr"))
            .and_then(|b| b.with_empty_args())
            .unwrap_or_else(|e| panic!("{e}"));
        for source in ["args.amount > 1000", "1 + 1", "nope == 1"] {
            let condition = Condition::compile(source, &env).unwrap_or_else(|e| panic!("{e}"));
            assert!(condition.evaluate(&env, &bindings).is_err(), "{source}");
        }
        assert!(Condition::compile("args.amount >", &env).is_err());
    }

    #[test]
    fn knows_what_it_reads() {
        let env = environment();
        let compile = |s| Condition::compile(s, &env).unwrap_or_else(|e| panic!("{e}"));
        assert!(compile("args.a > 1").reads_args());
        assert!(compile("'x' in user.groups").reads_only_subject());
        assert!(!compile("tool.name == 'x'").reads_only_subject());
    }
}
