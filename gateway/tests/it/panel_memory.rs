//! Conversation memory in the panel, in real headless Chromium through `toolgate demo`: a later
//! turn knows what an earlier one did ("add a task", then "now mark it done"), the panel shows
//! the conversation again after a reload, the audit names each turn's conversation, and "New
//! conversation" starts over with nothing remembered.

use crate::panel::{conversation, demo_page, open_panel, panel, panel_until, send_message, turn_ends};
use gateway::audit::event::EventKind;
use serde_json::{Value, json};

/// The task board's tasks as its API lists them (through the gateway, as the page sees them).
async fn tasks(page: &crate::cdp::Page) -> Vec<Value> {
    let tasks = page.eval("fetch('/api/tasks').then((r) => r.json())").await;
    tasks.as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_later_turn_remembers_the_earlier_one_and_new_conversation_forgets() {
    let (demo, _browser, page) = demo_page("alice", "tasks").await;
    open_panel(&page).await;
    send_message(&page, "Add a task called \"Water the plants\"").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    let added = tasks(&page).await;
    let task = added.iter().find(|task| task["title"] == "Water the plants").expect("the task was added");
    assert_eq!(task["done"], json!(false));
    let id = task["id"].clone();

    // "It" is the task the previous turn added: only the conversation says which one.
    send_message(&page, "Now mark it done").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    let log = conversation(&page).await;
    let call = log.iter().find(|row| row.0 == "tool" && row.2.contains("complete_task"));
    assert_eq!(call.map(|row| row.1.as_str()), Some("done"), "{log:?}");
    let marked = tasks(&page).await;
    let task = marked.iter().find(|task| task["id"] == id).expect("the task is still there");
    assert_eq!(task["done"], json!(true), "the task the first turn added was marked done: {marked:?}");

    // Both turns went on one conversation, and the audit says which.
    let records = gateway::audit::query::find(demo.gateway.state.audit.store(), &Default::default(), 0, 200)
        .expect("audit")
        .records;
    let conversations: Vec<String> = records
        .iter()
        .filter(|record| record.event.kind == Some(EventKind::CatalogExposure))
        .filter_map(|record| record.event.explanation.as_ref()?["conversation"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(conversations.len(), 2, "{conversations:?}");
    assert_eq!(conversations[0], conversations[1]);

    // After a reload the panel shows the conversation so far.
    page.goto(&format!("http://tasks.localhost:{}/", demo.port)).await;
    crate::runtime::until(&page, "document.body.dataset.appReady === 'tasks'").await;
    crate::runtime::until(&page, "document.querySelector('toolgate-panel') !== null").await;
    open_panel(&page).await;
    panel_until(&page, "root.querySelectorAll('[data-history=true]').length > 0").await;
    let history = conversation(&page).await;
    let texts: Vec<&str> = history.iter().map(|row| row.2.as_str()).collect();
    assert!(texts.contains(&"Add a task called \"Water the plants\""), "{history:?}");
    assert!(texts.contains(&"Now mark it done"), "{history:?}");
    assert!(history.iter().any(|row| row.0 == "tool" && row.1 == "done" && row.2.contains("complete_task")));

    // A new conversation remembers nothing: "it" means nothing any more.
    panel(&page, "root.querySelector('[data-action=new-conversation]').click()").await;
    assert_eq!(panel(&page, "root.querySelectorAll('.log > li').length").await, json!(0));
    send_message(&page, "Now mark it done").await;
    assert_eq!(turn_ends(&page).await, "done", "{:?}", conversation(&page).await);
    let log = conversation(&page).await;
    assert!(!log.iter().any(|row| row.0 == "tool" || row.0 == "approval"), "no call without a task: {log:?}");
    let answer = log.iter().find(|row| row.0 == "assistant").expect("an answer");
    assert!(answer.2.contains("need id"), "the stand-in asks which task: {answer:?}");
}
