//! Names a front-end framework renders. A real Vue build (npm `vue`, installed by `./test.sh`
//! into `gateway/tests/frameworks/`) renders `<context :name>` and `<tool :name>` in a loop, as
//! VOIX's kanban demo does, and a page script names elements after inserting them, as Svelte and
//! JSX output does. The proxy keeps the bound elements, the runtime reports what rendered, and
//! only what the gateway allows reaches the agent: the catalog, a real turn's model request, and
//! a turn the page forges with the denied names itself. With page tools off nothing is kept.

use super::*;
use crate::agent_turn::model;
use crate::panel::{open_panel, send_message, turn_ends};
use gateway::demo::model::{StandIn, StandInOptions};
use std::path::PathBuf;

/// The bytes of Vue's browser build (with the template compiler), as npm installed it.
pub(super) fn vue_build() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/frameworks/node_modules/vue/dist/vue.global.prod.js");
    std::fs::read(&path).unwrap_or_else(|error| {
        panic!(
            "Vue is not installed ({}: {error}): run ./test.sh, or `npm ci` in gateway/tests/frameworks",
            path.display()
        )
    })
}

/// The contexts the agent may see once Vue and the widget script rendered, in document order.
fn allowed_contexts() -> Value {
    let entries = [
        ("board_title", "Sprint 12 board"),
        ("sprint_goal", "Ship the importer"),
        ("help", "Move tasks between columns"),
        ("column_backlog", "Plan the release"),
        ("column_todo", "Write docs, Fix login"),
        ("column_doing", "Build importer"),
        ("column_done", "empty"),
        ("task_count", "4 tasks"),
        ("selected_task", "Build importer"),
        ("assignees", "ana, ben"),
        ("weather", "Sunny"),
    ];
    Value::Array(
        entries.iter().map(|(name, text)| json!({"name": name, "text": text, "source": "voix"})).collect(),
    )
}

/// What must never reach the agent: the denied names and the text of the denied contexts (no
/// digits alone: a turn's random boundary could hold them).
const DENIED: [&str; 7] = [
    "secret_salaries",
    "Alice earns",
    "secret_purge",
    "secret_widget",
    "widget secret",
    "secret_static",
    "static salaries",
];

/// Opens the kanban page once Vue mounted and the widgets are named, and waits until the
/// gateway decided everything that rendered.
async fn kanban(browser: &Browser, shop: &Shop) -> Page {
    assert!(!vue_build().is_empty(), "the Vue build is empty");
    let page = open(browser, shop, "/kanban").await;
    until(&page, "document.body.dataset.appReady === 'kanban'").await;
    // Eleven visible contexts and three hidden entries once decided; a proxy that removed the
    // bound elements leaves Vue nothing to render, and this never comes true.
    until(&page, "__toolgate__.catalog().contexts.length === 11 && __toolgate__.hidden().length === 3").await;
    page
}

#[tokio::test(flavor = "multi_thread")]
async fn names_vue_binds_are_kept_in_the_stream_and_decided_by_the_gateway() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    let page = kanban(&browser, &shop).await;

    // The proxy kept every bound element for Vue and removed the statically denied one.
    let html = page.eval("fetch(location.href).then((response) => response.text())").await;
    let html = html.as_str().unwrap_or_default();
    for kept in [
        r#"<context :name="'column_' + column.id">"#,
        r#"<tool :name="'move_to_' + column.id""#,
        r#"<context v-bind:name="countName">"#,
        r#"<context :name="vaultName">Alice earns 123456</context>"#,
    ] {
        assert!(html.contains(kept), "{kept} is in the page as served");
    }
    assert!(
        !html.contains("secret_static") && !html.contains("static salaries"),
        "a static denied name goes in the stream"
    );

    // Every allowed bound context appears to the agent, with what Vue rendered; denied ones do not.
    let catalog = page.eval("__toolgate__.catalog()").await;
    assert_eq!(catalog["contexts"], allowed_contexts());
    assert_eq!(
        names(&catalog["tools"]),
        ["move_to_backlog", "move_to_todo", "move_to_doing", "move_to_done"]
    );
    let denied = "rule no-secrets denies \"secret_*\"";
    assert_eq!(
        page.eval("__toolgate__.hidden()").await,
        json!([
            {"kind": "tool", "name": "secret_purge", "reason": denied},
            {"kind": "context", "name": "secret_salaries", "reason": denied},
            {"kind": "context", "name": "secret_widget", "reason": denied},
        ])
    );
    let catalog_text = catalog.to_string();
    for secret in DENIED {
        assert!(!catalog_text.contains(secret), "{secret} is not in the catalog");
    }

    // A bound tool runs Vue's handler; the context Vue re-renders follows.
    let moved = page.eval("__toolgate__.call('move_to_done', {task: 'Write docs'})").await;
    assert_eq!(moved, json!({"ok": true, "result": {"dispatched": true}}));
    until(&page, "__toolgate__.catalog().contexts.find((context) => context.name === 'column_done').text === 'Write docs'")
        .await;
    let refused = page.eval("__toolgate__.call('secret_purge', {})").await;
    assert_eq!(refused["error"]["code"], "hidden_by_policy", "{refused}");
    let errors: Vec<String> =
        page.console_errors().into_iter().filter(|error| error.starts_with("uncaught")).collect();
    assert!(errors.is_empty(), "{errors:?}");
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_name_vue_rendered_never_reaches_the_model() {
    let (stand_in, llm) = model(StandInOptions::default()).await;
    let shop = shop_configured("", &llm).await;
    let browser = Browser::launch(&[]).await;
    let page = kanban(&browser, &shop).await;

    // A turn from the panel: the model gets every allowed context, bound ones included.
    open_panel(&page).await;
    send_message(&page, "What is on the board?").await;
    assert_eq!(turn_ends(&page).await, "done");
    let body = last_body(&stand_in);
    for context in allowed_contexts().as_array().into_iter().flatten() {
        let (name, text) = (context["name"].as_str().unwrap_or("?"), context["text"].as_str().unwrap_or("?"));
        assert!(body.contains(&format!(" context {name}>>>")), "{name} reaches the model");
        assert!(body.contains(text), "the text of {name} reaches the model");
    }
    assert_never_shown(&body);

    // The page itself posts a turn with the denied bound context and tool: the gateway withholds
    // them (the runtime's hiding is not what keeps them out).
    let forged = page
        .eval(
            "(async () => {
               const session = await (await fetch('/.toolgate/agent/session')).json();
               const catalog = __toolgate__.catalog();
               const tools = [...catalog.tools, {...catalog.tools[0], name: 'secret_purge', description: 'Delete every task'}];
               const contexts = [...catalog.contexts.map(({name, text}) => ({name, text})),
                 {name: 'secret_salaries', text: document.querySelector('context[name=secret_salaries]').textContent}];
               const response = await fetch('/.toolgate/agent/turn', {method: 'POST',
                 headers: {'content-type': 'application/json', 'x-toolgate-csrf': session.csrf},
                 body: JSON.stringify({message: 'What do people earn?', tools, contexts})});
               return {status: response.status, events: await response.text()};
             })()",
        )
        .await;
    assert_eq!(forged["status"], 200, "{forged}");
    let events = forged["events"].as_str().unwrap_or_default();
    let started: Value = events
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|event| event["event"] == "started")
        .unwrap_or_else(|| panic!("no started event: {events}"));
    let withheld = started["withheld"].to_string();
    assert!(withheld.contains("secret_purge") && withheld.contains("secret_salaries"), "{started}");
    let body = last_body(&stand_in);
    assert!(body.contains("What do people earn?"), "the forged turn reached the model");
    assert_never_shown(&body);
    shop.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn with_page_tools_off_bound_elements_are_removed_in_the_stream() {
    let shop = shop_with("page_tools = false\n").await;
    let page = harness::send(shop.gateway.address, harness::get("shop.localhost", "/kanban")).await;
    let html = page.text();
    assert_eq!(page.status, 200);
    assert!(html.contains(r#"<div id="board">"#) && html.contains("Vue.createApp"), "{html}");
    for gone in ["<context", "<tool", ":name=", "Alice earns"] {
        assert!(!html.contains(gone), "{gone} is still in the page: {html}");
    }
    shop.gateway.stop().await;
}

fn last_body(stand_in: &StandIn) -> String {
    stand_in.bodies().pop().unwrap_or_else(|| panic!("the model got no request"))
}

fn assert_never_shown(body: &str) {
    for secret in DENIED {
        assert!(!body.contains(secret), "{secret} reached the model: {body}");
    }
}
