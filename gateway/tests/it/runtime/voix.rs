//! VOIX `<tool>`/`<context>` pages: the catalog, calls one at a time, validation before the
//! page runs, DOM changes, timeouts.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn voix_tools_arrays_and_contexts_become_the_catalog() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/voix").await;
    let empty = json!({"type": "object", "properties": {}, "required": []});
    let expected = json!({
        "tools": [
            {"name": "add_to_cart", "description": "Add a product to the cart", "source": "voix", "annotations": plain(),
             "input_schema": {"type": "object", "properties": {
                "sku": {"type": "string", "description": "Product code"},
                "quantity": {"type": "integer", "description": "How many"},
                "options": {"type": "array", "description": "Extras", "items": {"type": "object", "properties": {
                    "label": {"type": "string"}, "price": {"type": "number"}}, "required": ["label"]}}},
              "required": ["sku", "options"]}},
            {"name": "search", "description": "Search the shop", "source": "voix", "annotations": plain(),
             "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
            // The second `search` gets a suffix; `bad name!` is left out.
            {"name": "search_2", "description": "Search the archive", "source": "voix", "annotations": plain(), "input_schema": empty},
            {"name": "stall", "description": "Never answers", "source": "voix", "annotations": plain(), "input_schema": empty},
            // `<tool .../>` does not close in HTML: close_help is parsed inside open_help, yet the
            // two stay separate tools and each keeps its own props.
            {"name": "open_help", "description": "Open the help panel", "source": "voix", "annotations": plain(), "input_schema": empty},
            {"name": "close_help", "description": "Close the help panel", "source": "voix", "annotations": plain(),
             "input_schema": {"type": "object", "properties": {"animate": {"type": "boolean"}}, "required": []}},
        ],
        "contexts": [{"name": "cart", "text": "2 items: tea, cups", "source": "voix"}],
    });
    assert_eq!(page.eval("__toolgate__.catalog()").await, expected);
    assert_eq!(page.eval("__toolgate__.hidden()").await, json!([]));
    let session = page.eval("__toolgate__.session()").await;
    assert_eq!(
        session,
        json!({"user": {"id": "anonymous", "name": "Anonymous"}, "site": "site0", "page_tools": true})
    );
    assert!(page.console_errors().is_empty(), "{:?}", page.console_errors());
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn voix_calls_reach_their_handlers_one_at_a_time_with_their_own_results() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/voix").await;
    let outcome = page
        .eval(
            "(async () => { const tg = __toolgate__;
               const carts = await Promise.all([1, 2, 3].map((quantity) =>
                 tg.call('add_to_cart', {sku: 'tea', quantity, options: [{label: 'gift wrap'}]})));
               const failing = await tg.call('search', {query: 'fail'});
               const found = await tg.call('search', {query: 'cups'});
               const fired = await tg.call('close_help', {animate: true});
               return {carts, failing, found, fired, seen}; })()",
        )
        .await;
    let carts: Vec<Value> = (1..=3)
        .map(|order| json!({"ok": true, "result": {"sku": "tea", "quantity": order, "order": order}}))
        .collect();
    assert_eq!(outcome["carts"], json!(carts), "each concurrent call gets its own answer");
    assert_eq!(outcome["seen"]["maxInFlight"], 1, "calls to one VOIX tool are queued");
    assert_eq!(
        outcome["failing"],
        json!({"ok": false, "error": {"code": "page_error", "message": "search is down"}})
    );
    assert_eq!(outcome["found"], json!({"ok": true, "result": ["cups result"]}));
    assert_eq!(outcome["fired"], json!({"ok": true, "result": {"dispatched": true}}));
    assert_eq!(outcome["seen"]["closeArgs"], json!({"animate": true}));
    let calls = &outcome["seen"]["calls"];
    assert_eq!(
        (calls["add_to_cart"].clone(), calls["search"].clone(), calls["close_help"].clone()),
        (json!(3), json!(2), json!(1))
    );
    assert_eq!(calls["open_help"], ABSENT, "a nested tool's call never runs its parent's handler");
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_are_refused_before_the_page_sees_them() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/voix").await;
    let wrong = page
        .eval("__toolgate__.call('add_to_cart', {sku: 7, quantity: 1.5, options: [{price: 'free'}]})")
        .await;
    assert_eq!(
        wrong,
        json!({"ok": false, "error": {"code": "invalid_arguments", "message": "the arguments do not match the input schema",
        "details": [
            {"path": "/sku", "message": "must be string, not an integer"},
            {"path": "/quantity", "message": "must be integer, not a number"},
            {"path": "/options/0/label", "message": "is required"},
            {"path": "/options/0/price", "message": "must be number, not a string"},
        ]}})
    );
    let missing = page.eval("__toolgate__.call('add_to_cart', {})").await;
    assert_eq!(
        missing["error"]["details"],
        json!([{"path": "/sku", "message": "is required"}, {"path": "/options", "message": "is required"}])
    );
    let not_an_object = page.eval("__toolgate__.call('search', ['cups'])").await;
    assert_eq!(
        not_an_object["error"]["details"],
        json!([{"path": "", "message": "must be object, not an array"}])
    );
    let unknown = page.eval("__toolgate__.call('no_such_tool', {})").await;
    assert_eq!(unknown["error"]["code"], "unknown_tool");
    assert_eq!(page.eval("seen.calls").await, json!({}), "no handler ran");
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn voix_additions_edits_disabling_and_removals_are_observed() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/voix").await;
    page.eval("window.changes = 0; __toolgate__.subscribe(() => { changes += 1; }); true").await;

    page.eval("document.body.insertAdjacentHTML('beforeend', '<tool name=\"wishlist\" description=\"Save for later\"><prop name=\"sku\" type=\"string\" required></prop></tool>'); true").await;
    let added = until(&page, "__toolgate__.catalog().tools.find((tool) => tool.name === 'wishlist')").await;
    assert_eq!(
        added["input_schema"],
        json!({"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]})
    );

    page.eval("tool('search').setAttribute('description', 'Search everything'); tool('search').insertAdjacentHTML('beforeend', '<prop name=\"page\" type=\"integer\"></prop>'); true").await;
    let edited = until(&page, "__toolgate__.catalog().tools.find((tool) => tool.name === 'search' && tool.description === 'Search everything' && tool.input_schema.properties.page)").await;
    assert_eq!(edited["input_schema"]["properties"]["page"], json!({"type": "integer"}));

    page.eval("document.querySelector('context[name=cart]').textContent = '3 items'; true").await;
    until(&page, "__toolgate__.catalog().contexts[0].text === '3 items'").await;

    page.eval("tool('close_help').setAttribute('disabled', ''); true").await;
    until(&page, "!__toolgate__.catalog().tools.some((tool) => tool.name === 'close_help')").await;
    let hidden = page.eval("__toolgate__.hidden()").await;
    assert_eq!(hidden, json!([{"kind": "tool", "name": "close_help", "reason": "disabled"}]));
    let refused = page.eval("__toolgate__.call('close_help', {})").await;
    assert_eq!(refused["error"]["code"], "disabled");
    page.eval("tool('close_help').removeAttribute('disabled'); true").await;
    until(&page, "__toolgate__.catalog().tools.some((tool) => tool.name === 'close_help')").await;

    page.eval("tool('wishlist').remove(); true").await;
    until(&page, "!__toolgate__.catalog().tools.some((tool) => tool.name === 'wishlist')").await;
    assert_eq!(page.eval("__toolgate__.call('wishlist', {sku: 'x'})").await["error"]["code"], "unknown_tool");
    assert_eq!(page.eval("seen.calls.close_help").await, ABSENT, "the disabled tool never ran");
    assert!(page.eval("changes").await.as_u64().unwrap_or_default() >= 5, "subscribers hear every change");
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_voix_tool_times_out_and_late_or_orphaned_answers_go_nowhere() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/voix").await;
    let first = page.eval("__toolgate__.call('stall', {}, {timeoutMs: 200})").await;
    assert_eq!(first["error"]["code"], "timeout", "{first}");
    // The page answers the timed-out call late (echoing its call id); the next call must not
    // take that answer for its own.
    let second = page
        .eval(
            "(async () => { const pending = __toolgate__.call('stall', {}, {timeoutMs: 3000});
               while (seen.callIds.length < 2) { await new Promise((resolve) => setTimeout(resolve, 10)); }
               answer(tool('stall'), 'stale', seen.callIds[0]);
               answer(tool('stall'), 'fresh', seen.callIds[1]);
               return pending; })()",
        )
        .await;
    assert_eq!(second, json!({"ok": true, "result": "fresh"}));
    let removed = page
        .eval(
            "(async () => { const pending = __toolgate__.call('stall', {});
               while (seen.callIds.length < 3) { await new Promise((resolve) => setTimeout(resolve, 10)); }
               tool('stall').remove();
               return pending; })()",
        )
        .await;
    assert_eq!(removed["error"]["code"], "cancelled", "{removed}");
    shop.gateway.stop().await;
}
