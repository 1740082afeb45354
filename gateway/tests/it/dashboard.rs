//! The policy administration dashboard in headless Chromium, through `toolgate demo` (its
//! dashboard is `admin.localhost`): users sign in at the development provider by pressing their
//! button, each in a browser of their own.
//!
//! Non-admins get 403 and no admin data; an admin's invalid edit is refused with the problem
//! shown and a valid one changes what a user's page shows on the next load; the inventory's
//! toggle writes the expected rule; an approver approves a waiting agent call that then
//! completes; the audit search finds the records just made; every form refuses a missing or
//! wrong CSRF token; and every page renders without console errors or overflowing tables at
//! 1280 and 390 px (screenshots are kept under `target/test-artifacts/dashboard/`).

use crate::cdp::{Browser, Page};
use crate::panel::{panel, panel_until};
use crate::runtime::until;
use gateway::app::shutdown::Shutdown;
use gateway::demo::Demo;
use serde_json::{Value, json};
use std::path::PathBuf;

/// A demo user signed in, in a browser of their own.
struct SignedIn {
    _browser: Browser,
    page: Page,
}

/// Opens `url` as `user`: the gateway sends the browser to the development provider, where the
/// user's button signs them in and the redirects lead back to `url`.
async fn sign_in(user: &str, url: &str) -> SignedIn {
    signed_in(user, url, true).await
}

/// `sign_in`, and with `fetch_from_pages` the dashboard's CSP (no `connect-src`) is bypassed so
/// the test can call the dashboard from its pages with `fetch`; without it the page runs under
/// the real CSP (a violation is a console error).
async fn signed_in(user: &str, url: &str, fetch_from_pages: bool) -> SignedIn {
    let browser = Browser::launch(&[]).await;
    let page = browser.page().await;
    if fetch_from_pages {
        page.call("Page.setBypassCSP", json!({"enabled": true})).await;
    }
    page.goto(url).await;
    page.navigate_by(&format!("document.querySelector('button[name=user][value={user}]').click()")).await;
    let landed = page.eval("location.href").await;
    assert_eq!(landed, json!(url), "{user} is back where they started");
    SignedIn { _browser: browser, page }
}

fn admin(demo: &Demo, path: &str) -> String {
    format!("http://admin.localhost:{}{path}", demo.port)
}

async fn text(page: &Page) -> String {
    page.eval("document.body.innerText").await.as_str().unwrap_or_default().to_owned()
}

/// The `<tool>` names in the HTML the gateway sends for the current page.
async fn tools_received(page: &Page) -> Value {
    page.eval(
        "fetch(location.href).then((r) => r.text()).then((html) => \
         [...new DOMParser().parseFromString(html, 'text/html').querySelectorAll('tool')].map((t) => t.getAttribute('name')))",
    )
    .await
}

/// Posts a form from the dashboard page the way a forged request would: `fields` as given.
async fn post(page: &Page, path: &str, fields: Value) -> u64 {
    page.eval(&format!(
        "fetch({path}, {{method: 'POST', body: new URLSearchParams({fields}), redirect: 'manual'}}).then((r) => r.status)",
        path = json!(path)
    ))
    .await
    .as_u64()
    .unwrap_or(0)
}

async fn policy_in_force(page: &Page) -> String {
    page.eval("fetch('/policies/export').then((r) => r.text())").await.as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn people_outside_the_dashboard_groups_get_403_and_no_admin_data() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    for user in ["dave", "alice"] {
        let signed_in = sign_in(user, &admin(&demo, "/")).await;
        let page = &signed_in.page;
        let body = text(page).await;
        assert!(body.contains("Access denied"), "{user}: {body}");
        assert!(
            !body.contains("engineering-tasks") && !body.contains("Policies"),
            "{user} sees no admin data: {body}"
        );
        for path in ["/policies", "/policies/export", "/audit/export", "/inventory", "/approvals"] {
            let status = page.eval(&format!("fetch({}).then((r) => r.status)", json!(path))).await;
            assert_eq!(status, json!(403), "{user} {path}");
        }
        // The 403 page lets someone on a shared machine sign out (of the demo provider too) and
        // sign in as someone else.
        page.navigate_by("document.querySelector('form.logout button').click()").await;
        let signed_out = text(page).await;
        assert!(signed_out.contains("signed out of every site"), "{user}: {signed_out}");
        page.goto(&admin(&demo, "/")).await;
        let url = page.eval("location.href").await;
        assert!(
            !url.as_str().unwrap_or_default().starts_with(&admin(&demo, "/")),
            "{user} still signed in: {url}"
        );
    }
    // An approver sees the approvals queue but not the policy.
    let bob = sign_in("bob", &admin(&demo, "/approvals")).await;
    let status = bob.page.eval("fetch('/policies/export').then((r) => r.status)").await;
    assert_eq!(status, json!(403), "approvers do not read the policy");
    demo.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_admin_edits_the_policy_and_a_users_next_page_load_follows_it() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    let dave = sign_in("dave", &format!("http://tasks.localhost:{}/", demo.port)).await;
    until(&dave.page, "document.body.dataset.appReady === 'tasks'").await;
    assert_eq!(tools_received(&dave.page).await, json!([]), "dave sees no tools at first");

    let erin = sign_in("erin", &admin(&demo, "/policies")).await;
    let page = &erin.page;
    let original = policy_in_force(page).await;
    assert!(original.contains("engineering-tasks"), "the demo policy is in force");

    // An invalid edit is refused with the problem (line and key) shown, and changes nothing.
    let broken =
        format!("{original}\n[[rule]]\nid = \"broken\"\nsites = [\"nowhere\"]\ntools.allow = [\"x\"]\n");
    page.eval(&format!("document.querySelector('textarea[name=policy]').value = {}", json!(broken))).await;
    page.navigate_by("document.querySelector('button[name=action][value=save]').click()").await;
    let body = text(page).await;
    assert!(body.contains("nowhere") && body.contains("sites"), "the problem is shown: {body}");
    assert!(page.eval("document.querySelector('[role=alert]') !== null").await == json!(true));
    assert_eq!(policy_in_force(page).await, original, "nothing changed");

    // A valid edit takes effect for dave's next page load.
    let edited = format!(
        "{original}\n[[rule]]\nid = \"dave-tasks\"\nsites = [\"tasks\"]\nusers = [\"dave\"]\ntools.allow = [\"add_task\"]\n"
    );
    page.eval(&format!("document.querySelector('textarea[name=policy]').value = {}", json!(edited))).await;
    page.eval("document.querySelector('input[name=comment]').value = 'dave may add tasks'").await;
    page.navigate_by("document.querySelector('button[name=action][value=preview]').click()").await;
    assert!(text(page).await.contains("+ id = \"dave-tasks\""), "the diff shows the new rule");
    page.navigate_by("document.querySelector('button[name=action][value=save]').click()").await;
    assert!(page.eval("location.search").await.as_str().unwrap_or("").contains("saved=2"), "version 2 saved");
    assert!(policy_in_force(page).await.contains("dave-tasks"));
    dave.page.goto(&format!("http://tasks.localhost:{}/", demo.port)).await;
    until(&dave.page, "document.body.dataset.appReady === 'tasks'").await;
    assert_eq!(tools_received(&dave.page).await, json!(["add_task"]), "dave's page follows the new policy");

    // The inventory now knows add_task (dave's page reported it); its toggle writes a rule.
    until(
        &dave.page,
        "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length === 1)",
    )
    .await;
    page.goto(&admin(&demo, "/inventory")).await;
    let toggle = "[...document.querySelectorAll('form[action=\"/inventory/rule\"]')].find((form) => \
                  form.querySelector('input[name=site]').value === 'tasks' && form.querySelector('input[name=name]').value === 'add_task')";
    until(page, &format!("{toggle} !== undefined")).await;
    page.navigate_by(&format!("{toggle}.querySelector('button[name=effect][value=deny]').click()")).await;
    let policy = policy_in_force(page).await;
    assert!(policy.contains("id = \"dashboard-tasks-tool-add_task-everyone-"), "{policy}");
    assert!(
        policy.contains("tools.deny = [\"add_task\"]") || policy.contains("deny = [\"add_task\"]"),
        "{policy}"
    );
    dave.page.goto(&format!("http://tasks.localhost:{}/", demo.port)).await;
    assert_eq!(tools_received(&dave.page).await, json!([]), "deny beats dave's allow");

    // History, rollback and the audit search see all of it.
    page.goto(&admin(&demo, "/policies")).await;
    let history = text(page).await;
    assert!(history.contains("dave may add tasks") && history.contains("erin"), "{history}");
    page.goto(&admin(&demo, "/audit?kind=policy_change")).await;
    let audit = text(page).await;
    assert!(audit.contains("policy:v2") && audit.contains("policy:v3"), "{audit}");
    page.goto(&admin(&demo, "/audit?kind=policy_rejected&user=erin")).await;
    assert!(text(page).await.contains("policy_rejected"), "the refused edit is audited too");
    page.goto(&admin(&demo, "/permissions?user=dave&groups=&site=tasks")).await;
    let permissions = text(page).await;
    assert!(
        permissions.contains("add_task") && permissions.contains("dashboard-tasks-tool-add_task-everyone-"),
        "{permissions}"
    );
    demo.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approver_approves_a_waiting_call_in_the_dashboard_and_it_completes() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    let alice = sign_in("alice", &format!("http://expenses.localhost:{}/", demo.port)).await;
    let page = &alice.page;
    until(page, "document.body.dataset.appReady === 'expenses'").await;
    until(page, "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length === 1)")
        .await;
    panel(page, "root.querySelector('[data-action=open]').click()").await;
    panel_until(page, "root.querySelector('.root').dataset.open === 'true'").await;
    panel(page, "root.querySelector('[data-field=message]').value = 'Submit an expense of 4200 EUR on 2026-11-20 for conference tickets'").await;
    panel(page, "root.querySelector('[data-action=send]').click()").await;
    let id = panel_until(page, "root.querySelector('[data-approval-id]') && root.querySelector('[data-approval-id]').dataset.approvalId").await;
    let id = id.as_str().expect("approval id").to_owned();
    let card = format!("root.querySelector('[data-approval-id=\"{id}\"]')");
    assert_eq!(panel(page, &format!("{card}.dataset.approvalState")).await, json!("pending"));

    let bob = sign_in("bob", &admin(&demo, "/approvals")).await;
    let queue = text(&bob.page).await;
    assert!(queue.contains("submit_expense") && queue.contains("alice") && queue.contains("4200"), "{queue}");
    let form = format!("document.querySelector('form[action=\"/approvals/{id}\"]')");
    bob.page
        .eval(&format!("{form}.querySelector('input[name=comment]').value = 'conference approved'"))
        .await;
    bob.page
        .navigate_by(&format!("{form}.querySelector('button[name=decision][value=approve]').click()"))
        .await;
    assert!(text(&bob.page).await.contains("Approved"), "the decision is confirmed");

    // The waiting turn goes on: the form is filled, the user submits it, the claim is stored once.
    panel_until(page, &format!("{card}.dataset.approvalState === 'approved'")).await;
    until(page, "document.querySelector('#expense [name=description]').value !== ''").await;
    // The panel tells the user to press the page's button, and the button is pointed at.
    let waiting = panel_until(page, "(() => { const line = root.querySelector('[data-status=awaiting_submit]'); return line && line.textContent; })()").await;
    assert!(
        waiting.as_str().is_some_and(|text| text.contains("press its") && text.contains("button to send it")),
        "{waiting}"
    );
    let outlined = page.eval("document.querySelector('#expense button').style.outline").await;
    assert!(
        outlined.as_str().is_some_and(|outline| outline.contains("solid")),
        "the submit button is outlined: {outlined}"
    );
    // The submission goes into a frame, so the page (and the panel's turn) stays.
    page.eval("(() => { const frame = document.createElement('iframe'); frame.name = 'result'; document.body.append(frame); \
               document.querySelector('#expense').target = 'result'; document.querySelector('#expense button').click(); return true; })()").await;
    let state = panel_until(page, "['done', 'error', 'stopped', 'lost'].includes(root.querySelector('.root').dataset.turn) && root.querySelector('.root').dataset.turn").await;
    assert_eq!(state, json!("done"));
    assert_eq!(
        page.eval("document.querySelector('#expense button').style.outline").await,
        json!(""),
        "the page's outline is back"
    );
    let claims = until(page, "fetch('/').then((r) => r.text()).then((html) => { const items = [...new DOMParser().parseFromString(html, 'text/html').querySelectorAll('#claims li')].map((i) => i.textContent); return items.length > 0 && items; })").await;
    assert_eq!(claims, json!(["4200 EUR on 2026-11-20: conference tickets"]), "stored exactly once");

    // The decision is in the audit log, found by the search.
    let erin = sign_in("erin", &admin(&demo, "/audit?kind=approval_decision&user=bob")).await;
    let audit = text(&erin.page).await;
    assert!(audit.contains(&format!("approval:{id}")) && audit.contains("approved"), "{audit}");
    demo.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_dashboard_form_refuses_a_missing_or_wrong_csrf_token() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    let erin = sign_in("erin", &admin(&demo, "/policies")).await;
    let page = &erin.page;
    let token =
        page.eval("document.querySelector('form[action=\"/policies\"] input[name=csrf]').value").await;
    let token = token.as_str().expect("the page carries a token").to_owned();
    let original = policy_in_force(page).await;
    let forms: [(&str, Value); 5] = [
        ("/policies", json!({"policy": "", "base_version": "1", "action": "save"})),
        ("/policies/rollback", json!({"version": "1"})),
        (
            "/inventory/rule",
            json!({"site": "tasks", "kind": "tool", "name": "add_task", "group": "", "effect": "allow"}),
        ),
        ("/approvals/some-id", json!({"decision": "approve"})),
        ("/audit/verify", json!({})),
    ];
    for (path, fields) in forms {
        assert_eq!(post(page, path, fields.clone()).await, 403, "{path} without a token");
        let mut wrong = fields.clone();
        wrong["csrf"] = json!("AAAA");
        assert_eq!(post(page, path, wrong).await, 403, "{path} with a wrong token");
        // The sign-out token of the same session (any site page can read its own) is not one.
        let logout = page.eval("fetch('/.toolgate/logout').then((r) => r.text()).then((html) => new DOMParser().parseFromString(html, 'text/html').querySelector('input[name=csrf]').value)").await;
        let mut other = fields.clone();
        other["csrf"] = logout;
        assert_eq!(post(page, path, other).await, 403, "{path} with another purpose's token");
    }
    assert_eq!(policy_in_force(page).await, original, "nothing changed");
    let mut good = json!({"csrf": token});
    good["version"] = json!("1");
    assert_eq!(post(page, "/audit/verify", good).await, 0, "with the token: a redirect (opaque to fetch)");
    demo.gateway.stop().await;
}

/// Where screenshots go (test artifacts, not committed).
fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"), PathBuf::from);
    target.join("test-artifacts/dashboard")
}

/// Page-level horizontal overflow, and tables that stick out of the viewport without a
/// scrolling box of their own.
const LAYOUT_PROBLEMS: &str = "(() => {
    const problems = [];
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width + 1) {
        problems.push('page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + width);
    }
    for (const table of document.querySelectorAll('table')) {
        let box = table.parentElement;
        while (box && getComputedStyle(box).overflowX === 'visible') { box = box.parentElement; }
        const right = (box || table).getBoundingClientRect().right;
        if (right > width + 1) { problems.push('table sticks out: ' + (table.caption ? table.caption.textContent : table.className)); }
    }
    return problems;
})()";

#[tokio::test(flavor = "multi_thread")]
async fn every_page_renders_cleanly_at_desktop_and_phone_widths() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    // Something in every table: a page that reported tools, a policy version, audit records.
    let alice = sign_in("alice", &format!("http://tasks.localhost:{}/", demo.port)).await;
    until(
        &alice.page,
        "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length > 0)",
    )
    .await;
    let erin = signed_in("erin", &admin(&demo, "/"), false).await;
    let page = &erin.page;
    let pages = [
        ("overview", "/"),
        ("policies", "/policies"),
        ("version", "/policies/versions/1"),
        ("inventory", "/inventory"),
        ("permissions", "/permissions?user=alice&groups=engineering&site=tasks"),
        ("approvals", "/approvals"),
        ("audit", "/audit"),
        ("record", "/audit/records/1"),
    ];
    for (width, label) in [(1280, "desktop"), (390, "phone")] {
        page.set_viewport(width, 900).await;
        for (name, path) in pages {
            page.goto(&admin(&demo, path)).await;
            let problems = page.eval(LAYOUT_PROBLEMS).await;
            assert_eq!(problems, json!([]), "{name} at {width} px");
            page.screenshot(&artifacts().join(format!("{name}-{label}.png"))).await;
        }
    }
    assert_eq!(page.console_errors(), Vec::<String>::new(), "no console errors (a CSP violation is one)");
    demo.gateway.stop().await;
}

/// A call whose only eligible approver is its requester (bob, the demo's only finance approver,
/// filing a big expense himself) does not wait until it expires: an administrator sees it and
/// decides it, auditors see it read-only, and bob sees why he cannot.
#[tokio::test(flavor = "multi_thread")]
async fn administrators_decide_any_group_approval_and_auditors_read_the_queue() {
    use gateway::approvals::{Approver, Binding, args_digest, canonical_args};
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    let canonical = canonical_args(&json!({"amount": 4200, "currency": "EUR"}));
    let binding = Binding {
        user: "bob".into(),
        session: "digest".into(),
        site: "expenses".into(),
        tool: "submit_expense".into(),
        args_digest: args_digest(&canonical),
        call_id: "call-bob-1".into(),
        expires_at: gateway::support::clock::unix_now() + 300,
    };
    let approver = Approver::Group("finance-approvers".into());
    let reason = "rule big-expenses, when args.amount > 1000";
    let now = gateway::support::clock::unix_now();
    let record = demo
        .gateway
        .state
        .approvals
        .request(binding, canonical, approver, reason, None, now)
        .await
        .expect("asked");
    let form = format!("form[action=\"/approvals/{}\"]", record.id);
    let has_form = format!("Boolean(document.querySelector('{form}'))");

    let bob = sign_in("bob", &admin(&demo, "/approvals")).await;
    let queue = text(&bob.page).await;
    assert!(queue.contains("You asked for this call"), "{queue}");
    assert_eq!(bob.page.eval(&has_form).await, json!(false), "no form for his own call");

    let carol = sign_in("carol", &admin(&demo, "/approvals")).await;
    let queue = text(&carol.page).await;
    assert!(queue.contains("submit_expense") && queue.contains("Auditors see the queue"), "{queue}");
    assert!(queue.contains(reason), "the rule and its condition are named: {queue}");
    assert_eq!(carol.page.eval(&has_form).await, json!(false), "auditors decide nothing");

    let erin = sign_in("erin", &admin(&demo, "/approvals")).await;
    assert!(text(&erin.page).await.contains("submit_expense"));
    erin.page
        .navigate_by(&format!(
            "document.querySelector('{form}').querySelector('button[name=decision][value=approve]').click()"
        ))
        .await;
    assert!(text(&erin.page).await.contains("Approved"), "the administrator decided");
    let decided = demo.gateway.state.approvals.get(&record.id).await.expect("store").expect("record");
    assert!(
        matches!(decided.state, gateway::approvals::ApprovalState::Approved { ref by, .. } if by == "erin")
    );
    demo.gateway.stop().await;
}

/// Asks the panel on `page` for a large expense and returns the new approval card's notice
/// (`null` when it has none) once the card is there.
async fn big_expense_notice(page: &Page) -> Value {
    let before = panel(page, "root.querySelectorAll('[data-approval-id]').length").await;
    panel(page, "root.querySelector('[data-field=message]').value = 'Submit an expense of 4200 EUR on 2026-11-20 for conference tickets'").await;
    panel(page, "root.querySelector('[data-action=send]').click()").await;
    let count = format!("root.querySelectorAll('[data-approval-id]').length > {before}");
    panel_until(page, &count).await;
    let notice = panel(
        page,
        "(() => { const cards = root.querySelectorAll('[data-approval-id]'); const notice = cards[cards.length - 1].querySelector('[data-field=notice]'); return notice && notice.textContent; })()",
    )
    .await;
    panel(page, "root.querySelector('[data-action=stop]').click()").await;
    panel_until(page, "root.querySelector('.root').dataset.turn !== 'running'").await;
    notice
}

/// bob is the demo's only finance approver: his own large expense can be decided only by another
/// approver or an administrator, so while none is signed in the card says so at once; once erin
/// (administrator) is signed in, it does not.
#[tokio::test(flavor = "multi_thread")]
async fn a_card_says_at_once_when_nobody_else_may_decide_it() {
    let demo = gateway::demo::start(0, None, Shutdown::new()).await.expect("demo starts");
    let bob = sign_in("bob", &format!("http://expenses.localhost:{}/", demo.port)).await;
    let page = &bob.page;
    until(page, "document.body.dataset.appReady === 'expenses'").await;
    until(page, "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length === 1)")
        .await;
    panel(page, "root.querySelector('[data-action=open]').click()").await;
    panel_until(page, "root.querySelector('.root').dataset.open === 'true'").await;

    let alone = big_expense_notice(page).await;
    let alone = alone.as_str().unwrap_or_default();
    assert!(
        alone.starts_with("You are the only member of finance-approvers signed in")
            && alone.contains("no administrator is signed in"),
        "{alone}"
    );

    let _erin = sign_in("erin", &admin(&demo, "/approvals")).await;
    assert_eq!(big_expense_notice(page).await, Value::Null, "an administrator could decide it now");
    demo.gateway.stop().await;
}
