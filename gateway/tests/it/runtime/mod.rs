//! The discovery runtime in real headless Chromium through a real gateway: every dialect's
//! fixture page (VOIX, WebMCP `document.modelContext` and `navigator.modelContext`, native WebMCP
//! wrapped or doubled, CI4A components) becomes the expected catalog; calls reach the page's
//! handlers and bring back their results; invalid arguments, disabled and policy-denied tools are
//! refused before the page runs anything; names a real Vue build binds reach the agent only as
//! the gateway decides them; the script reaches the browser in the content coding it prefers.

use crate::cdp::{Browser, Page};
use crate::harness::{self, reply, upstream};
use gateway::app::Running;
use serde_json::{Value, json};

pub(super) const VOIX: &str = include_str!("../fixtures/runtime/voix.html");
pub(super) const WEBMCP: &str = include_str!("../fixtures/runtime/webmcp.html");
pub(super) const NATIVE: &str = include_str!("../fixtures/runtime/native.html");
pub(super) const CI4A: &str = include_str!("../fixtures/runtime/ci4a.html");
pub(super) const KANBAN: &str = include_str!("../fixtures/runtime/kanban.html");
pub(super) const ADAPTER: &str = include_str!("../../../../injector/runtime/examples/ci4a-adapter.js");

/// Everything is allowed except the secrets, so a test sees both outcomes of the round trip.
pub(super) const POLICY: &str = r#"
[defaults]
unknown_tools = "allow"
unknown_contexts = "allow"

[[rule]]
id = "no-secrets"
tools.deny = ["secret_*", "*.secret_*"]
contexts.deny = ["secret_*", "vault.*"]
"#;

/// The gateway in front of the fixture pages, at `http://shop.localhost:PORT`.
pub(super) struct Shop {
    gateway: Running,
    _policy: tempfile::TempDir,
    base: String,
}

pub(super) async fn shop() -> Shop {
    shop_with("").await
}

/// `site_settings` go into the site's `[sites.site0]` table.
pub(super) async fn shop_with(site_settings: &str) -> Shop {
    shop_configured(site_settings, "").await
}

/// `site_settings` go into the site's `[sites.site0]` table, `extra` (an `[llm]` section, say)
/// into the top of the configuration.
pub(super) async fn shop_configured(site_settings: &str, extra: &str) -> Shop {
    let app = upstream(|seen| match seen.uri.path() {
        "/ci4a-adapter.js" => reply("text/javascript", ADAPTER),
        "/vue.global.prod.js" => reply("text/javascript", frameworks::vue_build()),
        path => {
            let page = match path {
                "/voix" => VOIX,
                "/webmcp" => WEBMCP,
                "/native" => NATIVE,
                "/ci4a" => CI4A,
                "/kanban" => KANBAN,
                _ => "<!doctype html><html><head></head><body>empty</body></html>",
            };
            reply("text/html; charset=utf-8", page)
        }
    })
    .await;
    let directory = tempfile::tempdir().expect("policy dir");
    let policy_file = directory.path().join("policy.toml");
    std::fs::write(&policy_file, POLICY).expect("write policy");
    let text = harness::config_text(&[("shop.localhost", app.address)], extra)
        .replace("[sites.site0]\n", &format!("[sites.site0]\n{site_settings}"));
    let text = format!("{text}[policy]\nfile = {:?}\n", policy_file.display().to_string());
    let gateway = harness::gateway_from_text(&text).await;
    let base = format!("http://shop.localhost:{}", gateway.address.port());
    Shop { gateway, _policy: directory, base }
}

/// Opens `path` and waits for the runtime's first round trip with the gateway.
pub(super) async fn open(browser: &Browser, shop: &Shop, path: &str) -> Page {
    let page = browser.page().await;
    page.goto(&format!("{}{path}", shop.base)).await;
    page.eval("window.__toolgate__.ready.then(() => true)").await;
    page
}

/// Polls the JavaScript `condition` until it is truthy (at most 5 s) and returns its value.
pub(super) async fn until(page: &Page, condition: &str) -> Value {
    let script = format!(
        "(async () => {{ const deadline = Date.now() + 5000; for (;;) {{ const value = await ({condition}); \
         if (value) {{ return value; }} if (Date.now() > deadline) {{ throw new Error('still false: ' + {quoted}); }} \
         await new Promise((resolve) => setTimeout(resolve, 20)); }} }})()",
        quoted = json!(condition)
    );
    page.eval(&script).await
}

pub(super) fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|items| items.iter().filter_map(|item| item["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// What `page.eval` gives for `undefined`.
pub(super) const ABSENT: Value = Value::Null;

pub(super) fn hints(read_only: bool, consequential: bool, untrusted_content: bool) -> Value {
    json!({"read_only": read_only, "consequential": consequential, "untrusted_content": untrusted_content})
}

pub(super) fn plain() -> Value {
    hints(false, false, false)
}

mod ci4a;
mod delivery;
mod frameworks;
mod native;
mod parity;
mod policy;
mod voix;
mod webmcp;
