//! Components in `window.__ci4a__`: tools, state contexts, the reference adapter, removal.

use super::*;

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
