//! A form tool that waits for the user's press, when nobody presses in time: the panel says the
//! form was not sent, the runtime takes the assistant's values out of the form again, and a late
//! press of the button sends nothing the assistant filled in. The panel's final state is what
//! happened.

use crate::cdp::Browser;
use crate::harness::{self, reply, upstream};
use crate::panel::{conversation, open_panel, panel_until, send_message, turn_ends};
use crate::runtime::until;
use gateway::demo::model::StandInOptions;
use serde_json::json;

/// A declarative form tool without `toolautosubmit`: the user must press "Send claim".
const CLAIM_PAGE: &str = r#"<!doctype html><html lang="en"><head><title>Claims</title></head><body>
<form toolname="file_claim" tooldescription="File an expense claim" action="/claims" method="post">
<label>Amount <input name="amount" type="number"></label>
<label>Purpose <input name="purpose" type="text"></label>
<button type="submit">Send claim</button></form></body></html>"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_form_nobody_sent_in_time_is_emptied_and_the_panel_says_not_sent() {
    let app = upstream(|request| {
        if request.method == http::Method::POST {
            reply("text/html; charset=utf-8", "<!doctype html><title>Filed</title><p>filed</p>")
        } else {
            reply("text/html; charset=utf-8", CLAIM_PAGE)
        }
    })
    .await;
    let (_model, llm) = crate::agent_turn::model(StandInOptions::default()).await;
    let extra = format!("{llm}\n[agent]\ntool_timeout = \"2s\"\n");
    let (gateway, _policy) =
        harness::gateway_with_policy(&[("shop.localhost", app.address)], &extra, crate::runtime::POLICY)
            .await;
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://shop.localhost:{}/", gateway.address.port())).await;
    until(&page, "document.querySelector('toolgate-panel') !== null").await;
    open_panel(&page).await;
    send_message(&page, "File a claim: amount 42, purpose \"Train ticket\"").await;

    panel_until(&page, "root.querySelector('[data-status=awaiting_submit]')").await;
    assert_eq!(page.eval("document.querySelector('[name=amount]').value").await, json!("42"));
    assert_eq!(page.eval("document.querySelector('[name=purpose]').value").await, json!("Train ticket"));

    // Nobody presses the button: the call times out (`tool_timeout`, an error) and the turn ends.
    assert_eq!(turn_ends(&page).await, "error", "{:?}", conversation(&page).await);
    let line = panel_until(
        &page,
        "(() => { const line = root.querySelector('[data-tool=file_claim][data-call-id]'); \
         return line && line.dataset.status !== 'awaiting_submit' && [line.dataset.status, line.textContent]; })()",
    )
    .await;
    assert_eq!(line[0], json!("not_sent"), "{line}");
    assert!(line[1].as_str().is_some_and(|text| text.contains("not sent")), "{line}");
    until(&page, "document.querySelector('[name=amount]').value === '' && document.querySelector('[name=purpose]').value === ''")
        .await;

    // A late press sends the form as it is now: nothing the assistant filled in.
    page.navigate_by("document.querySelector('form button').click()").await;
    let posted: Vec<String> = app
        .requests()
        .into_iter()
        .filter(|seen| seen.method == http::Method::POST)
        .map(|seen| String::from_utf8_lossy(&seen.body).into_owned())
        .collect();
    assert_eq!(posted, vec!["amount=&purpose=".to_owned()], "the human's own, empty submission");
}
