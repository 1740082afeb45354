//! Non-HTML traffic passes byte-for-byte and streams; routing and upstream failures give the
//! documented statuses.

use crate::harness::{self, get, reply, send, upstream};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use std::time::Duration;

#[tokio::test]
async fn json_and_binary_bodies_pass_byte_for_byte() {
    let json = br#"{"tasks":[{"id":1,"title":"caf\u00e9 <b>"}]}"#.to_vec();
    let image: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let (json_body, image_body) = (json.clone(), image.clone());
    let app = upstream(move |seen| match seen.uri.path() {
        "/api" => reply("application/json", json_body.clone()),
        _ => reply("image/png", image_body.clone()),
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;

    let answer = send(gateway.address, get("app.test", "/api?q=1")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body, json, "JSON must be untouched");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert!(answer.header("x-request-id").is_some_and(|id| id.len() == 16));

    let answer = send(gateway.address, get("app.test", "/logo.png")).await;
    assert_eq!(answer.body, image, "binary must be untouched");

    let seen = app.requests();
    assert_eq!(seen[0].uri.path_and_query().map(|p| p.as_str()), Some("/api?q=1"));
    gateway.stop().await;
}

#[tokio::test]
async fn request_bodies_reach_the_upstream_intact() {
    let app = upstream(|seen| reply("text/plain", seen.body.clone())).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let request = Request::post("/upload")
        .header("host", "app.test")
        .header("content-type", "application/octet-stream")
        .body(Full::new(Bytes::from(payload.clone())))
        .expect("request");
    let answer = send(gateway.address, request).await;
    assert_eq!(answer.body, payload);
    assert_eq!(app.requests()[0].method, http::Method::POST);
    gateway.stop().await;
}

#[tokio::test]
async fn streamed_bodies_arrive_before_the_upstream_finishes() {
    let (sender, app) = harness::streaming_upstream("text/event-stream").await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let response = harness::open(gateway.address, get("app.test", "/events")).await;
    let mut body = response.into_body();
    for event in ["data: one\n\n", "data: two\n\n"] {
        sender.send(Bytes::from(event)).await.expect("upstream sends");
        // The upstream has not finished: the event must arrive on its own.
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("event arrives while the stream is open")
            .expect("a frame")
            .expect("no error");
        assert_eq!(frame.into_data().expect("data"), event);
    }
    drop(sender);
    assert!(body.frame().await.is_none(), "stream ends when the upstream ends");
    gateway.stop().await;
}

#[tokio::test]
async fn unknown_host_gets_404_naming_nothing_secret() {
    let app = upstream(|_| reply("text/plain", "secret upstream")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, get("other.test", "/")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.header("x-toolgate-reason"), Some("unknown_host"));
    let page = answer.text();
    assert!(page.contains("Unknown site"));
    assert!(!page.contains("app.test") && !page.contains(&app.address.to_string()), "{page}");
    assert!(app.requests().is_empty());
    gateway.stop().await;
}

#[tokio::test]
async fn upstream_down_gives_502_naming_the_site_and_cause() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = closed.local_addr().expect("address");
    drop(closed);
    let gateway = harness::gateway(&[("app.test", address)], "").await;
    let answer = send(gateway.address, get("app.test", "/")).await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer.header("x-toolgate-reason"), Some("upstream_refused"));
    let page = answer.text();
    assert!(page.contains("site0") && page.contains("refused the connection"), "{page}");
    assert!(!page.contains(&address.to_string()), "internal addresses stay internal");
    let metrics = metrics_text(gateway.admin_address).await;
    assert!(
        metrics.contains("toolgate_upstream_errors_total{reason=\"upstream_refused\",site=\"site0\"} 1"),
        "{metrics}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn slow_upstream_headers_give_504() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    // Accepts and reads, never answers.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let gateway =
        harness::gateway(&[("app.test", address)], "[timeouts]\nupstream_headers = \"300ms\"").await;
    let answer = send(gateway.address, get("app.test", "/")).await;
    assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(answer.header("x-toolgate-reason"), Some("upstream_timeout"));
    gateway.stop().await;
}

#[tokio::test]
async fn reserved_paths_never_reach_the_upstream() {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let runtime = injector::runtime_asset();

    let answer = send(gateway.address, get("app.test", &runtime.path)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body, runtime.body);
    assert_eq!(answer.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert!(answer.header("content-type").is_some_and(|t| t.starts_with("text/javascript")));
    assert_eq!(harness::sri_sha384(&answer.body), runtime.integrity, "SRI must match the served bytes");

    let answer = send(gateway.address, get("app.test", "/.toolgate/anything-else")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(app.requests().is_empty(), "the upstream saw: {:?}", app.requests());
    gateway.stop().await;
}

/// A reverse proxy opens no tunnels: CONNECT is the client's error and never reaches the site.
#[tokio::test]
async fn connect_is_refused_and_never_reaches_the_upstream() {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let head = "CONNECT app.test:80 HTTP/1.1\r\nHost: app.test:80\r\n\r\n";
    let status = harness::raw_status(gateway.address, head, &[], Duration::ZERO).await;
    assert!(status.starts_with("HTTP/1.1 400"), "{status}");
    assert!(app.requests().is_empty(), "the upstream saw: {:?}", app.requests());
    gateway.stop().await;
}

#[tokio::test]
async fn admin_listener_reports_health_readiness_and_metrics() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    send(gateway.address, get("app.test", "/")).await;
    let health = send(gateway.admin_address, get("admin", "/healthz")).await;
    assert_eq!((health.status, health.text().as_str()), (StatusCode::OK, "ok\n"));
    let ready = send(gateway.admin_address, get("admin", "/readyz")).await;
    assert_eq!(ready.status, StatusCode::OK);
    let metrics = metrics_text(gateway.admin_address).await;
    for name in [
        "toolgate_requests_total{route=\"pass_through\",site=\"site0\",status=\"2xx\"} 1",
        "toolgate_request_duration_seconds_bucket",
        "toolgate_active_connections",
    ] {
        assert!(metrics.contains(name), "missing {name} in\n{metrics}");
    }
    gateway.stop().await;
}

pub async fn metrics_text(admin: std::net::SocketAddr) -> String {
    send(admin, get("admin", "/metrics")).await.text()
}

async fn upstream_errors(admin: std::net::SocketAddr) -> u64 {
    let metrics = send(admin, get("admin", "/metrics")).await.text();
    metrics
        .lines()
        .filter(|line| line.starts_with("toolgate_upstream_errors_total{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// The time to the upstream's headers starts when the upload has been sent whole: an upload
/// that keeps flowing for longer than `upstream_headers` is never cut (only `body_idle` governs
/// a flowing body).
#[tokio::test]
async fn a_flowing_upload_outlasts_the_headers_timeout() {
    let app = upstream(|seen| reply("text/plain", format!("got {} bytes", seen.body.len()))).await;
    let gateway =
        harness::gateway(&[("app.test", app.address)], "[timeouts]\nupstream_headers = \"300ms\"").await;
    let chunk: &[u8] = b"400\r\n";
    let data = vec![b'x'; 0x400];
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    for _ in 0..12 {
        let mut piece = chunk.to_vec();
        piece.extend_from_slice(&data);
        piece.extend_from_slice(b"\r\n");
        pieces.push(piece);
    }
    pieces.push(b"0\r\n\r\n".to_vec());
    let pieces: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    let head =
        "POST /upload HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    // 13 pieces 100 ms apart: 1.3 s of upload against a 300 ms headers timeout.
    let status = harness::raw_status(gateway.address, head, &pieces, Duration::from_millis(100)).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(app.requests()[0].body.len(), 12 * 0x400);
    gateway.stop().await;
}

/// Broken chunked framing from the client is the client's error: 400, and the upstream error
/// counter (behind the "upstream failing" alert) does not move.
#[tokio::test]
async fn broken_client_framing_is_a_client_error() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let head =
        "POST /upload HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    for broken in
        [&b"fffffffffffffffffffffff\r\nx\r\n"[..], b"-1\r\nx\r\n", b"zz\r\n", b"3\r\nabcdef\r\n0\r\n\r\n"]
    {
        let status = harness::raw_status(
            gateway.address,
            head,
            &[b"5\r\nhello\r\n", broken],
            Duration::from_millis(20),
        )
        .await;
        assert!(status.starts_with("HTTP/1.1 400"), "{:?}: {status}", String::from_utf8_lossy(broken));
    }
    assert_eq!(upstream_errors(gateway.admin_address).await, 0);
    gateway.stop().await;
}
