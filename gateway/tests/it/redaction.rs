//! Redaction in a real browser: a page whose numbers are grouped with `&nbsp;` (which
//! `textContent` turns into U+00A0) and hidden behind character references, read by the runtime
//! and sent with a panel turn; the stand-in model receives only placeholders.

use crate::cdp::Browser;
use crate::harness::{self, reply, upstream};
use crate::panel::{open_panel, send_message, turn_ends};
use crate::runtime::until;
use gateway::demo::model::{StandIn, StandInOptions};
use std::sync::Arc;

const PAGE: &str = r#"<!doctype html><html><head><title>Payroll</title></head><body>
<h1>Payroll</h1>
<tool name="lookup_employee" description="Finds an employee record">
  <prop name="query" type="string" required></prop>
</tool>
<context name="employee">Card 4111&nbsp;1111&nbsp;1111&nbsp;1111, IBAN DE89&nbsp;3704&nbsp;0044&nbsp;0532&nbsp;0130&nbsp;00,
SSN 123&nbsp;45&nbsp;6789, phone +49&#160;30&#160;1234567, mail j&#x2e;doe&#64;corp.example</context>
</body></html>"#;

const POLICY: &str = "[[rule]]\nid = \"payroll\"\ntools.allow = [\"lookup_employee\"]\ncontexts.allow = [\"employee\"]\nredact = [\"all\"]\n";

#[tokio::test(flavor = "multi_thread")]
async fn numbers_grouped_with_nbsp_reach_the_model_only_as_placeholders() {
    let app = upstream(|_| reply("text/html; charset=utf-8", PAGE)).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind model");
    let model_address = listener.local_addr().expect("address");
    let stand_in = Arc::new(StandIn::new(StandInOptions::default()));
    let serving = Arc::clone(&stand_in);
    tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
    let llm =
        format!("[llm]\nbase_url = \"http://{model_address}/v1\"\nmodel = \"stand-in\"\nmax_retries = 0\n");
    let (gateway, _policy) =
        harness::gateway_with_policy(&[("payroll.localhost", app.address)], &llm, POLICY).await;
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://payroll.localhost:{}/", gateway.address.port())).await;
    until(&page, "document.querySelector('toolgate-panel') !== null").await;
    // The page itself holds the no-break spaces the recognizers must read through.
    let text =
        until(&page, "document.querySelector('context').textContent.includes('4111\\u00a01111') && 'ok'")
            .await;
    assert_eq!(text, "ok");

    open_panel(&page).await;
    send_message(&page, "What is on this page?").await;
    assert_eq!(turn_ends(&page).await, "done");

    let bodies: Vec<String> = stand_in.bodies().iter().map(|body| without_boundary(body)).collect();
    assert!(!bodies.is_empty(), "the turn reached the model");
    for body in &bodies {
        for original in ["4111", "DE89", "3704", "6789", "1234567", "doe@", "j.doe"] {
            assert!(!body.contains(original), "{original} reached the model: {body}");
        }
    }
    for placeholder in ["[card 1]", "[iban 1]", "[ssn 1]", "[phone 1]", "[email 1]"] {
        assert!(bodies[0].contains(placeholder), "{placeholder} missing: {}", bodies[0]);
    }
    gateway.stop().await;
}

/// `body` without the turn's random boundary (24 hex digits after `<<<`), whose digits may
/// happen to spell one of the numbers looked for.
fn without_boundary(body: &str) -> String {
    let Some(start) = body.find("<<<").map(|at| at + 3) else { return body.to_owned() };
    let boundary: String = body[start..].chars().take_while(char::is_ascii_hexdigit).collect();
    assert_eq!(boundary.len(), 24, "a boundary of 24 hex digits: {body}");
    body.replace(&boundary, "[boundary]")
}
