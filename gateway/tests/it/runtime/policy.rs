//! Policy-denied entries, page tools off, and a gateway that does not answer: nothing leaks.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn policy_denied_tools_and_contexts_stay_hidden_and_uncallable() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/webmcp").await;
    let denied = "rule no-secrets denies \"secret_*\"";
    assert!(!names(&page.eval("__toolgate__.catalog().tools").await).contains(&"secret_export".to_owned()));
    assert_eq!(
        page.eval("__toolgate__.hidden()").await,
        json!([{"kind": "tool", "name": "secret_export", "reason": denied}])
    );
    let refused = page.eval("__toolgate__.call('secret_export', {})").await;
    assert_eq!(refused["error"]["code"], "hidden_by_policy", "{refused}");
    let via_execute = page.eval("document.modelContext.executeTool('secret_export', {}).then(() => 'ran', (error) => error.message)").await;
    assert!(via_execute.as_str().unwrap_or_default().starts_with("hidden_by_policy"), "{via_execute}");

    // Tools and contexts added after load go through the same round trip.
    page.eval("document.body.insertAdjacentHTML('beforeend', '<tool name=\"secret_voix\" description=\"x\"></tool><tool name=\"open_voix\" description=\"y\"></tool><context name=\"secret_notes\">salaries</context><context name=\"notes\">hello</context>'); true").await;
    until(&page, "__toolgate__.catalog().tools.some((tool) => tool.name === 'open_voix')").await;
    assert_eq!(
        page.eval("__toolgate__.catalog().contexts").await,
        json!([{"name": "notes", "text": "hello", "source": "voix"}])
    );
    let hidden = page.eval("__toolgate__.hidden().map((entry) => entry.kind + ':' + entry.name)").await;
    assert_eq!(hidden, json!(["tool:secret_voix", "tool:secret_export", "context:secret_notes"]));
    assert_eq!(page.eval("__toolgate__.call('secret_voix', {})").await["error"]["code"], "hidden_by_policy");
    assert_eq!(page.eval("seen.calls.secret_export").await, ABSENT);
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_page_tools_off_nothing_is_visible() {
    let shop = shop_with("page_tools = false\n").await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/webmcp").await;
    // The proxy already removed the page's own tools from the HTML; what scripts add later is
    // hidden by the runtime.
    page.eval("document.body.insertAdjacentHTML('beforeend', '<tool name=\"late\" description=\"Added later\"></tool><context name=\"notes\">n</context>'); true").await;
    until(&page, "__toolgate__.hidden().some((entry) => entry.name === 'late')").await;
    assert_eq!(page.eval("__toolgate__.catalog()").await, json!({"tools": [], "contexts": []}));
    let reasons = page.eval("[...new Set(__toolgate__.hidden().map((entry) => entry.reason))]").await;
    assert_eq!(reasons, json!(["page_tools_off"]));
    assert_eq!(page.eval("__toolgate__.session().page_tools").await, json!(false));
    assert_eq!(page.eval("__toolgate__.call('late', {})").await["error"]["code"], "hidden_by_policy");
    assert_eq!(page.eval("__toolgate__.call('place_order', {})").await["error"]["code"], "hidden_by_policy");
    assert_eq!(page.eval("seen.calls").await, json!({}));
    shop.gateway.stop().await;
}

/// Makes one agent API endpoint fail in a tab, before the runtime starts: the session fetch is
/// rejected (network error), or the catalog POST gets a 500.
fn failing(endpoint: &str) -> String {
    let failure = if endpoint == "session" {
        "Promise.reject(new TypeError('offline'))"
    } else {
        "Promise.resolve(new Response('{\"error\":{\"code\":\"down\",\"message\":\"down\"}}', {status: 500, headers: {'content-type': 'application/json'}}))"
    };
    format!(
        "(() => {{ const real = window.fetch; window.fetch = (input, init) => \
         String(input).includes('/.toolgate/agent/{endpoint}') ? {failure} : real(input, init); }})();"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn when_the_gateway_does_not_decide_everything_stays_hidden() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    for (endpoint, reason, has_session) in
        [("session", "session_unavailable", false), ("catalog", "pending", true)]
    {
        let page = browser.page().await;
        page.add_script_on_new_document(&failing(endpoint)).await;
        page.goto(&format!("{}/voix", shop.base)).await;
        page.eval("__toolgate__.ready.then(() => true)").await;
        assert_eq!(
            page.eval("__toolgate__.catalog()").await,
            json!({"tools": [], "contexts": []}),
            "{endpoint}"
        );
        let reasons = page.eval("[...new Set(__toolgate__.hidden().map((entry) => entry.reason))]").await;
        assert_eq!(reasons, json!([reason]), "{endpoint}");
        assert_eq!(page.eval("__toolgate__.session() !== null").await, json!(has_session), "{endpoint}");
        let refused = page.eval("__toolgate__.call('search', {query: 'x'})").await;
        assert_eq!(refused["error"]["code"], "hidden_by_policy", "{endpoint}");
        assert_eq!(page.eval("seen.calls").await, json!({}), "{endpoint}");
    }
    shop.gateway.stop().await;
}
