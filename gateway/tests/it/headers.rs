//! Headers crossing the gateway: hop-by-hop headers are stripped both ways (including those
//! named in `Connection`), spoofed forwarding headers never reach the upstream, and the
//! gateway's own `X-Forwarded-*` tell the truth.

use crate::harness::{self, reply, send, upstream};
use bytes::Bytes;
use http::Request;
use http_body_util::Full;

#[tokio::test]
async fn hop_by_hop_headers_are_stripped_in_both_directions() {
    let app = upstream(|_| {
        let mut response = reply("text/plain", "ok");
        let headers = response.headers_mut();
        headers.insert("connection", "x-upstream-hop".parse().expect("value"));
        headers.insert("x-upstream-hop", "must not reach the client".parse().expect("value"));
        headers.insert("keep-alive", "timeout=99".parse().expect("value"));
        headers.insert("proxy-authenticate", "Basic".parse().expect("value"));
        headers.insert("x-upstream-kept", "yes".parse().expect("value"));
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let request = Request::get("/")
        .header("host", "app.test")
        .header("connection", "keep-alive, X-Client-Hop")
        .header("x-client-hop", "must not reach the upstream")
        .header("keep-alive", "timeout=5")
        .header("te", "trailers, deflate")
        .header("proxy-authorization", "Basic c2VjcmV0")
        .header("proxy-connection", "keep-alive")
        .header("x-client-kept", "yes")
        .body(Full::new(Bytes::new()))
        .expect("request");
    let answer = send(gateway.address, request).await;

    let seen = &app.requests()[0].headers;
    for name in ["x-client-hop", "keep-alive", "te", "proxy-authorization", "proxy-connection"] {
        assert!(seen.get(name).is_none(), "{name} reached the upstream: {seen:?}");
    }
    assert_eq!(seen["x-client-kept"], "yes");
    for name in ["x-upstream-hop", "keep-alive", "proxy-authenticate"] {
        assert!(answer.headers.get(name).is_none(), "{name} reached the client: {:?}", answer.headers);
    }
    assert_eq!(answer.header("x-upstream-kept"), Some("yes"));
    gateway.stop().await;
}

#[tokio::test]
async fn spoofed_forwarding_headers_are_replaced() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let request = Request::get("/")
        .header("host", "app.test")
        .header("x-forwarded-for", "203.0.113.7")
        .header("X-Forwarded-Proto", "https")
        .header("x-forwarded-host", "evil.example")
        .header("forwarded", "for=203.0.113.7;proto=https")
        .header("x-real-ip", "203.0.113.7")
        .body(Full::new(Bytes::new()))
        .expect("request");
    send(gateway.address, request).await;
    let seen = &app.requests()[0].headers;
    assert_eq!(seen.get_all("x-forwarded-for").iter().collect::<Vec<_>>(), ["127.0.0.1"]);
    assert_eq!(seen["x-forwarded-proto"], "http");
    assert_eq!(seen["x-forwarded-host"], "app.test");
    assert!(seen.get("forwarded").is_none() && seen.get("x-real-ip").is_none());
    assert_eq!(seen["host"], app.address.to_string(), "the upstream sees its own authority by default");
    assert!(seen.get("x-request-id").is_some());
    gateway.stop().await;
}

#[tokio::test]
async fn trusted_proxies_extend_the_chain() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "trusted_proxies = [\"127.0.0.0/8\"]").await;
    let request = Request::get("/")
        .header("host", "app.test")
        .header("x-forwarded-for", "198.51.100.1")
        .header("x-forwarded-proto", "https")
        .body(Full::new(Bytes::new()))
        .expect("request");
    send(gateway.address, request).await;
    let seen = &app.requests()[0].headers;
    assert_eq!(seen["x-forwarded-for"], "198.51.100.1, 127.0.0.1");
    assert_eq!(seen["x-forwarded-proto"], "https");
    gateway.stop().await;
}

/// An app that builds absolute URLs from the address it listens on (Django behind a proxy
/// without `USE_X_FORWARDED_HOST`) sends the browser to the site host, not around the gateway:
/// `Location`, `Refresh` and a cookie's `Domain` naming the upstream are rewritten, and the
/// redirect's body gets no runtime script.
#[tokio::test]
async fn upstream_addresses_in_redirects_and_cookies_become_the_site_host() {
    let app = upstream(|seen| {
        // What the app believes its own address is: the Host it was asked for.
        let own = seen.headers.get("host").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let mut response = reply("text/html; charset=utf-8", "<html><body>Moved</body></html>");
        *response.status_mut() = http::StatusCode::FOUND;
        let headers = response.headers_mut();
        headers.insert("location", format!("http://{own}/admin/?next=%2F").parse().expect("value"));
        headers.insert("refresh", format!("0; url=http://{own}/admin/").parse().expect("value"));
        let host = own.split(':').next().unwrap_or_default().to_owned();
        headers.append(
            "set-cookie",
            format!("sessionid=s1; Domain={host}; Path=/; HttpOnly").parse().expect("value"),
        );
        headers.append("set-cookie", "theme=dark; Path=/".parse().expect("value"));
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, harness::navigate("app.test", "/admin")).await;

    assert_eq!(answer.status, http::StatusCode::FOUND);
    assert_eq!(answer.header("location"), Some("http://app.test/admin/?next=%2F"));
    assert_eq!(answer.header("refresh"), Some("0; url=http://app.test/admin/"));
    let cookies: Vec<&str> =
        answer.headers.get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).collect();
    assert_eq!(cookies, ["sessionid=s1; Path=/; HttpOnly", "theme=dark; Path=/"]);
    assert_eq!(answer.text(), "<html><body>Moved</body></html>", "nothing injected into a redirect");
    gateway.stop().await;
}

/// An upstream that maps `_` to `-` (WSGI, CGI) would read `Transfer_Encoding` as framing and
/// `Remote_User` as an identity: none of them reaches it, nor an identity header another proxy
/// sets (oauth2-proxy, Apache); the configuration can narrow that list.
#[tokio::test]
async fn underscore_framing_and_foreign_identity_headers_never_reach_a_site() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let request = Request::post("/upload")
        .header("host", "app.test")
        .header("transfer_encoding", "chunked")
        .header("content_length", "0")
        .header("remote-user", "root")
        .header("x_auth_request_user", "root")
        .header("x-auth-request-email", "root@corp.example")
        .header("x-auth-request-groups", "admins")
        .header("x-forwarded-preferred-username", "root")
        .header("x-webauth-user", "root")
        .header("x-remote-user", "root")
        .header("x-client-kept", "yes")
        .body(Full::new(Bytes::from_static(
            b"0\r\n\r\nGET /admin HTTP/1.1\r\nX-Forwarded-User: root\r\n\r\n",
        )))
        .expect("request");
    let answer = send(gateway.address, request).await;
    assert_eq!(answer.status, 200);
    let seen = &app.requests()[0];
    let names: Vec<&str> = seen.headers.keys().map(http::HeaderName::as_str).collect();
    let leaked: Vec<&&str> = names
        .iter()
        .filter(|name| name.contains('_') || name.contains("user") || name.contains("auth-request"))
        .collect();
    assert!(leaked.is_empty(), "{leaked:?} reached the site: {names:?}");
    assert_eq!(seen.headers.get("x-client-kept").and_then(|v| v.to_str().ok()), Some("yes"));
    assert!(seen.body.starts_with(b"0\r\n\r\nGET /admin"), "the body is one opaque body");
    gateway.stop().await;

    // A site that relies on its own front end's `Remote-User` keeps it by listing what to drop.
    let gateway =
        harness::gateway(&[("app.test", app.address)], "identity_headers = [\"X-Webauth-User\"]").await;
    let request = Request::get("/")
        .header("host", "app.test")
        .header("remote-user", "alice")
        .header("x-webauth-user", "root")
        .body(Full::new(Bytes::new()))
        .expect("request");
    send(gateway.address, request).await;
    let seen = &app.requests()[1].headers;
    assert_eq!(seen.get("remote-user").and_then(|v| v.to_str().ok()), Some("alice"));
    assert!(seen.get("x-webauth-user").is_none());
    gateway.stop().await;
}

/// Any other spelling of `/.toolgate/` is refused and never reaches a site.
#[tokio::test]
async fn disguised_reserved_paths_are_refused() {
    let app = upstream(|_| reply("text/plain", "site")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    for path in [
        "//.toolgate/agent/session",
        "/%2Etoolgate/agent/session",
        "/.TOOLGATE/agent/session",
        "/x/../.toolgate/agent/session",
        "/.toolgate;a=b/agent/session",
        "/%252etoolgate/x",
    ] {
        let answer = send(gateway.address, harness::get("app.test", path)).await;
        assert_eq!(answer.status, 400, "{path}: {}", answer.text());
    }
    assert!(app.requests().is_empty(), "nothing reached the site: {:?}", app.requests());
    gateway.stop().await;
}

/// RFC 9112 §3.2: a request with two `Host` fields, or userinfo in its `Host`, is a 400 and
/// reaches no site.
#[tokio::test]
async fn two_hosts_or_a_host_with_userinfo_are_refused() {
    let app = upstream(|_| reply("text/plain", "site")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    for head in [
        "GET / HTTP/1.1\r\nHost: app.test\r\nHost: other.test\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: user@app.test\r\nConnection: close\r\n\r\n",
        "GET http://user:pw@app.test/ HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n",
    ] {
        let status = harness::raw_status(gateway.address, head, &[], std::time::Duration::ZERO).await;
        assert!(status.starts_with("HTTP/1.1 400"), "{head:?}: {status}");
    }
    assert!(app.requests().is_empty());
    gateway.stop().await;
}
