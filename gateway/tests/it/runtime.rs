//! The discovery runtime in real headless Chromium through a real gateway: every dialect's
//! fixture page (VOIX, WebMCP `document.modelContext` and `navigator.modelContext`, native WebMCP
//! wrapped or doubled, CI4A components) becomes the expected catalog; calls reach the page's
//! handlers and bring back their results; invalid arguments, disabled and policy-denied tools are
//! refused before the page runs anything.

use crate::cdp::{Browser, Page};
use crate::harness::{self, reply, upstream};
use gateway::app::Running;
use serde_json::{Value, json};

const VOIX: &str = include_str!("fixtures/runtime/voix.html");
const WEBMCP: &str = include_str!("fixtures/runtime/webmcp.html");
const NATIVE: &str = include_str!("fixtures/runtime/native.html");
const CI4A: &str = include_str!("fixtures/runtime/ci4a.html");
const ADAPTER: &str = include_str!("../../../injector/runtime/examples/ci4a-adapter.js");

/// Everything is allowed except the secrets, so a test sees both outcomes of the round trip.
const POLICY: &str = r#"
[defaults]
unknown_tools = "allow"
unknown_contexts = "allow"

[[rule]]
id = "no-secrets"
tools.deny = ["secret_*", "*.secret_*"]
contexts.deny = ["secret_*", "vault.*"]
"#;

/// The gateway in front of the fixture pages, at `http://shop.localhost:PORT`.
struct Shop {
    gateway: Running,
    _policy: tempfile::TempDir,
    base: String,
}

async fn shop() -> Shop {
    shop_with("").await
}

/// `site_settings` go into the site's `[sites.site0]` table.
async fn shop_with(site_settings: &str) -> Shop {
    let app = upstream(|seen| match seen.uri.path() {
        "/ci4a-adapter.js" => reply("text/javascript", ADAPTER),
        path => {
            let page = match path {
                "/voix" => VOIX,
                "/webmcp" => WEBMCP,
                "/native" => NATIVE,
                "/ci4a" => CI4A,
                _ => "<!doctype html><html><head></head><body>empty</body></html>",
            };
            reply("text/html; charset=utf-8", page)
        }
    })
    .await;
    let directory = tempfile::tempdir().expect("policy dir");
    let policy_file = directory.path().join("policy.toml");
    std::fs::write(&policy_file, POLICY).expect("write policy");
    let text = harness::config_text(&[("shop.localhost", app.address)], "")
        .replace("[sites.site0]\n", &format!("[sites.site0]\n{site_settings}"));
    let text = format!("{text}[policy]\nfile = {:?}\n", policy_file.display().to_string());
    let gateway = harness::gateway_from_text(&text).await;
    let base = format!("http://shop.localhost:{}", gateway.address.port());
    Shop { gateway, _policy: directory, base }
}

/// Opens `path` and waits for the runtime's first round trip with the gateway.
async fn open(browser: &Browser, shop: &Shop, path: &str) -> Page {
    let page = browser.page().await;
    page.goto(&format!("{}{path}", shop.base)).await;
    page.eval("window.__toolgate__.ready.then(() => true)").await;
    page
}

/// Polls the JavaScript `condition` until it is truthy (at most 5 s) and returns its value.
async fn until(page: &Page, condition: &str) -> Value {
    let script = format!(
        "(async () => {{ const deadline = Date.now() + 5000; for (;;) {{ const value = await ({condition}); \
         if (value) {{ return value; }} if (Date.now() > deadline) {{ throw new Error('still false: ' + {quoted}); }} \
         await new Promise((resolve) => setTimeout(resolve, 20)); }} }})()",
        quoted = json!(condition)
    );
    page.eval(&script).await
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|items| items.iter().filter_map(|item| item["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// What `page.eval` gives for `undefined`.
const ABSENT: Value = Value::Null;

fn hints(read_only: bool, consequential: bool, untrusted_content: bool) -> Value {
    json!({"read_only": read_only, "consequential": consequential, "untrusted_content": untrusted_content})
}

fn plain() -> Value {
    hints(false, false, false)
}

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

#[tokio::test(flavor = "multi_thread")]
async fn webmcp_registrations_on_document_and_navigator_become_the_catalog() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/webmcp").await;
    let empty = json!({"type": "object", "properties": {}});
    let expected = json!([
        {"name": "lookup_order", "description": "Look up an order", "source": "webmcp_imperative",
         "annotations": hints(true, false, true),
         "input_schema": {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^A[0-9]{3}$"},
            "verbose": {"type": "boolean"}}, "required": ["order_id"], "additionalProperties": false}},
        {"name": "place_order", "title": "Place order", "description": "Place the order in the cart",
         "source": "webmcp_imperative", "annotations": hints(false, true, false), "input_schema": empty},
        {"name": "wait_forever", "description": "Never finishes", "source": "webmcp_imperative", "annotations": plain(), "input_schema": empty},
        {"name": "nav_first", "description": "First provided tool", "source": "webmcp_imperative", "annotations": plain(), "input_schema": empty},
        {"name": "nav_second", "description": "Second provided tool", "source": "webmcp_imperative", "annotations": plain(),
         "input_schema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}},
        {"name": "nav_dynamic", "description": "Registered on its own", "source": "webmcp_imperative", "annotations": plain(), "input_schema": empty},
    ]);
    assert_eq!(page.eval("__toolgate__.catalog().tools").await, expected);

    let outcome = page
        .eval(
            "(async () => { const tg = __toolgate__;
               const found = await tg.call('lookup_order', {order_id: 'A123'});
               const wrong = await tg.call('lookup_order', {order_id: 'B1', color: 'red'});
               const placed = await tg.call('place_order', {});
               const doubled = await tg.call('nav_second', {n: 21});
               const viaExecute = await document.modelContext.executeTool('place_order', {});
               const listed = (await document.modelContext.getTools()).map((tool) => tool.name);
               const refusal = (tool) => document.modelContext.registerTool(tool).then(() => 'registered', (error) => error.name);
               const duplicate = await refusal({name: 'place_order', description: 'again', execute() {}});
               const badName = await refusal({name: 'bad name', description: 'x', execute() {}});
               const noDescription = await refusal({name: 'quiet', description: '', execute() {}});
               const cancel = new AbortController();
               const waiting = tg.call('wait_forever', {}, {signal: cancel.signal});
               setTimeout(() => cancel.abort(), 50);
               const cancelled = await waiting;
               return {found, wrong, placed, doubled, viaExecute, listed, duplicate, badName, noDescription, cancelled, seen}; })()",
        )
        .await;
    assert_eq!(outcome["found"], json!({"ok": true, "result": {"order_id": "A123", "status": "shipped"}}));
    assert_eq!(
        outcome["wrong"]["error"]["details"],
        json!([{"path": "/order_id", "message": "must match the pattern ^A[0-9]{3}$"}, {"path": "/color", "message": "is not an allowed property"}])
    );
    let placed = json!({"content": [{"type": "text", "text": "order placed"}]});
    assert_eq!(outcome["placed"], json!({"ok": true, "result": placed}), "results are opaque JSON");
    assert_eq!(outcome["doubled"], json!({"ok": true, "result": 42}));
    let via_execute = outcome["viaExecute"].as_str().expect("executeTool resolves to text, like native");
    assert_eq!(serde_json::from_str::<Value>(via_execute).ok(), Some(placed.clone()));
    assert_eq!(
        outcome["listed"],
        json!(["lookup_order", "nav_dynamic", "nav_first", "nav_second", "place_order", "wait_forever"])
    );
    for refused in ["duplicate", "badName", "noDescription"] {
        assert_eq!(outcome[refused], "InvalidStateError", "{refused}");
    }
    assert_eq!(outcome["cancelled"]["error"]["code"], "cancelled");
    let seen = &outcome["seen"];
    assert_eq!(
        seen["calls"],
        json!({"lookup_order": 1, "place_order": 2, "nav_second": 1, "wait_forever": 1})
    );
    assert_eq!((seen["hasSignal"].clone(), seen["waitAborted"].clone()), (json!(true), json!(true)));
    assert_eq!(seen["registration"]["lookup_order"], "resolved");
    let events: Vec<&str> =
        seen["events"].as_array().expect("events").iter().filter_map(Value::as_str).collect();
    for event in
        ["toolchange:", "toolactivated:lookup_order", "toolactivated:wait_forever", "toolcancel:wait_forever"]
    {
        assert!(events.contains(&event), "{event} missing from {events:?}");
    }

    // Unregistering: an abort signal, unregisterTool, a registration handle, provideContext
    // replacing the provided set, clearContext.
    page.eval("lookupAbort.abort(); navigator.modelContext.unregisterTool('nav_first'); navDynamic.unregister(); true").await;
    until(&page, "!__toolgate__.catalog().tools.some((tool) => ['lookup_order', 'nav_first', 'nav_dynamic'].includes(tool.name))").await;
    assert_eq!(
        page.eval("__toolgate__.call('lookup_order', {order_id: 'A123'})").await["error"]["code"],
        "unknown_tool"
    );
    page.eval("navigator.modelContext.provideContext({tools: [{name: 'nav_third', description: 'Third', execute: () => 3}]}); true").await;
    let tools = until(&page, "__toolgate__.catalog().tools.some((tool) => tool.name === 'nav_third') && __toolgate__.catalog().tools").await;
    assert_eq!(names(&tools), ["place_order", "wait_forever", "nav_third"]);
    page.eval("navigator.modelContext.clearContext(); true").await;
    let tools = until(&page, "!__toolgate__.catalog().tools.some((tool) => tool.name === 'nav_third') && __toolgate__.catalog().tools").await;
    assert_eq!(names(&tools), ["place_order", "wait_forever"]);
    shop.gateway.stop().await;
}

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

/// A stand-in for a browser's native `document.modelContext`, installed before any page script:
/// it records what the runtime forwards to it.
const NATIVE_DOUBLE: &str = r#"(() => {
  const registered = [];
  const native = new EventTarget();
  native.registerTool = (tool, options) => {
    registered.push(tool);
    options?.signal?.addEventListener('abort', () => registered.splice(registered.indexOf(tool), 1));
    return Promise.resolve();
  };
  native.getTools = async () => [];
  native.executeTool = async () => { throw new Error('the runtime never executes through the double'); };
  window.nativeDouble = { native, registered };
  Object.defineProperty(Document.prototype, 'modelContext', { configurable: true, get() { return native; } });
})();"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_native_implementation_is_wrapped_and_only_sees_visible_tools() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.add_script_on_new_document(NATIVE_DOUBLE).await;
    page.goto(&format!("{}/webmcp", shop.base)).await;
    page.eval("__toolgate__.ready.then(() => true)").await;
    let forwarded = until(
        &page,
        "nativeDouble.registered.length === 6 && nativeDouble.registered.map((tool) => tool.name).sort()",
    )
    .await;
    assert_eq!(
        forwarded,
        json!(["lookup_order", "nav_dynamic", "nav_first", "nav_second", "place_order", "wait_forever"])
    );
    assert_eq!(
        page.eval("document.modelContext !== nativeDouble.native").await,
        json!(true),
        "pages talk to the wrapper"
    );
    let lookup = "nativeDouble.registered.find((tool) => tool.name === 'lookup_order')";
    assert_eq!(
        page.eval(&format!("{lookup}.annotations")).await,
        json!({"readOnlyHint": true, "untrustedContentHint": true, "consequentialHint": false})
    );
    // A native agent's call goes through the runtime's checks to the page's handler.
    let result = page.eval(&format!("{lookup}.execute({{order_id: 'A123'}}, {{}})")).await;
    assert_eq!(result, json!({"order_id": "A123", "status": "shipped"}));
    let refused = page
        .eval(&format!(
            "{lookup}.execute({{order_id: 42}}, {{}}).then(() => 'ran', (error) => error.message)"
        ))
        .await;
    assert!(refused.as_str().unwrap_or_default().starts_with("invalid_arguments"), "{refused}");
    assert_eq!(page.eval("seen.calls.lookup_order").await, json!(1));
    // Unregistering withdraws the native copy.
    page.eval("lookupAbort.abort(); true").await;
    until(&page, "!nativeDouble.registered.some((tool) => tool.name === 'lookup_order')").await;
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chromium_native_webmcp_is_wrapped_and_its_tool_forms_are_read() {
    let shop = shop().await;
    let browser = Browser::launch(&["--enable-features=WebMCPTesting"]).await;
    let page = open(&browser, &shop, "/native").await;
    let native = "Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext').get.call(document)";
    assert_eq!(
        page.eval(&format!("typeof {native}.executeTool")).await,
        "function",
        "Chromium has native WebMCP"
    );
    let listed = until(
        &page,
        &format!("{native}.getTools().then((tools) => tools.length === 2 && tools.map((tool) => tool.name))"),
    )
    .await;
    assert_eq!(
        listed,
        json!(["book_table", "public_tool"]),
        "the denied tool never reaches the native agent"
    );

    let catalog =
        until(&page, "__toolgate__.catalog().tools.length === 2 && __toolgate__.catalog().tools").await;
    assert_eq!(names(&catalog), ["public_tool", "book_table"]);
    assert_eq!(catalog[1]["source"], "webmcp_declarative");
    assert_eq!(catalog[1]["description"], "Book a table");
    let native_schema = page
        .eval(&format!("{native}.getTools().then((tools) => tools.find((tool) => tool.name === 'book_table').inputSchema)"))
        .await;
    assert_eq!(catalog[1]["input_schema"], native_schema, "the form's schema is Chromium's own");

    let outcome = page
        .eval(&format!(
            "(async () => {{ const tools = await {native}.getTools(); const tool = tools.find((tool) => tool.name === 'public_tool');
               const doubled = await {native}.executeTool(tool, {{n: 4}});
               const wrong = await {native}.executeTool(tool, {{n: 'four'}}).then(() => 'ran', (error) => error.name);
               const booked = await __toolgate__.call('book_table', {{guests: 3, time: '20'}});
               return {{doubled, wrong, booked, seen}}; }})()"
        ))
        .await;
    assert_eq!(outcome["doubled"], json!("{\"double\":8}"));
    assert_eq!(outcome["wrong"], "UnknownError");
    assert_eq!(outcome["booked"], json!({"ok": true, "result": {"booked": true}}));
    assert_eq!(outcome["seen"]["hits"], 1, "the invalid call never reached the page");
    assert_eq!(outcome["seen"]["submitted"], json!({"agent": true, "guests": "3", "time": "20"}));
    assert_eq!(outcome["seen"]["secret"], ABSENT);
    shop.gateway.stop().await;
}

/// A component queued before the runtime ran, with a root the page attaches later.
const EARLY_COMPONENT: &str = r#"(() => {
  const root = document.createElement('div');
  root.dataset.cid = 'early';
  window.__ci4a__ = [{ id: 'early', root, description: 'Queued early', state: () => ({ ready: true }),
    tools: { ping: { description: 'Answer pong', execute: () => 'pong' } } }];
  document.addEventListener('DOMContentLoaded', () => document.body.append(root));
})();"#;

#[tokio::test(flavor = "multi_thread")]
async fn ci4a_components_offer_tools_and_state_and_leave_with_their_root() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    page.add_script_on_new_document(EARLY_COMPONENT).await;
    page.goto(&format!("{}/ci4a", shop.base)).await;
    page.eval("__toolgate__.ready.then(() => true)").await;
    let catalog = until(&page, "__toolgate__.catalog().tools.length === 3 && __toolgate__.catalog()").await;
    assert_eq!(names(&catalog["tools"]), ["early.ping", "orders.sort", "size.setValue"]);
    assert_eq!(names(&catalog["contexts"]), ["early.state", "orders.state", "size.state"]);
    let sort = &catalog["tools"][1];
    assert_eq!(sort["source"], "component");
    assert_eq!(
        sort["input_schema"]["properties"],
        json!({"column": {"type": "string", "enum": ["Customer", "Total"]}, "direction": {"type": "string", "enum": ["ascending", "descending"]}})
    );
    let early: Value =
        serde_json::from_str(catalog["contexts"][0]["text"].as_str().unwrap_or_default()).unwrap_or_default();
    assert_eq!(early, json!({"component": "early", "description": "Queued early", "state": {"ready": true}}));

    let outcome = page
        .eval(
            "(async () => { const tg = __toolgate__;
               const pong = await tg.call('early.ping', {});
               const sorted = await tg.call('orders.sort', {column: 'Total', direction: 'descending'});
               const wrong = await tg.call('orders.sort', {column: 'Price'});
               const chosen = await tg.call('size.setValue', {value: 'l'});
               const vault = await tg.call('vault.secret_open', {});
               const state = JSON.parse(tg.catalog().contexts.find((context) => context.name === 'orders.state').text).state;
               let badRoot;
               try { __ci4a__.register({id: 'stray', root: document.body}); } catch (error) { badRoot = error.name; }
               return {pong, sorted, wrong, chosen, vault, state, badRoot, size: document.getElementById('size').value, seen}; })()",
        )
        .await;
    assert_eq!(outcome["pong"], json!({"ok": true, "result": "pong"}));
    assert_eq!(
        outcome["sorted"]["result"],
        json!({"sorted_by": {"column": "Total", "direction": "descending"}, "first": "120"})
    );
    assert_eq!(
        outcome["wrong"]["error"]["details"],
        json!([{"path": "/column", "message": "must be one of [\"Customer\",\"Total\"]"}])
    );
    assert_eq!(outcome["chosen"], json!({"ok": true, "result": {"value": "l"}}));
    assert_eq!(outcome["size"], "l");
    assert_eq!(outcome["vault"]["error"]["code"], "hidden_by_policy");
    assert_eq!(outcome["seen"]["calls"], json!({}), "the denied component tool never ran");
    assert_eq!(outcome["state"]["sorted_by"], json!({"column": "Total", "direction": "descending"}));
    assert_eq!(outcome["state"]["rows"][0], json!({"Customer": "Alice", "Total": "120"}));
    assert_eq!(outcome["badRoot"], "TypeError");
    assert_eq!(
        page.eval("__toolgate__.hidden().map((entry) => entry.name)").await,
        json!(["vault.secret_open", "vault.state"])
    );

    page.eval("document.querySelector('[data-cid=orders]').remove(); true").await;
    let left = until(
        &page,
        "!__toolgate__.catalog().tools.some((tool) => tool.name === 'orders.sort') && __toolgate__.catalog()",
    )
    .await;
    assert_eq!(names(&left["contexts"]), ["early.state", "size.state"]);
    assert_eq!(
        page.eval("__ci4a__.list().map((component) => component.id)").await,
        json!(["early", "vault", "size"])
    );
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_is_frozen_and_a_second_run_changes_nothing() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &shop, "/voix").await;
    let outcome = page
        .eval(
            "(async () => { const before = window.__toolgate__; const context = document.modelContext;
               const source = document.querySelector('script[src^=\"/.toolgate/runtime.\"]').src;
               (0, eval)(await (await fetch(source)).text());
               window.__toolgate__ = null;
               return {same: window.__toolgate__ === before && document.modelContext === context,
                       frozen: Object.isFrozen(before), tools: before.catalog().tools.length,
                       keys: Object.keys(before).sort()}; })()",
        )
        .await;
    assert_eq!(outcome["same"], json!(true));
    assert_eq!(outcome["frozen"], json!(true));
    assert_eq!(outcome["tools"], 6);
    assert_eq!(
        outcome["keys"],
        json!(["call", "catalog", "hidden", "ready", "session", "subscribe", "version"])
    );
    assert!(page.console_errors().is_empty(), "{:?}", page.console_errors());
    shop.gateway.stop().await;
}
