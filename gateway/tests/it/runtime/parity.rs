//! WebMCP parity, differentially: one page and its own WebMCP client, in real headless Chromium
//! three ways: natively without the gateway (`--enable-features=WebMCPTesting`, the truth),
//! through the gateway with the runtime's polyfill, and through the gateway with Chromium's
//! native WebMCP underneath. What the page observes must be the same all three ways:
//! `executeTool()`'s results (a string as it is, a form submission that navigates as `null`) and
//! its tool forms in `getTools()` (through the gateway already when the document is parsed, with
//! or without native WebMCP; natively once Chromium announces them with `toolchange`).

use super::*;
use crate::harness::Upstream;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const PARITY: &str = include_str!("../fixtures/runtime/parity.html");

/// Chromium's native WebMCP (declarative forms included) is behind this flag.
const NATIVE_WEBMCP: &str = "--enable-features=WebMCPTesting";

/// Every tool of the fixture, in name order (`getTools()` lists tools by name).
const TOOLS: [&str; 7] =
    ["add_note", "book_delivery", "clear_toppings", "count_slices", "order_pizza", "rate_pizza", "set_style"];

/// Everything visible: parity is about the page layer, not the policy.
const ALLOW_ALL: &str = "[defaults]\nunknown_tools = \"allow\"\nunknown_contexts = \"allow\"\n";

/// The fixture's site, reachable directly (natively) and through a gateway at
/// `http://pizza.localhost:PORT`.
struct Pizzeria {
    app: Upstream,
    gateway: Running,
    _policy: tempfile::TempDir,
}

async fn pizzeria() -> Pizzeria {
    pizzeria_serving(None).await
}

/// The fixture's site, sending the fixture at `/parity` in two parts: the first ends inside the
/// first tool form, before its fields; the rest follows once `release` is notified.
async fn pizzeria_pausing_in_a_form(release: Arc<Notify>) -> Pizzeria {
    pizzeria_serving(Some(release)).await
}

async fn pizzeria_serving(release: Option<Arc<Notify>>) -> Pizzeria {
    let app = upstream(move |seen| match (seen.uri.path(), &release) {
        ("/ordered", _) => {
            reply("text/html; charset=utf-8", "<!doctype html><title>Ordered</title><p>Ordered</p>")
        }
        ("/parity", Some(release)) => {
            let (head, rest) = PARITY.split_at(PARITY.find("<label>Stars").expect("the first form's field"));
            let (sender, body) = harness::channel_body();
            let release = Arc::clone(release);
            tokio::spawn(async move {
                if sender.send(Bytes::from_static(head.as_bytes())).await.is_ok() {
                    release.notified().await;
                    sender.send(Bytes::from_static(rest.as_bytes())).await.ok();
                }
            });
            let mut response = http::Response::new(body);
            let html = http::HeaderValue::from_static("text/html; charset=utf-8");
            response.headers_mut().insert(http::header::CONTENT_TYPE, html);
            response
        }
        _ => reply("text/html; charset=utf-8", PARITY),
    })
    .await;
    let (gateway, policy) =
        harness::gateway_with_policy(&[("pizza.localhost", app.address)], "", ALLOW_ALL).await;
    Pizzeria { app, gateway, _policy: policy }
}

/// The fixture opened the three ways, each labelled for assertion messages. The browsers must
/// outlive their pages.
struct ThreeWays {
    _native_browser: Browser,
    _polyfill_browser: Browser,
    pages: Vec<(&'static str, Page)>,
}

const NATIVE: &str = "natively";
const POLYFILL: &str = "through the gateway";
const WRAPPED: &str = "through the gateway with native WebMCP";

async fn three_ways(pizzeria: &Pizzeria) -> ThreeWays {
    let native_browser = Browser::launch(&[NATIVE_WEBMCP]).await;
    let polyfill_browser = Browser::launch(&[]).await;
    let through_gateway = format!("http://pizza.localhost:{}/parity", pizzeria.gateway.address.port());
    let mut pages = Vec::new();
    for (label, browser, url) in [
        (NATIVE, &native_browser, format!("http://{}/parity", pizzeria.app.address)),
        (POLYFILL, &polyfill_browser, through_gateway.clone()),
        (WRAPPED, &native_browser, through_gateway),
    ] {
        let page = browser.page().await;
        page.goto(&url).await;
        pages.push((label, page));
    }
    let ways = ThreeWays { _native_browser: native_browser, _polyfill_browser: polyfill_browser, pages };
    for (label, page) in &ways.pages {
        let setting = page
            .eval(
                "[typeof window.__toolgate__ === 'object', \
                 Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext') !== undefined]",
            )
            .await;
        let expected = match *label {
            NATIVE => json!([false, true]),
            POLYFILL => json!([true, false]),
            _ => json!([true, true]),
        };
        assert_eq!(setting, expected, "[runtime, native WebMCP] {label}");
    }
    ways
}

/// Waits until a `toolchange` handler of the page listed every tool, and returns that list: a
/// page written for native WebMCP finds its tools this way, also through the gateway. Chromium
/// announces forms as it registers them, at rendering updates that can come while the page is
/// still being parsed, so one of its lists may hold the first forms only.
async fn listed_on_toolchange(page: &Page) -> Value {
    until(
        page,
        &format!("parity.onChange.find((names) => {}.every((name) => names.includes(name)))", json!(TOOLS)),
    )
    .await
}

/// Through the gateway every list the page's `toolchange` handler got holds every tool: the
/// runtime lists the tool forms from the first, and none goes missing later.
async fn assert_every_toolchange_list_whole(page: &Page, label: &str) {
    for list in page.eval("parity.onChange").await.as_array().into_iter().flatten() {
        assert_eq!(*list, json!(TOOLS), "every getTools() on toolchange {label}");
    }
}

/// The input schema of Chromium's own `getTools()` entry for `name` on `page` (through the
/// gateway too: the runtime's polyfill only hides it), or `false` while it does not list it.
/// Never awaits in another document than the fixture, so it may run while the fixture loads.
async fn chromium_schema(page: &Page, name: &str) -> Value {
    page.eval(&format!(
        "location.pathname === '/parity' && \
         Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext').get.call(document).getTools() \
         .then((tools) => tools.find((tool) => tool.name === {name})?.inputSchema || false)",
        name = json!(name)
    ))
    .await
}

/// What the page's own `executeTool()` gives for `name`: `{value}` or `{error}` (the
/// exception's name).
async fn execute(page: &Page, name: &str, args: Value) -> Value {
    page.eval(&format!(
        "(async () => {{ const tools = await document.modelContext.getTools(); \
         const tool = tools.find((tool) => tool.name === {name}); \
         return document.modelContext.executeTool(tool, {args}).then((value) => ({{value}}), (error) => ({{error: error.name}})); }})()",
        name = json!(name)
    ))
    .await
}

/// Chromium gives a tool's string result as it is and serialises anything else (an imperative
/// tool's empty string and `undefined` read as Chromium words them); the gateway's page must get
/// exactly the same text, imperative tools and tool forms alike.
#[tokio::test(flavor = "multi_thread")]
async fn execute_tool_gives_a_string_result_as_it_is() {
    let pizzeria = pizzeria().await;
    let ways = three_ways(&pizzeria).await;
    let calls = [
        ("set_style", json!({"style": "neapolitan"}), json!({"value": "Changed pizza style"})),
        ("count_slices", json!({}), json!({"value": "{\"slices\":8}"})),
        ("clear_toppings", json!({}), json!({"value": "undefined"})),
        ("add_note", json!({}), json!({"value": "Operation succeeded"})),
        ("rate_pizza", json!({"stars": 4}), json!({"value": "Rated 4 stars"})),
        ("book_delivery", json!({"slot": "19:30"}), json!({"value": "{\"booked\":true,\"slot\":\"19:30\"}"})),
    ];
    for (label, page) in &ways.pages {
        listed_on_toolchange(page).await;
        for (name, args, expected) in &calls {
            assert_eq!(execute(page, name, args.clone()).await, *expected, "executeTool({name}) {label}");
        }
    }
    pizzeria.gateway.stop().await;
}

/// A tool form whose submission navigates (here into a frame) resolves to `null` in Chromium; so
/// it does through the gateway. The runtime's own API still reports the site's answer, the same
/// with and without native WebMCP.
#[tokio::test(flavor = "multi_thread")]
async fn a_form_submission_that_navigates_resolves_to_null() {
    let pizzeria = pizzeria().await;
    let ways = three_ways(&pizzeria).await;
    let mut site_answers = Vec::new();
    for (label, page) in &ways.pages {
        listed_on_toolchange(page).await;
        assert_eq!(
            execute(page, "order_pizza", json!({"size": "large"})).await,
            json!({"value": null}),
            "executeTool(order_pizza) {label}"
        );
        let receipt = "document.querySelector('iframe').contentDocument?.title === 'Ordered'";
        until(page, receipt).await;
        if *label != NATIVE {
            let answer = page.eval("__toolgate__.call('order_pizza', {size: 'small'})").await;
            assert_eq!(answer["result"]["submitted"], json!(true), "{label}: {answer}");
            site_answers.push(answer);
        }
    }
    assert_eq!(site_answers[0], site_answers[1], "the site's answer with and without native WebMCP");
    let ordered = pizzeria.app.requests().iter().filter(|seen| seen.uri.path() == "/ordered").count();
    assert_eq!(ordered, 5, "one submission per executeTool() and per __toolgate__.call()");
    pizzeria.gateway.stop().await;
}

/// Through the gateway, a page's `getTools()` lists its tool forms in a `DOMContentLoaded`
/// handler, with native WebMCP as without. Chromium itself registers parser-inserted forms only
/// after the first rendering update and announces them with `toolchange`; a page that listens for
/// it finds the same tools all three ways.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_lists_its_tool_forms_when_the_document_is_parsed() {
    let pizzeria = pizzeria().await;
    let ways = three_ways(&pizzeria).await;
    for (label, page) in &ways.pages {
        if *label != NATIVE {
            assert_eq!(
                until(page, "parity.atLoaded").await,
                json!(TOOLS),
                "getTools() at DOMContentLoaded {label}"
            );
        }
        assert_eq!(listed_on_toolchange(page).await, json!(TOOLS), "getTools() on toolchange {label}");
        if *label != NATIVE {
            assert_every_toolchange_list_whole(page, label).await;
        }
    }
    pizzeria.gateway.stop().await;
}

/// Chromium lists what it has at a rendering update, which can come while the page is still being
/// parsed: here the rest of the page is held back until Chromium listed the first tool form
/// without its fields. That entry is out of date once the form is parsed; through the gateway the
/// page still lists every tool form, whole, when the document is parsed, and never sees one go
/// missing on `toolchange`.
#[tokio::test(flavor = "multi_thread")]
async fn a_form_chromium_listed_half_parsed_is_listed_whole() {
    let release = Arc::new(Notify::new());
    let pizzeria = pizzeria_pausing_in_a_form(Arc::clone(&release)).await;
    let browser = Browser::launch(&[NATIVE_WEBMCP]).await;
    let port = pizzeria.gateway.address.port();
    for (label, url) in [
        (NATIVE, format!("http://{}/parity", pizzeria.app.address)),
        (WRAPPED, format!("http://pizza.localhost:{port}/parity")),
    ] {
        let page = browser.page().await;
        let half_listed = async {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                let schema = chromium_schema(&page, "rate_pizza").await;
                if schema != json!(false) || tokio::time::Instant::now() > deadline {
                    release.notify_one();
                    return schema;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let ((), schema) = tokio::join!(page.goto(&url), half_listed);
        assert_eq!(schema["properties"], json!({}), "Chromium's entry of the half-parsed form {label}");
        if label != NATIVE {
            assert_eq!(
                until(&page, "parity.atLoaded").await,
                json!(TOOLS),
                "getTools() at DOMContentLoaded {label}"
            );
        }
        assert_eq!(listed_on_toolchange(&page).await, json!(TOOLS), "getTools() on toolchange {label}");
        if label != NATIVE {
            assert_every_toolchange_list_whole(&page, label).await;
        }
    }
    pizzeria.gateway.stop().await;
}
