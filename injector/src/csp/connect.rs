//! Letting the runtime reach the gateway's agent API (`fetch` to `/.toolgate/agent/` on the
//! page's own origin) under the page's CSP.
//!
//! The directive that governs `fetch` is `connect-src`, else `default-src`. When it does not
//! already admit the agent URL, the exact URL prefix is added: to `connect-src` itself (taking
//! the place of `'none'`), or, when only `default-src` restricts connections, as a new
//! `connect-src` that copies `default-src`'s location sources, so nothing but connections to the
//! agent API is widened.

use super::Edit;
use super::location::ScriptLocation;
use super::policy::Policy;
use super::source::Source;

/// The agent API prefix on the origin of `script_url` (the runtime's URL), e.g.
/// `https://tasks.corp.example/.toolgate/agent/`.
pub(super) fn agent_url(script_url: &str) -> Option<String> {
    let (origin, _) = script_url.split_once("/.toolgate/")?;
    Some(format!("{origin}/.toolgate/agent/"))
}

/// The edits that let `policy` admit connections to `agent_url`; `None` when it already does.
pub(super) fn edits(
    policy: &Policy<'_>,
    agent_url: &str,
    agent: Option<&ScriptLocation>,
) -> Option<Vec<Edit>> {
    let (directive, own) = match policy.directive("connect-src") {
        Some(directive) => (directive, true),
        None => (policy.directive("default-src")?, false),
    };
    let sources = directive.sources();
    if sources.iter().any(|source| source.admits_location(agent)) {
        return None;
    }
    if !own {
        let kept: Vec<&str> = directive
            .tokens()
            .iter()
            // Only what means something for connections; nonces, hashes and script keywords do not.
            .filter(|token| matches!(Source::classify(token.text), Source::SelfOrigin | Source::Location(_)))
            .map(|token| token.text)
            .collect();
        let mut sources = kept.join(" ");
        if !sources.is_empty() {
            sources.push(' ');
        }
        let offset = policy.end();
        let replacement = format!("; connect-src {sources}{agent_url}");
        return Some(vec![Edit { start: offset, end: offset, replacement }]);
    }
    let nones: Vec<_> =
        directive.tokens().iter().filter(|token| Source::classify(token.text) == Source::None).collect();
    let Some((first, others)) = nones.split_first() else {
        let offset = directive.append_offset();
        return Some(vec![Edit { start: offset, end: offset, replacement: format!(" {agent_url}") }]);
    };
    let mut edits = vec![Edit {
        start: first.start,
        end: first.start + first.text.len(),
        replacement: agent_url.to_owned(),
    }];
    edits.extend(others.iter().map(|token| Edit {
        start: token.start,
        end: token.start + token.text.len(),
        replacement: String::new(),
    }));
    Some(edits)
}
