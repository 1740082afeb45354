//! Honest form outcomes over HTTP: a submission carrying the runtime's mark is watched, and the
//! agent API says what the site answered. A form shown again with an error list is a refusal
//! with the site's message; a redirect is success with the landing page's URL and title (the
//! browser's landing request is marked by the gateway); 4xx is a refusal; a replayed or stale
//! mark is not watched; the mark never reaches the site; the audit records each answer without
//! page text. In Chromium, a page that submits its tool form with `fetch` gets the site's answer
//! from `__toolgate__.call`; the navigating half (panel, continuation, a real Django admin) is in
//! `django_admin`.

use crate::harness::{self, Seen, reply, send, upstream};
use bytes::Bytes;
use gateway::audit::event::EventKind;
use http::{Request, Response};
use http_body_util::Full;
use serde_json::{Value, json};

const HOST: &str = "hr.test";

/// Django's answer to an invalid "add employee" post, trimmed to what matters.
const REFUSED: &str = r#"<!doctype html><html><head><title>Add employee | Django site admin</title></head><body>
<form method="post" id="employee_form" novalidate><p class="errornote">Please correct the error below.</p>
<ul class="errorlist" id="id_email_error"><li>Employee with this Email already exists.</li></ul>
<input type="email" name="email" value="ada@example.com" aria-invalid="true"></form></body></html>"#;

fn site(seen: &Seen, upstream: &str) -> Response<gateway::http::body::ProxyBody> {
    let body = String::from_utf8_lossy(&seen.body);
    match (seen.method.as_str(), seen.uri.path()) {
        ("POST", "/staff/add/") if body.contains("ada%40example.com") => {
            reply("text/html; charset=utf-8", REFUSED)
        }
        ("POST", "/staff/add/") => {
            let mut response = reply("text/html", "");
            *response.status_mut() = http::StatusCode::FOUND;
            // Django answers with an absolute URL to its own address.
            let location = format!("http://{upstream}/staff/");
            response.headers_mut().insert("location", location.parse().expect("location"));
            response
        }
        ("POST", "/staff/forbidden/") => {
            let mut response = reply("application/json", r#"{"detail": "no"}"#);
            *response.status_mut() = http::StatusCode::FORBIDDEN;
            response
        }
        ("GET", "/staff/") => {
            reply("text/html", "<title>Select employee to change</title><p>The employee was added.")
        }
        _ => reply("text/html", "<title>Other</title>"),
    }
}

fn post(path: &str, cookie: &str, body: &str) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", HOST)
        .header("cookie", cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("request")
}

async fn csrf(address: std::net::SocketAddr) -> String {
    let session = send(address, harness::get(HOST, "/.toolgate/agent/session")).await;
    let session: Value = serde_json::from_slice(&session.body).expect("session");
    session["csrf"].as_str().expect("csrf").to_owned()
}

async fn outcome(address: std::net::SocketAddr, csrf: &str, call: &str) -> Value {
    let request = Request::get(format!("/.toolgate/agent/outcomes/{call}"))
        .header("host", HOST)
        .header("x-toolgate-csrf", csrf)
        .body(Full::new(Bytes::new()))
        .expect("request");
    let answer = send(address, request).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    serde_json::from_slice(&answer.body).expect("outcome")
}

#[tokio::test]
async fn the_site_answer_to_a_marked_submission_is_the_outcome() {
    let address_slot = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let slot = address_slot.clone();
    let upstream = upstream(move |seen| site(seen, slot.get().map_or("", String::as_str))).await;
    address_slot.set(upstream.address.to_string()).expect("address");
    let gateway = harness::gateway(&[(HOST, upstream.address)], "").await;
    let address = gateway.address;
    let csrf = csrf(address).await;

    // Refused: the same form again, with Django's error list.
    let refused = send(
        address,
        post(
            "/staff/add/",
            "sessionid=s1; toolgate-submit=call-1:POST:/staff/add/",
            "email=ada%40example.com",
        ),
    )
    .await;
    assert_eq!(refused.status, 200);
    assert!(refused.text().contains("already exists"), "the page itself passes on");
    let cleared: Vec<&str> =
        refused.headers.get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).collect();
    assert!(
        cleared.iter().any(|cookie| cookie.starts_with("toolgate-submit=;") && cookie.contains("Max-Age=0")),
        "{cleared:?}"
    );
    let answer = outcome(address, &csrf, "call-1").await;
    assert_eq!(answer["observed"], json!(true), "{answer}");
    assert_eq!(answer["ok"], json!(false));
    assert_eq!(answer["error"]["code"], "rejected_by_site");
    assert_eq!(
        answer["error"]["messages"],
        json!(["Employee with this Email already exists.", "the field email is marked invalid"])
    );
    let forwarded = upstream.requests();
    let cookie = forwarded[0].headers.get("cookie").and_then(|value| value.to_str().ok());
    assert_eq!(cookie, Some("sessionid=s1"), "the mark never reaches the site");

    // A replayed mark is not watched again: the answer stays the first one.
    let replay = send(
        address,
        post("/staff/add/", "toolgate-submit=call-1:POST:/staff/add/", "email=grace%40example.com"),
    )
    .await;
    assert_eq!(replay.status, 302);
    assert!(replay.headers.get("set-cookie").is_none(), "a replayed mark is neither consumed nor followed");
    assert_eq!(outcome(address, &csrf, "call-1").await["error"]["code"], "rejected_by_site");

    // Accepted: post/redirect/get. The redirect points at the public host, and the browser's
    // landing request (marked by the gateway) adds the landing page's title.
    let accepted = send(
        address,
        post("/staff/add/", "toolgate-submit=call-2:POST:/staff/add/", "email=grace%40example.com"),
    )
    .await;
    assert_eq!(accepted.status, 302);
    assert_eq!(accepted.header("location"), Some("http://hr.test/staff/"));
    let landing = accepted
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|cookie| cookie.starts_with("toolgate-landing=call-2:GET:/staff/;"))
        .expect("the landing request is marked")
        .split(';')
        .next()
        .expect("pair")
        .to_owned();
    let mut follow = harness::get(HOST, "/staff/");
    follow.headers_mut().insert("cookie", landing.parse().expect("cookie"));
    let followed = send(address, follow).await;
    assert_eq!(followed.status, 200);
    let answer = outcome(address, &csrf, "call-2").await;
    assert_eq!(
        answer,
        json!({"observed": true, "ok": true, "result": {"submitted": true, "status": 302,
               "url": "http://hr.test/staff/", "title": "Select employee to change"}})
    );

    // A 4xx is a refusal, page or not; a mark naming another path is left alone.
    send(address, post("/staff/forbidden/", "toolgate-submit=call-3:POST:/staff/forbidden/", "x=1")).await;
    assert_eq!(outcome(address, &csrf, "call-3").await["error"]["code"], "rejected_by_site");
    let elsewhere =
        send(address, post("/staff/other/", "toolgate-submit=call-4:POST:/staff/add/", "x=1")).await;
    assert!(elsewhere.headers.get("set-cookie").is_none());
    assert_eq!(outcome(address, &csrf, "call-4").await, json!({"observed": false}));

    // Each answer is audited once, without page text.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let page =
        gateway::audit::query::find(gateway.state.audit.store(), &Default::default(), 0, 100).expect("audit");
    let mut decisions: Vec<(String, String)> = page
        .records
        .iter()
        .filter(|record| record.event.kind == Some(EventKind::FormOutcome))
        .map(|record| {
            let text = serde_json::to_string(&record.event).expect("json");
            assert!(!text.contains("already exists") && !text.contains("Select employee"), "{text}");
            (
                record.event.decision.clone().unwrap_or_default(),
                record.event.explanation.clone().unwrap_or_default()["call_id"].to_string(),
            )
        })
        .collect();
    decisions.sort();
    assert_eq!(
        decisions,
        [
            ("accepted".to_owned(), "\"call-2\"".to_owned()),
            ("rejected_by_site".to_owned(), "\"call-1\"".to_owned()),
            ("rejected_by_site".to_owned(), "\"call-3\"".to_owned()),
        ]
    );
    gateway.stop().await;
}

#[tokio::test]
async fn outcomes_need_the_csrf_token_and_a_valid_call_id() {
    let upstream = upstream(|seen| site(seen, "")).await;
    let gateway = harness::gateway(&[(HOST, upstream.address)], "").await;
    let request = Request::get("/.toolgate/agent/outcomes/call-1")
        .header("host", HOST)
        .body(Full::new(Bytes::new()))
        .expect("request");
    assert_eq!(send(gateway.address, request).await.status, 403);
    let csrf = csrf(gateway.address).await;
    let bad = Request::get("/.toolgate/agent/outcomes/..%2Fx")
        .header("host", HOST)
        .header("x-toolgate-csrf", &csrf)
        .body(Full::new(Bytes::new()))
        .expect("request");
    assert_eq!(send(gateway.address, bad).await.status, 404);
    gateway.stop().await;
}

/// A page that submits its tool form itself (`preventDefault`, `fetch`, `respondWith`), in
/// Chromium through the gateway: the site's refusal comes back from `__toolgate__.call` as
/// `rejected_by_site` with the site's message, whatever the page's own value said; an accepted
/// submission keeps the page's value.
#[tokio::test]
async fn a_page_that_submits_with_fetch_gets_the_sites_answer() {
    const PAGE: &str = r#"<!doctype html><html><head><title>Contacts</title></head><body>
<form toolname="add_contact" tooldescription="Add a contact" toolautosubmit action="/contacts" method="post">
  <input name="email" type="email" required><button>Add</button>
</form>
<script>
document.querySelector('form').addEventListener('submit', (event) => {
  event.preventDefault();
  const sent = fetch('/contacts', { method: 'POST', body: new FormData(event.target) })
    .then((response) => ({ saved: response.ok, status: response.status }));
  if (event.agentInvoked) { event.respondWith(sent); }
});
</script></body></html>"#;
    const REFUSED: &str = r#"<form action="/contacts" method="post"><ul class="errorlist"><li>Contact with this email exists.</li></ul>
<input name="email"></form>"#;
    let app = upstream(|seen: &Seen| match seen.method.as_str() {
        "POST" if String::from_utf8_lossy(&seen.body).contains("taken@x.example") => {
            reply("text/html", REFUSED)
        }
        "POST" => {
            let mut response = reply("application/json", r#"{"id": 7}"#);
            *response.status_mut() = http::StatusCode::CREATED;
            response
        }
        _ => reply("text/html; charset=utf-8", PAGE),
    })
    .await;
    let policy = "[defaults]\nunknown_tools = \"allow\"\nunknown_contexts = \"allow\"\n";
    let (gateway, _policy) =
        harness::gateway_with_policy(&[("contacts.localhost", app.address)], "", policy).await;
    let browser = crate::cdp::Browser::launch(&[]).await;
    let page = browser.page().await;
    page.goto(&format!("http://contacts.localhost:{}/", gateway.address.port())).await;
    crate::runtime::until(
        &page,
        "window.__toolgate__.ready.then(() => window.__toolgate__.catalog().tools.length === 1)",
    )
    .await;
    let refused = page.eval("window.__toolgate__.call('add_contact', {email: 'taken@x.example'})").await;
    assert_eq!(refused["ok"], json!(false), "{refused}");
    assert_eq!(refused["error"]["code"], "rejected_by_site", "{refused}");
    assert_eq!(
        refused["error"]["details"],
        json!([{"path": "", "message": "Contact with this email exists."}])
    );
    let accepted = page.eval("window.__toolgate__.call('add_contact', {email: 'new@x.example'})").await;
    assert_eq!(
        accepted,
        json!({"ok": true, "result": {"saved": true, "status": 201}}),
        "the page's own value"
    );
    let cookies = app.requests().iter().filter_map(|seen| seen.headers.get("cookie").cloned()).count();
    assert_eq!(cookies, 0, "the mark never reached the site");
    gateway.stop().await;
}
