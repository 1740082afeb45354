//! WebMCP registrations on `document.modelContext` and `navigator.modelContext`.

use super::*;

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
