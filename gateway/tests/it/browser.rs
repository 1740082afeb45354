//! Real headless Chromium through the gateway: the injected runtime executes on the demo pages
//! and on pages with every kind of Content-Security-Policy, the page's own scripts still run,
//! and Chromium reports zero CSP violations.

use crate::cdp::{STANDARD_FLAGS, chromium_path};
use crate::harness::{self, reply, upstream};
use gateway::app::shutdown::Shutdown;
use std::process::Command;

/// What Chromium saw: the DOM after scripts ran, and its console log.
struct Visit {
    dom: String,
    log: String,
}

fn visit(url: &str) -> Visit {
    let profile = tempfile::tempdir().expect("profile dir");
    let output = Command::new(chromium_path())
        .args(STANDARD_FLAGS)
        .args(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .output()
        .expect("start chromium");
    assert!(output.status.success(), "chromium failed on {url}: {}", String::from_utf8_lossy(&output.stderr));
    Visit {
        dom: String::from_utf8_lossy(&output.stdout).into_owned(),
        log: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn assert_runtime_ran_without_violations(visit: &Visit, page_marker: &str, url: &str) {
    assert!(
        visit.dom.contains("data-toolgate-runtime=\"ready\""),
        "runtime did not run on {url}:\n{}\n{}",
        visit.dom,
        visit.log
    );
    assert!(
        visit.dom.contains(page_marker),
        "the page's own script did not run on {url}:\n{}\n{}",
        visit.dom,
        visit.log
    );
    let violations: Vec<&str> =
        visit.log.lines().filter(|line| line.contains("Content Security Policy")).collect();
    assert!(violations.is_empty(), "CSP violations on {url}: {violations:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn demo_pages_run_the_runtime_with_zero_csp_violations() {
    let demo = gateway::demo::start(0, Some("alice".into()), Shutdown::new()).await.expect("demo starts");
    let pages = [
        ("tasks", "/", "tasks"),
        ("travel", "/", "travel"),
        ("helpdesk", "/", "helpdesk"),
        ("helpdesk", "/queue", "queue"),
        ("expenses", "/", "expenses"),
    ];
    for (app, path, ready) in pages {
        let marker = format!("data-app-ready=\"{ready}\"");
        let url = format!("http://{app}.localhost:{}{path}", demo.port);
        let result = tokio::task::spawn_blocking(move || (visit(&url), url)).await.expect("visit");
        assert_runtime_ran_without_violations(&result.0, &marker, &result.1);
    }
    demo.gateway.stop().await;
}

/// Response headers of a fixture page.
type Headers = &'static [(&'static str, &'static str)];

/// Pages whose own inline script is allowed by their policy; the gateway must keep it so.
const VARIANTS: [(&str, Headers, &str); 8] = [
    (
        "self",
        &[("content-security-policy", "script-src 'self'")],
        "<html><head><script src=\"/page.js\"></script></head><body></body></html>",
    ),
    (
        "nonce",
        &[("content-security-policy", "script-src 'nonce-r4nd0m'")],
        "<html><head></head><body><script nonce=\"r4nd0m\">MARK</script></body></html>",
    ),
    (
        "strict-dynamic",
        &[(
            "content-security-policy",
            "script-src 'nonce-r4nd0m' 'strict-dynamic'; object-src 'none'; base-uri 'none'",
        )],
        "<html><head></head><body><script nonce=\"r4nd0m\">MARK</script></body></html>",
    ),
    (
        "unsafe-inline",
        &[("content-security-policy", "script-src 'unsafe-inline'")],
        "<html><head></head><body><script>MARK</script></body></html>",
    ),
    (
        "two-headers",
        &[
            ("content-security-policy", "script-src 'nonce-r4nd0m' 'unsafe-inline'"),
            ("content-security-policy", "default-src 'self' 'unsafe-inline'"),
        ],
        "<html><head></head><body><script nonce=\"r4nd0m\">MARK</script></body></html>",
    ),
    (
        // Nothing allowed by default: the runtime's own calls to the agent API must still work.
        "default-none",
        &[("content-security-policy", "default-src 'none'; script-src 'nonce-r4nd0m'")],
        "<html><head></head><body><script nonce=\"r4nd0m\">MARK</script></body></html>",
    ),
    (
        "connect-none",
        &[("content-security-policy", "connect-src 'none'; script-src 'self' 'nonce-r4nd0m'")],
        "<html><head></head><body><script nonce=\"r4nd0m\">MARK</script></body></html>",
    ),
    (
        "meta",
        &[],
        "<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'nonce-m3ta'\"></head><body><script nonce=\"m3ta\">MARK</script></body></html>",
    ),
];

#[tokio::test(flavor = "multi_thread")]
async fn every_csp_variant_admits_the_runtime_and_keeps_page_scripts_working() {
    let mark = "document.documentElement.setAttribute('data-page-script','ran')";
    let app = upstream(move |seen| {
        let path = seen.uri.path().trim_start_matches('/');
        if path == "page.js" {
            return reply("text/javascript", mark);
        }
        let Some((_, headers, page)) = VARIANTS.iter().find(|(name, _, _)| *name == path) else {
            return reply("text/plain", "no such variant");
        };
        let mut response = reply("text/html; charset=utf-8", page.replace("MARK", mark));
        for (name, value) in *headers {
            response.headers_mut().append(*name, value.parse().expect("header"));
        }
        response
    })
    .await;
    let gateway = harness::gateway(&[("csp.localhost", app.address)], "").await;
    let port = gateway.address.port();
    for (name, _, _) in VARIANTS {
        let url = format!("http://csp.localhost:{port}/{name}");
        let result = tokio::task::spawn_blocking(move || (visit(&url), url)).await.expect("visit");
        assert_runtime_ran_without_violations(&result.0, "data-page-script=\"ran\"", &result.1);
    }
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn devtools_client_sees_the_runtime_run_without_errors() {
    let app =
        upstream(|_| reply("text/html", "<html><head><title>t</title></head><body>hi</body></html>")).await;
    let gateway = harness::gateway(&[("devtools.localhost", app.address)], "").await;
    let browser = crate::cdp::Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://devtools.localhost:{}/", gateway.address.port())).await;
    let marker = page.eval("document.documentElement.getAttribute('data-toolgate-runtime')").await;
    assert_eq!(marker, "ready");
    assert_eq!(page.eval("Promise.resolve(6 * 7)").await, 42);
    assert!(page.console_errors().is_empty(), "{:?}", page.console_errors());
    gateway.stop().await;
}
