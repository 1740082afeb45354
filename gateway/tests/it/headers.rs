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
