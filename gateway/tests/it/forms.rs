//! WebMCP declarative forms (`<form toolname>`) in real headless Chromium through a real gateway.
//! The runtime's own derivation (`40-forms.js`) must give, for every fixture form, the catalog in
//! the fixture's expected file, and exactly what Chromium's native WebMCP derives (the same pages
//! with `--enable-features=WebMCPTesting`). Executing a tool form fills it all or nothing, submits
//! with `agentInvoked` and returns the page's `respondWith` value; without `toolautosubmit` only
//! the user's click submits.

use crate::cdp::{Browser, Page};
use crate::harness::{self, reply, upstream};
use gateway::app::Running;
use serde_json::{Value, json};

/// Chromium's native WebMCP (declarative forms included) is behind this flag.
const NATIVE_WEBMCP: &str = "--enable-features=WebMCPTesting";

const FIXTURES: [(&str, &str, &str); 3] = [
    (
        "inputs",
        include_str!("fixtures/forms/inputs.html"),
        include_str!("fixtures/forms/inputs.expected.json"),
    ),
    (
        "choices",
        include_str!("fixtures/forms/choices.html"),
        include_str!("fixtures/forms/choices.expected.json"),
    ),
    (
        "labels",
        include_str!("fixtures/forms/labels.html"),
        include_str!("fixtures/forms/labels.expected.json"),
    ),
];
const EXECUTE: &str = include_str!("fixtures/forms/execute.html");

/// Everything visible: these tests are about the page layer, not the policy.
const POLICY: &str = "[defaults]\nunknown_tools = \"allow\"\nunknown_contexts = \"allow\"\n";

/// The gateway in front of the fixture pages, at `http://forms.localhost:PORT/<fixture>`.
struct Site {
    _gateway: Running,
    _policy: tempfile::TempDir,
    base: String,
}

async fn site() -> Site {
    let app = upstream(|seen| {
        let name = seen.uri.path().trim_start_matches('/');
        let page = FIXTURES.iter().find(|(fixture, _, _)| *fixture == name).map(|(_, html, _)| *html);
        let page = page.unwrap_or(if name == "execute" { EXECUTE } else { "<!doctype html><p>none</p>" });
        reply("text/html; charset=utf-8", page)
    })
    .await;
    let (gateway, policy) =
        harness::gateway_with_policy(&[("forms.localhost", app.address)], "", POLICY).await;
    let base = format!("http://forms.localhost:{}", gateway.address.port());
    Site { _gateway: gateway, _policy: policy, base }
}

/// Opens a fixture and waits for the runtime's first round trip with the gateway.
async fn open(browser: &Browser, site: &Site, fixture: &str) -> Page {
    let page = browser.page().await;
    page.goto(&format!("{}/{fixture}", site.base)).await;
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

/// The catalog's tools once it holds `count` of them.
async fn catalog_tools(page: &Page, count: usize) -> Value {
    until(page, &format!("(() => {{ const tools = window.__toolgate__.catalog().tools; return tools.length === {count} && tools; }})()"))
        .await
}

/// Chromium's own `getTools()` (past the runtime's polyfill), once it lists `count` tools, in
/// catalog form and document order.
async fn native_tools(page: &Page, count: usize) -> Value {
    until(
        page,
        &format!(
            "(async () => {{ const native = Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext').get.call(document); \
             const tools = await native.getTools(); if (tools.length !== {count}) {{ return false; }} \
             const order = Array.from(document.querySelectorAll('form[toolname]'), (form) => form.getAttribute('toolname')); \
             return tools.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name)).map((tool) => Object.assign( \
               {{name: tool.name}}, tool.title ? {{title: tool.title}} : {{}}, {{description: tool.description, input_schema: tool.inputSchema}})); }})()"
        ),
    )
    .await
}

fn by_name(tools: Value) -> Vec<Value> {
    let mut tools = tools.as_array().cloned().unwrap_or_default();
    tools.sort_by(|left, right| left["name"].as_str().cmp(&right["name"].as_str()));
    tools
}

/// Only what the derivation decides: name, title, description, input schema.
fn derived(tool: &Value) -> Value {
    let mut copy = json!({"name": tool["name"], "description": tool["description"], "input_schema": tool["input_schema"]});
    if let Some(title) = tool.get("title") {
        copy["title"] = title.clone();
    }
    copy
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_forms_become_the_expected_catalog() {
    let site = site().await;
    let browser = Browser::launch(&[]).await;
    for (fixture, _, expected) in FIXTURES {
        let page = open(&browser, &site, fixture).await;
        let expected: Value = serde_json::from_str(expected).expect("expected catalog is JSON");
        let count = expected["tools"].as_array().map_or(0, Vec::len);
        let tools = catalog_tools(&page, count).await;
        assert_eq!(tools, expected["tools"], "catalog of the {fixture} fixture");
        assert_eq!(page.console_errors(), Vec::<String>::new(), "console errors on {fixture}");
    }
}

/// The differential test: with native WebMCP off the runtime derives every tool itself; with it
/// on, Chromium derives them. Both derivations, and both catalogs, must be the same.
#[tokio::test(flavor = "multi_thread")]
async fn the_runtime_derives_what_native_chromium_derives() {
    let site = site().await;
    let polyfilled = Browser::launch(&[]).await;
    let native = Browser::launch(&[NATIVE_WEBMCP]).await;
    let fixtures = FIXTURES.iter().map(|(name, _, expected)| {
        let expected: Value = serde_json::from_str(expected).expect("expected catalog is JSON");
        (*name, expected["tools"].as_array().map_or(0, Vec::len))
    });
    for (fixture, count) in fixtures.chain([("execute", 2)]) {
        let own_page = open(&polyfilled, &site, fixture).await;
        assert_eq!(
            own_page
                .eval("Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext') === undefined")
                .await,
            json!(true),
            "the polyfilled browser must not have native WebMCP"
        );
        let own = catalog_tools(&own_page, count).await;
        let native_page = open(&native, &site, fixture).await;
        let chromium = native_tools(&native_page, count).await;
        let own_derived: Vec<Value> = own.as_array().expect("tools").iter().map(derived).collect();
        assert_eq!(Value::from(own_derived), chromium, "runtime vs native Chromium derivation on {fixture}");
        // The same catalog either way (in name order: native getTools() lists tools by name).
        let wrapped = catalog_tools(&native_page, count).await;
        assert_eq!(by_name(wrapped), by_name(own), "catalog with native WebMCP vs without, on {fixture}");
    }
}

/// Calls `name` with `args` through the runtime and returns `{ok, result}` / `{ok, error}`.
async fn call(page: &Page, name: &str, args: Value) -> Value {
    page.eval(&format!("window.__toolgate__.call({}, {args})", json!(name))).await
}

async fn autosubmit_returns_the_respond_with_value(extra: &[&str]) {
    let site = site().await;
    let browser = Browser::launch(extra).await;
    let page = open(&browser, &site, "execute").await;
    catalog_tools(&page, 2).await;
    let args = json!({"room": "deluxe", "guests": 2, "arrival": "2026-05-01", "breakfast": true});
    let outcome = call(&page, "book_room", args).await;
    assert_eq!(
        outcome,
        json!({"ok": true, "result": {"booked": "deluxe", "guests": 2, "breakfast": true}}),
        "{extra:?}"
    );
    let record = page.eval("window.record").await;
    assert_eq!(
        record["submits"],
        json!([{"form": "book", "agentInvoked": true, "data": [
            ["room", "deluxe"], ["guests", "2"], ["arrival", "2026-05-01"], ["email", ""], ["breakfast", "on"], ["notes", "none"]]}]),
        "one agent-invoked submission with every argument filled in and the rest untouched ({extra:?})"
    );
    assert!(record["inputs"].as_u64().unwrap_or(0) >= 4, "the page saw input events: {record}");
    until(&page, "window.record.activated.includes('book_room')").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_autosubmit_call_fills_submits_and_returns_the_respond_with_value() {
    autosubmit_returns_the_respond_with_value(&[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_autosubmit_call_through_native_webmcp_returns_the_same() {
    autosubmit_returns_the_respond_with_value(&[NATIVE_WEBMCP]).await;
}

/// A real (trusted) mouse click in the middle of the element matched by `selector`.
async fn click(page: &Page, selector: &str) {
    let center = page
        .eval(&format!(
            "(() => {{ const box = document.querySelector({}).getBoundingClientRect(); \
             return [box.left + box.width / 2, box.top + box.height / 2]; }})()",
            json!(selector)
        ))
        .await;
    let (x, y) = (center[0].as_f64().unwrap_or_default(), center[1].as_f64().unwrap_or_default());
    for kind in ["mousePressed", "mouseReleased"] {
        page.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
        )
        .await;
    }
}

async fn only_the_user_submits(extra: &[&str]) {
    let site = site().await;
    let browser = Browser::launch(extra).await;
    let page = open(&browser, &site, "execute").await;
    catalog_tools(&page, 2).await;
    // The user's own submit is not agent-invoked.
    page.eval("document.querySelector('#delete [name=reason]').value = 'typed by hand'").await;
    click(&page, "#confirm").await;
    until(&page, "window.record.submits.length === 1").await;
    assert_eq!(page.eval("window.record.submits[0].agentInvoked").await, json!(false), "{extra:?}");

    page.eval(
        "window.outcome = null; window.__toolgate__.call('delete_account', {reason: 'moving away'}) \
         .then((outcome) => { window.outcome = outcome; }); true",
    )
    .await;
    until(&page, "document.querySelector('#delete [name=reason]').value === 'moving away'").await;
    until(&page, "window.record.activated.includes('delete_account')").await;
    // Filled, the submit button focused for the user, and nothing submitted however long we wait.
    assert_eq!(page.eval("document.activeElement.id").await, json!("confirm"), "{extra:?}");
    page.eval("new Promise((resolve) => setTimeout(resolve, 500))").await;
    assert_eq!(
        page.eval("[window.record.submits.length, window.outcome]").await,
        json!([1, null]),
        "{extra:?}"
    );

    click(&page, "#confirm").await;
    let outcome = until(&page, "window.outcome").await;
    assert_eq!(
        outcome,
        json!({"ok": true, "result": {"deleted": true, "reason": "moving away"}}),
        "{extra:?}"
    );
    assert_eq!(
        page.eval("window.record.submits[1]").await,
        json!({"form": "delete", "agentInvoked": true, "data": [["reason", "moving away"]]}),
        "{extra:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_toolautosubmit_nothing_is_submitted_until_the_user_clicks() {
    only_the_user_submits(&[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_toolautosubmit_native_webmcp_also_waits_for_the_user() {
    only_the_user_submits(&[NATIVE_WEBMCP]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_arguments_leave_the_form_untouched() {
    let site = site().await;
    let browser = Browser::launch(&[]).await;
    let page = open(&browser, &site, "execute").await;
    catalog_tools(&page, 2).await;
    let before = page.eval("window.formState()").await;
    let refused = [
        (json!({"room": "penthouse"}), "/room"),
        (json!({"room": "deluxe", "guests": 9}), "/guests"),
        (json!({"room": "deluxe", "guests": 1.5}), "/guests"),
        (json!({"room": "deluxe", "arrival": "2026-02-30"}), "/arrival"),
        (json!({"room": "deluxe", "breakfast": "yes"}), "/breakfast"),
        (json!({"guests": 2}), "/room"),
        (json!({"room": "deluxe", "minibar": true}), "/minibar"),
    ];
    for (args, path) in refused {
        let outcome = call(&page, "book_room", args.clone()).await;
        assert_eq!(outcome["error"]["code"], json!("invalid_arguments"), "{args}: {outcome}");
        let paths: Vec<&str> = outcome["error"]["details"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|detail| detail["path"].as_str())
            .collect();
        assert!(paths.contains(&path), "{args} should be refused at {path}: {outcome}");
        assert_eq!(page.eval("window.formState()").await, before, "{args} changed the form");
        assert_eq!(
            page.eval("[window.record.inputs, window.record.submits.length]").await,
            json!([0, 0]),
            "{args}"
        );
    }
    // Valid JSON for the schema, but not for the control: filled, found invalid, put back.
    let outcome =
        call(&page, "book_room", json!({"room": "deluxe", "guests": 3, "email": "not an address"})).await;
    assert_eq!(outcome["error"]["code"], json!("invalid_arguments"), "{outcome}");
    assert_eq!(page.eval("window.formState()").await, before, "a constraint failure must restore the form");
    assert_eq!(page.eval("window.record.submits.length").await, json!(0));
}

/// A rule-generated tool carries the control's own `maxlength` and the rule's schema fragment
/// (a date typed as text gets `format: date` and the date hint), so the runtime refuses a
/// 130-character name and `04/01/2026` before touching the form.
#[tokio::test]
async fn rule_tools_carry_length_limits_and_schema_fragments() {
    rule_tool_limits(&[]).await;
}

/// The same with Chromium's native WebMCP, which registers the form itself.
#[tokio::test]
async fn rule_tools_carry_their_limits_under_native_webmcp_too() {
    rule_tool_limits(&[NATIVE_WEBMCP]).await;
}

async fn rule_tool_limits(extra: &[&str]) {
    const PAGE: &str = "<!doctype html><html><head><title>Add employee</title></head><body>\
        <form id=\"employee_form\" method=\"post\" action=\"/saved\"><input name=\"name\" maxlength=\"120\" required>\
        <input name=\"hired\" type=\"text\"><button>Save</button></form></body></html>";
    let app = upstream(|_| reply("text/html; charset=utf-8", PAGE)).await;
    let (gateway, _policy) = harness::gateway_with_site_tables(
        &[("forms.localhost", app.address)],
        "[[sites.site0.forms.rule]]\nselector = \"form#employee_form\"\n\
         name = \"add_employee\"\ndescription = \"Create an employee record\"\npath = \"/add\"\n\
         params = { name = \"Full name\", hired = { description = \"First working day\", format = \"date\" } }\n",
        POLICY,
    )
    .await;
    let browser = Browser::launch(extra).await;
    let page = browser.page().await;
    page.goto(&format!("http://forms.localhost:{}/add", gateway.address.port())).await;
    page.eval("window.__toolgate__.ready.then(() => true)").await;

    let tools = catalog_tools(&page, 1).await;
    let schema = &tools[0]["input_schema"]["properties"];
    assert_eq!(schema["name"]["maxLength"], json!(120), "{schema}");
    assert_eq!(schema["name"]["description"], json!("Full name"));
    assert_eq!(schema["hired"]["format"], json!("date"), "{schema}");
    let hint = schema["hired"]["description"].as_str().unwrap_or_default();
    assert!(hint.starts_with("First working day (") && hint.contains("YYYY-MM-DD"), "{hint}");

    for (args, path) in [
        (json!({"name": "x".repeat(130), "hired": "2026-04-01"}), "/name"),
        (json!({"name": "Ada", "hired": "04/01/2026"}), "/hired"),
    ] {
        let outcome = call(&page, "add_employee", args.clone()).await;
        assert_eq!(outcome["error"]["code"], json!("invalid_arguments"), "{args}: {outcome}");
        assert!(outcome.to_string().contains(path), "{args} refused at {path}: {outcome}");
    }
    assert_eq!(page.eval("document.querySelector('[name=name]').value").await, json!(""), "form untouched");
    gateway.stop().await;
}

/// A rule whose selector matches two forms on one page cannot say which one it was written for:
/// the runtime offers neither (no `add_employee_2`), and the page's other tools stay.
#[tokio::test]
async fn a_rule_matching_two_forms_on_a_page_offers_neither() {
    const PAGE: &str = "<!doctype html><html><head></head><body>\
        <form class=\"employee\"><input name=\"name\"></form><form class=\"employee\"><input name=\"name\"></form>\
        <form id=\"search\"><input name=\"q\"></form></body></html>";
    let app = upstream(|_| reply("text/html; charset=utf-8", PAGE)).await;
    let (gateway, _policy) = harness::gateway_with_site_tables(
        &[("forms.localhost", app.address)],
        "[[sites.site0.forms.rule]]\nselector = \"form.employee\"\n\
         name = \"add_employee\"\ndescription = \"Create an employee record\"\npath = \"/page\"\n\
         [[sites.site0.forms.rule]]\nselector = \"form#search\"\nname = \"search\"\ndescription = \"Find\"\n\
         path = \"/page\"\n",
        POLICY,
    )
    .await;
    for extra in [&[][..], &[NATIVE_WEBMCP][..]] {
        let browser = Browser::launch(extra).await;
        let page = browser.page().await;
        page.goto(&format!("http://forms.localhost:{}/page", gateway.address.port())).await;
        page.eval("window.__toolgate__.ready.then(() => true)").await;
        let tools = catalog_tools(&page, 1).await;
        assert_eq!(tools[0]["name"], json!("search"), "{extra:?}: {tools}");
        let names = page.eval("window.__toolgate__.catalog().tools.map((tool) => tool.name)").await;
        assert_eq!(names, json!(["search"]), "{extra:?}");
    }
    gateway.stop().await;
}
