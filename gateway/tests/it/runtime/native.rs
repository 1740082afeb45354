//! A native WebMCP implementation (a double, and Chromium's own behind its flag) is wrapped.

use super::*;

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
