//! Content-Security-Policy handling through the gateway: the injected runtime is allowed by
//! every policy the page carries (headers, Report-Only, `<meta>`), without loosening anything
//! the page relies on. The browser test checks the same in a real Chromium.

use crate::harness::{self, injected_nonce, navigate, reply, send, upstream};

async fn policies_after_gateway(
    policies: &'static [(&'static str, &'static str)],
    page: &'static str,
) -> (Vec<(String, String)>, String) {
    let app = upstream(move |_| {
        let mut response = reply("text/html", page);
        for (name, value) in policies {
            response.headers_mut().append(*name, value.parse().expect("policy"));
        }
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    // The browser's Host carries a port: the script URL added to policies must keep it.
    let answer = send(gateway.address, navigate("app.test:8443", "/")).await;
    gateway.stop().await;
    let headers = answer
        .headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("content-security-policy"))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or_default().to_owned()))
        .collect();
    (headers, answer.text())
}

const PAGE: &str = "<html><head><title>p</title></head><body></body></html>";

#[tokio::test]
async fn no_policy_needs_no_change() {
    let (headers, page) = policies_after_gateway(&[], PAGE).await;
    assert!(headers.is_empty());
    assert!(injected_nonce(&page).is_some());
}

#[tokio::test]
async fn self_policy_is_left_alone() {
    let (headers, _) =
        policies_after_gateway(&[("content-security-policy", "script-src 'self'; object-src 'none'")], PAGE)
            .await;
    assert_eq!(
        headers,
        vec![("content-security-policy".into(), "script-src 'self'; object-src 'none'".into())]
    );
}

#[tokio::test]
async fn page_nonce_is_reused() {
    let (headers, page) =
        policies_after_gateway(&[("content-security-policy", "script-src 'nonce-PageNonce123'")], PAGE).await;
    assert_eq!(injected_nonce(&page).as_deref(), Some("PageNonce123"));
    assert_eq!(headers[0].1, "script-src 'nonce-PageNonce123'", "policy unchanged");
}

#[tokio::test]
async fn strict_dynamic_with_hashes_gets_our_nonce() {
    const POLICY: &str = "script-src 'strict-dynamic' 'sha256-abc=' 'self'";
    let (headers, page) = policies_after_gateway(&[("content-security-policy", POLICY)], PAGE).await;
    let nonce = injected_nonce(&page).expect("tag has a nonce");
    assert!(headers[0].1.contains(&format!("'nonce-{nonce}'")), "{headers:?}");
    assert!(headers[0].1.contains("'strict-dynamic'") && headers[0].1.contains("'sha256-abc='"));
}

#[tokio::test]
async fn two_policies_with_different_nonces_both_admit_the_script() {
    let (headers, page) = policies_after_gateway(
        &[
            ("content-security-policy", "script-src 'nonce-AAA'"),
            ("content-security-policy", "default-src 'nonce-BBB'"),
        ],
        PAGE,
    )
    .await;
    let nonce = injected_nonce(&page).expect("nonce");
    assert_eq!(headers.len(), 2);
    for (_, policy) in &headers {
        assert!(policy.contains(&format!("'nonce-{nonce}'")), "{policy}");
    }
    assert!(headers[0].1.contains("'nonce-AAA'") && headers[1].1.contains("'nonce-BBB'"), "page nonces kept");
}

#[tokio::test]
async fn unsafe_inline_pages_keep_working() {
    // Adding a nonce would disable 'unsafe-inline'; the exact script URL is added instead.
    let (headers, _) =
        policies_after_gateway(&[("content-security-policy", "script-src 'unsafe-inline'")], PAGE).await;
    let runtime = injector::runtime_asset();
    let policy = &headers[0].1;
    assert!(!policy.contains("'nonce-"), "{policy}");
    assert!(policy.contains(&format!("http://app.test:8443{}", runtime.path)), "{policy}");
}

#[tokio::test]
async fn report_only_policies_are_adjusted_too() {
    let (headers, page) = policies_after_gateway(
        &[("content-security-policy-report-only", "script-src 'none'; report-uri /r")],
        PAGE,
    )
    .await;
    let nonce = injected_nonce(&page).expect("nonce");
    assert_eq!(headers[0].0, "content-security-policy-report-only");
    assert!(
        headers[0].1.contains(&format!("'nonce-{nonce}'")) && !headers[0].1.contains("'none'"),
        "{headers:?}"
    );
}

#[tokio::test]
async fn meta_policies_are_adjusted() {
    let page = "<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'nonce-M1'\"></head><body></body></html>";
    let (_, rewritten) = policies_after_gateway(&[], page).await;
    let nonce = injected_nonce(&rewritten).expect("nonce");
    assert!(rewritten.contains(&format!("'nonce-{nonce}'")), "{rewritten}");
}

/// A page its CSP sandboxes into an opaque origin (Jupyter serves users' HTML files so) cannot
/// load the runtime: it gets no script and no CSP change, its page tools are off, it is still
/// filtered (tool markup hidden in a comment is removed as on any page), and the inventory notes it.
#[tokio::test]
async fn a_sandboxed_page_is_filtered_without_the_runtime() {
    const SANDBOXED: &str =
        "<html><head><title>p</title></head><body><!-- <tool name=\"hidden\"></tool> -->ok</body></html>";
    let app = upstream(|_| {
        let mut response = reply("text/html", SANDBOXED);
        response
            .headers_mut()
            .insert("content-security-policy", "sandbox allow-scripts".parse().expect("csp"));
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, navigate("app.test", "/files/report.html")).await;
    // The inventory says so: the site's sandboxed pages and the latest paths.
    let mut noted = serde_json::Value::Null;
    for _ in 0..50 {
        let inventory = send(gateway.admin_address, harness::get("admin", "/inventory")).await;
        noted = serde_json::from_slice::<serde_json::Value>(&inventory.body).expect("json")["sandboxed_pages"]["site0"].clone();
        if !noted.is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(noted["recent"], serde_json::json!(["/files/report.html"]), "{noted}");
    assert_eq!(noted["count"], 1);
    gateway.stop().await;
    let page = answer.text();
    assert!(injected_nonce(&page).is_none() && !page.contains("<script"), "no runtime: {page}");
    assert!(!page.contains("hidden") && page.contains("ok"), "still filtered: {page}");
    assert_eq!(answer.header("content-security-policy"), Some("sandbox allow-scripts"));
    assert_eq!(answer.header("permissions-policy"), Some("tools=()"));

    // With `allow-same-origin` the origin is the site's: the runtime goes in as usual.
    let (_, page) = policies_after_gateway(
        &[("content-security-policy", "sandbox allow-scripts allow-same-origin")],
        PAGE,
    )
    .await;
    assert!(injected_nonce(&page).is_some());
}
