//! Unit tests for CSP planning: one case per rule of [`super::plan_csp`]'s contract.

use super::*;

const URL: &str = "https://tasks.corp.example/.toolgate/runtime.0123456789abcdef.js";
const FRESH: &str = "RnJlc2hOb25jZQ==";

fn header(value: &str) -> CspHeader {
    CspHeader { report_only: false, value: value.to_owned() }
}

fn report_only(value: &str) -> CspHeader {
    CspHeader { report_only: true, value: value.to_owned() }
}

fn values(plan: &CspPlan) -> Vec<&str> {
    plan.headers.iter().map(|header| header.value.as_str()).collect()
}

#[test]
fn no_headers_uses_the_fresh_nonce() {
    let plan = plan_csp(&[], FRESH, URL);
    assert_eq!(plan.nonce, FRESH);
    assert!(plan.headers.is_empty());
}

#[test]
fn policy_without_script_directives_is_untouched() {
    let input = [header("img-src 'none'; frame-ancestors 'self'")];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.headers, input);
    assert_eq!(plan.nonce, FRESH);
}

#[test]
fn self_allows_the_script() {
    let input = [header(
        "default-src 'none'; script-src 'SELF' https://cdn.example; connect-src https://tasks.corp.example/.toolgate/agent/",
    )];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.headers, input);
    assert_eq!(plan.nonce, FRESH);
}

#[test]
fn matching_host_or_scheme_allows_the_script() {
    for value in [
        "script-src https://tasks.corp.example",
        "script-src *.corp.example",
        "script-src https:",
        "script-src *",
    ] {
        let input = [header(value)];
        assert_eq!(plan_csp(&input, FRESH, URL).headers, input, "{value}");
    }
}

#[test]
fn page_nonce_is_reused_and_policy_untouched() {
    let input = [header("script-src 'nonce-PageNonce123' 'unsafe-inline'; object-src 'none'")];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.nonce, "PageNonce123");
    assert_eq!(plan.headers, input);
}

#[test]
fn strict_dynamic_with_nonce_reuses_the_nonce() {
    let input = [header("script-src 'strict-dynamic' 'nonce-abc' 'self' https: 'unsafe-inline'")];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.nonce, "abc");
    assert_eq!(plan.headers, input);
}

#[test]
fn strict_dynamic_with_hash_only_gets_a_fresh_nonce() {
    let plan =
        plan_csp(&[header("script-src 'strict-dynamic' 'sha256-AAAA' 'self'; base-uri 'none'")], FRESH, URL);
    assert_eq!(plan.nonce, FRESH);
    assert_eq!(
        values(&plan),
        ["script-src 'strict-dynamic' 'sha256-AAAA' 'self' 'nonce-RnJlc2hOb25jZQ=='; base-uri 'none'"]
    );
}

#[test]
fn two_headers_with_different_nonces_both_get_the_fresh_nonce() {
    let plan = plan_csp(&[header("script-src 'nonce-one'"), header("script-src 'nonce-two'")], FRESH, URL);
    assert_eq!(plan.nonce, FRESH);
    assert_eq!(
        values(&plan),
        [
            "script-src 'nonce-one' 'nonce-RnJlc2hOb25jZQ=='",
            "script-src 'nonce-two' 'nonce-RnJlc2hOb25jZQ=='",
        ]
    );
}

#[test]
fn shared_nonce_across_headers_is_reused() {
    let input = [
        header("script-src 'nonce-shared' 'nonce-one'"),
        header(
            "default-src 'nonce-two' 'nonce-shared'; connect-src https://tasks.corp.example/.toolgate/agent/",
        ),
    ];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.nonce, "shared");
    assert_eq!(plan.headers, input);
}

#[test]
fn policy_allowing_by_self_does_not_block_nonce_reuse() {
    let input = [header("script-src 'self'"), header("script-src 'nonce-page'")];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.nonce, "page");
    assert_eq!(plan.headers, input);
}

#[test]
fn default_src_only_gets_the_nonce() {
    let plan = plan_csp(&[header("default-src https://cdn.example; img-src *")], FRESH, URL);
    assert_eq!(
        values(&plan),
        [
            "default-src https://cdn.example 'nonce-RnJlc2hOb25jZQ=='; img-src *; connect-src https://cdn.example https://tasks.corp.example/.toolgate/agent/"
        ]
    );
}

#[test]
fn none_is_replaced_not_joined() {
    let plan = plan_csp(&[header("script-src 'none'; style-src 'self'")], FRESH, URL);
    assert_eq!(values(&plan), ["script-src 'nonce-RnJlc2hOb25jZQ=='; style-src 'self'"]);

    let plan = plan_csp(&[header("default-src 'NONE' 'none'")], FRESH, URL);
    assert_eq!(
        values(&plan),
        ["default-src 'nonce-RnJlc2hOb25jZQ==' ; connect-src https://tasks.corp.example/.toolgate/agent/"]
    );
}

#[test]
fn unsafe_inline_only_gets_the_script_url() {
    let plan =
        plan_csp(&[header("script-src 'unsafe-inline' https://cdn.example; object-src 'none'")], FRESH, URL);
    assert_eq!(plan.nonce, FRESH);
    assert_eq!(
        values(&plan),
        [format!("script-src 'unsafe-inline' https://cdn.example {URL}; object-src 'none'")]
    );
}

#[test]
fn unsafe_inline_with_a_hash_gets_a_nonce() {
    // The hash already disables 'unsafe-inline', so a nonce costs the page nothing.
    let plan = plan_csp(&[header("script-src 'unsafe-inline' 'sha256-AAAA'")], FRESH, URL);
    assert_eq!(values(&plan), ["script-src 'unsafe-inline' 'sha256-AAAA' 'nonce-RnJlc2hOb25jZQ=='"]);
}

#[test]
fn report_only_gets_the_same_treatment() {
    let plan = plan_csp(&[header("script-src 'self'"), report_only("script-src 'none'")], FRESH, URL);
    assert_eq!(
        plan.headers,
        [header("script-src 'self'"), report_only("script-src 'nonce-RnJlc2hOb25jZQ=='"),]
    );
}

#[test]
fn several_policies_in_one_header_are_handled_separately() {
    let plan = plan_csp(
        &[header("script-src 'self', script-src 'nonce-x' 'strict-dynamic', img-src *")],
        FRESH,
        URL,
    );
    // Only the second policy needs a nonce, and it has one: reuse it.
    assert_eq!(plan.nonce, "x");
    assert_eq!(values(&plan), ["script-src 'self', script-src 'nonce-x' 'strict-dynamic', img-src *"]);

    let plan = plan_csp(&[header("script-src 'unsafe-inline',default-src 'none' ; img-src *")], FRESH, URL);
    assert_eq!(
        values(&plan),
        [format!(
            "script-src 'unsafe-inline' {URL},default-src 'nonce-RnJlc2hOb25jZQ==' ; img-src *; \
             connect-src https://tasks.corp.example/.toolgate/agent/"
        )]
    );
}

#[test]
fn case_variations_are_recognized() {
    let input = [header(
        "SCRIPT-SRC 'Nonce-AbC' 'STRICT-DYNAMIC'; Default-Src 'None'; connect-src https://tasks.corp.example/.toolgate/agent/",
    )];
    let plan = plan_csp(&input, FRESH, URL);
    assert_eq!(plan.nonce, "AbC");
    assert_eq!(plan.headers, input);

    let plan = plan_csp(&[header("Script-Src-Elem 'UNSAFE-INLINE'")], FRESH, URL);
    assert_eq!(values(&plan), [format!("Script-Src-Elem 'UNSAFE-INLINE' {URL}")]);
}

#[test]
fn script_src_elem_takes_precedence() {
    let plan = plan_csp(&[header("script-src 'self'; script-src-elem https://cdn.example")], FRESH, URL);
    assert_eq!(
        values(&plan),
        ["script-src 'self'; script-src-elem https://cdn.example 'nonce-RnJlc2hOb25jZQ=='"]
    );
}

#[test]
fn empty_directive_gets_the_source_after_its_name() {
    let plan = plan_csp(&[header("script-src; img-src *")], FRESH, URL);
    assert_eq!(values(&plan), ["script-src 'nonce-RnJlc2hOb25jZQ=='; img-src *"]);
}

#[test]
fn unsafe_values_are_never_written() {
    let input = [header("script-src 'none'")];
    assert_eq!(plan_csp(&input, "bad nonce; script-src *", URL).headers, input);

    let input = [header("script-src 'unsafe-inline'")];
    let plan = plan_csp(&input, FRESH, "https://tasks.corp.example/x.js; script-src *");
    assert_eq!(plan.headers, input);
}

#[test]
fn allow_in_policy_uses_the_given_nonce() {
    assert_eq!(allow_in_policy("script-src 'nonce-page'", "page", URL), "script-src 'nonce-page'");
    assert_eq!(
        allow_in_policy("script-src 'nonce-other'", "ours", URL),
        "script-src 'nonce-other' 'nonce-ours'"
    );
    assert_eq!(
        allow_in_policy("script-src 'unsafe-inline'", "ours", URL),
        format!("script-src 'unsafe-inline' {URL}")
    );
    assert_eq!(allow_in_policy("img-src 'none'", "ours", URL), "img-src 'none'");
}

#[test]
fn the_agent_api_is_reachable_under_connect_restrictions() {
    let agent = "https://tasks.corp.example/.toolgate/agent/";
    // connect-src that already admits the origin, or no restriction at all: untouched.
    for untouched in ["connect-src 'self'", "connect-src https:", "script-src 'self'", "img-src *"] {
        assert_eq!(values(&plan_csp(&[header(untouched)], FRESH, URL)), [untouched]);
    }
    let plan = plan_csp(&[header("connect-src https://api.example")], FRESH, URL);
    assert_eq!(values(&plan), [format!("connect-src https://api.example {agent}")]);
    let plan = plan_csp(&[header("connect-src 'none' 'none'; script-src 'self'")], FRESH, URL);
    assert_eq!(values(&plan), [format!("connect-src {agent} ; script-src 'self'")]);
    let plan = plan_csp(&[report_only("default-src 'self' https://cdn.example 'unsafe-eval'")], FRESH, URL);
    assert_eq!(
        values(&plan),
        ["default-src 'self' https://cdn.example 'unsafe-eval'"],
        "'self' already admits the agent API"
    );
    // Only default-src restricts connections: a new connect-src with its location sources.
    let plan = plan_csp(&[header("default-src https://cdn.example 'nonce-abc'")], FRESH, URL);
    assert_eq!(
        values(&plan),
        [format!("default-src https://cdn.example 'nonce-abc'; connect-src https://cdn.example {agent}")]
    );
    // The same for a <meta> policy.
    assert_eq!(allow_in_policy("connect-src 'none'", FRESH, URL), format!("connect-src {agent}"));
}

#[test]
fn sandbox_without_same_origin_is_an_opaque_origin() {
    let enforced = |value: &str| CspHeader { report_only: false, value: value.to_owned() };
    assert!(sandboxes_origin(&[enforced("sandbox")]));
    assert!(sandboxes_origin(&[enforced("default-src 'self'; SANDBOX allow-scripts allow-forms")]));
    assert!(sandboxes_origin(&[enforced("script-src 'self'"), enforced("img-src *, sandbox allow-scripts")]));
    assert!(!sandboxes_origin(&[enforced("sandbox allow-scripts allow-same-origin")]));
    assert!(!sandboxes_origin(&[enforced("script-src 'self'; frame-src 'none'")]));
    assert!(!sandboxes_origin(&[CspHeader { report_only: true, value: "sandbox".to_owned() }]));
    assert!(!sandboxes_origin(&[]));
}
