//! Content-Security-Policy planning: make the page's policies admit the runtime script.
//!
//! The gateway injects one external `<script>`; the page's CSP (headers and `<meta>`) may block
//! it. This module decides which nonce the script carries and rewrites each policy minimally so
//! the script is allowed while everything else the site restricts stays restricted. Pure string
//! work: no HTTP types, no randomness (the caller brings a fresh nonce).

mod connect;
mod location;
mod policy;
mod source;

use location::ScriptLocation;
use policy::{Policy, parse_policies};
use source::{Source, is_valid_nonce};

/// One `Content-Security-Policy` or `Content-Security-Policy-Report-Only` response header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CspHeader {
    /// `true` for `Content-Security-Policy-Report-Only`.
    pub report_only: bool,
    /// The header value: one or more comma-separated policies.
    pub value: String,
}

/// What the gateway does about CSP for one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CspPlan {
    /// The nonce to put on the injected `<script>`: the page's own nonce when every policy that
    /// needs one shares it, otherwise the caller's fresh nonce.
    pub nonce: String,
    /// The CSP headers to send instead of the upstream's, in the same order.
    pub headers: Vec<CspHeader>,
}

/// Plans CSP for one response.
///
/// `fresh_nonce` is a random base64 value the gateway generated for this response; `script_url`
/// is the absolute URL of the runtime script (e.g.
/// `https://tasks.corp.example/.toolgate/runtime.0123456789abcdef.js`).
///
/// For each policy, the effective directive for a script element is `script-src-elem`, else
/// `script-src`, else `default-src`; a policy with none of them is left alone. The script is
/// already allowed when that directive carries the chosen nonce, or has no `'strict-dynamic'` and
/// admits the script's location (`'self'`, `*`, a matching scheme or host source). Otherwise the
/// directive gets the exact `script_url` when it relies on `'unsafe-inline'` (no nonce, hash or
/// `'strict-dynamic'`: adding a nonce would switch the page's inline scripts off), and
/// `'nonce-…'` in every other case; a `'none'` source is replaced rather than joined. Report-Only
/// headers get the same treatment so they do not report our script. All other bytes are kept.
///
/// A value that could break out of its place (a nonce outside the base64 grammar, a URL with
/// whitespace, `;`, `,` or quotes) is never written into a policy; the policy then stays as it
/// was and the browser blocks the script, which fails safe.
pub fn plan_csp(headers: &[CspHeader], fresh_nonce: &str, script_url: &str) -> CspPlan {
    let script = ScriptLocation::parse(script_url);
    let parsed: Vec<Vec<Policy<'_>>> = headers.iter().map(|header| parse_policies(&header.value)).collect();
    let needing_more =
        parsed.iter().flatten().filter(|policy| needs_more_than_location(policy, script.as_ref()));
    let nonce = common_nonce(needing_more).unwrap_or(fresh_nonce).to_owned();

    let headers = headers
        .iter()
        .zip(&parsed)
        .map(|(header, policies)| CspHeader {
            report_only: header.report_only,
            value: rewrite(&header.value, policies, &nonce, script_url, script.as_ref()),
        })
        .collect();
    CspPlan { nonce, headers }
}

/// Rewrites one serialized policy (the `content` of a `<meta http-equiv=Content-Security-Policy>`)
/// so that a script with `nonce` at `script_url` is allowed, by the same rules as [`plan_csp`].
pub fn allow_in_policy(policy_value: &str, nonce: &str, script_url: &str) -> String {
    let script = ScriptLocation::parse(script_url);
    let policies = parse_policies(policy_value);
    rewrite(policy_value, &policies, nonce, script_url, script.as_ref())
}

/// Whether an enforced policy in `headers` sandboxes the page into an opaque origin: a `sandbox`
/// directive without `allow-same-origin` (CSP3 §6.3.2; report-only policies sandbox nothing). In
/// such a page a script with an `integrity` value cannot load from the site (the request is not
/// CORS-enabled), so the gateway filters the page without placing the runtime.
pub fn sandboxes_origin(headers: &[CspHeader]) -> bool {
    headers.iter().filter(|header| !header.report_only).any(|header| {
        parse_policies(&header.value).iter().any(|policy| {
            policy.directive("sandbox").is_some_and(|sandbox| {
                !sandbox.tokens().iter().any(|token| token.text.eq_ignore_ascii_case("allow-same-origin"))
            })
        })
    })
}

/// Whether the policy restricts scripts and its location sources alone do not admit ours.
fn needs_more_than_location(policy: &Policy<'_>, script: Option<&ScriptLocation>) -> bool {
    policy.script_directive().is_some_and(|directive| !admits_by_location(&directive.sources(), script))
}

fn admits_by_location(sources: &[Source<'_>], script: Option<&ScriptLocation>) -> bool {
    // 'strict-dynamic' makes browsers ignore 'self' and every host or scheme source.
    !sources.contains(&Source::StrictDynamic) && sources.iter().any(|source| source.admits_location(script))
}

/// The first nonce that every given policy carries, if there is one and at least one policy.
fn common_nonce<'policy, 'text: 'policy>(
    mut policies: impl Iterator<Item = &'policy Policy<'text>>,
) -> Option<&'text str> {
    let first = policies.next()?;
    let mut candidates = nonces(first);
    for policy in policies {
        let present = nonces(policy);
        candidates.retain(|candidate| present.contains(candidate));
    }
    candidates.first().copied()
}

fn nonces<'text>(policy: &Policy<'text>) -> Vec<&'text str> {
    policy
        .script_directive()
        .map(|directive| {
            directive
                .sources()
                .into_iter()
                .filter_map(|source| match source {
                    Source::Nonce(value) => Some(value),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A byte-range replacement in the serialized value.
#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    replacement: String,
}

fn rewrite(
    value: &str,
    policies: &[Policy<'_>],
    nonce: &str,
    script_url: &str,
    script: Option<&ScriptLocation>,
) -> String {
    let agent_url = connect::agent_url(script_url).filter(|url| is_safe_source_text(url));
    let agent = agent_url.as_deref().and_then(ScriptLocation::parse);
    let mut edits: Vec<Edit> = Vec::new();
    for policy in policies {
        edits.extend(edit_for(policy, nonce, script_url, script).into_iter().flatten());
        if let Some(agent_url) = &agent_url {
            edits.extend(connect::edits(policy, agent_url, agent.as_ref()).into_iter().flatten());
        }
    }
    // Script and connect edits touch different directives; apply them in text order.
    edits.sort_by_key(|edit| edit.start);
    apply(value, &edits)
}

/// The edits that make one policy admit the script; `None` when it already does or cannot.
fn edit_for(
    policy: &Policy<'_>,
    nonce: &str,
    script_url: &str,
    script: Option<&ScriptLocation>,
) -> Option<Vec<Edit>> {
    let directive = policy.script_directive()?;
    let sources = directive.sources();
    if admits_by_location(&sources, script) || sources.contains(&Source::Nonce(nonce)) {
        return None;
    }

    let has_nonce_or_hash = sources.iter().any(|source| matches!(source, Source::Nonce(_) | Source::Hash));
    let relies_on_unsafe_inline = !has_nonce_or_hash
        && !sources.contains(&Source::StrictDynamic)
        && sources.contains(&Source::UnsafeInline);
    let added = if relies_on_unsafe_inline {
        // A nonce would make the browser ignore 'unsafe-inline' and break the page's own inline
        // scripts, so allow exactly our URL instead.
        script.filter(|_| is_safe_source_text(script_url))?;
        script_url.to_owned()
    } else {
        if !is_valid_nonce(nonce) {
            return None;
        }
        format!("'nonce-{nonce}'")
    };

    let none_tokens: Vec<_> =
        directive.tokens().iter().filter(|token| Source::classify(token.text) == Source::None).collect();
    let Some((first_none, other_nones)) = none_tokens.split_first() else {
        let offset = directive.append_offset();
        return Some(vec![Edit { start: offset, end: offset, replacement: format!(" {added}") }]);
    };
    // 'none' combined with any other source makes the whole list invalid, so the added source
    // takes the place of the (first) 'none' and any repeats are dropped.
    let mut edits = vec![Edit {
        start: first_none.start,
        end: first_none.start + first_none.text.len(),
        replacement: added,
    }];
    edits.extend(other_nones.iter().map(|token| Edit {
        start: token.start,
        end: token.start + token.text.len(),
        replacement: String::new(),
    }));
    Some(edits)
}

/// A URL may only become a source if it stays one token and cannot end the directive or policy.
fn is_safe_source_text(url: &str) -> bool {
    !url.is_empty() && url.bytes().all(|byte| byte.is_ascii_graphic() && !matches!(byte, b';' | b',' | b'\''))
}

/// Applies non-overlapping edits (in ascending order, as produced by the parser) to `value`.
fn apply(value: &str, edits: &[Edit]) -> String {
    let added: usize = edits.iter().map(|edit| edit.replacement.len()).sum();
    let mut rewritten = String::with_capacity(value.len() + added);
    let mut copied_up_to = 0;
    for edit in edits {
        rewritten.push_str(&value[copied_up_to..edit.start]);
        rewritten.push_str(&edit.replacement);
        copied_up_to = edit.end;
    }
    rewritten.push_str(&value[copied_up_to..]);
    rewritten
}

#[cfg(test)]
mod tests;
