//! Client limits: oversized request heads get 431, and a client that stalls its headers is
//! disconnected by the header-read timeout.

use crate::harness::{self, reply, upstream};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn huge_headers_get_431() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[limits]\nmax_header_bytes = 16384").await;
    let mut stream = TcpStream::connect(gateway.address).await.expect("connect");
    let request = format!("GET / HTTP/1.1\r\nhost: app.test\r\nx-big: {}\r\n\r\n", "a".repeat(40_000));
    // The gateway may close before reading all of it; what matters is what it answered.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(app.requests().is_empty());
    gateway.stop().await;
}

#[tokio::test]
async fn slow_header_client_is_cut() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[timeouts]\nheader_read = \"500ms\"").await;
    let mut stream = TcpStream::connect(gateway.address).await.expect("connect");
    stream.write_all(b"GET / HTTP/1.1\r\nhost: app.test\r\nx-slow: ").await.expect("write");
    let started = Instant::now();
    let mut answer = Vec::new();
    // The connection must be closed by the gateway, not by this test's own limit.
    let closed = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    assert!(closed.is_ok(), "the gateway kept a stalled client for 10 s");
    assert!(started.elapsed() >= Duration::from_millis(400), "cut by the timer, not at once");
    let answer = String::from_utf8_lossy(&answer);
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(app.requests().is_empty());
    gateway.stop().await;
}

async fn refused(admin: std::net::SocketAddr, reason: &str) -> u64 {
    let metrics = harness::send(admin, harness::get("admin", "/metrics")).await.text();
    let series = format!("toolgate_connections_refused_total{{reason=\"{reason}\"}} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series.as_str())?.parse().ok())
        .expect("the series exists from the start")
}

/// A connection that never sends a byte is closed once the header-read budget has passed since
/// accept (hyper's own timer would start only with a first byte), and counted.
#[tokio::test]
async fn a_silent_connection_is_closed_from_accept() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[timeouts]\nheader_read = \"300ms\"").await;
    assert_eq!(refused(gateway.admin_address, "silent").await, 0);
    let started = Instant::now();
    let mut silent = TcpStream::connect(gateway.address).await.expect("connect");
    let mut buffer = [0u8; 64];
    let read =
        tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buffer)).await.expect("closed in time");
    assert!(matches!(read, Ok(0) | Err(_)), "closed without an answer: {read:?}");
    assert!(started.elapsed() >= Duration::from_millis(250), "{:?}", started.elapsed());
    assert_eq!(refused(gateway.admin_address, "silent").await, 1);
    gateway.stop().await;
}

/// Past `limits.max_connections_per_ip` (or the total), a new connection is closed at once and
/// counted; the connections already open keep working.
#[tokio::test]
async fn connections_past_the_limits_are_refused_and_open_ones_keep_working() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let extra = "[limits]\nmax_connections_per_ip = 2\n[timeouts]\nheader_read = \"10s\"";
    let gateway = harness::gateway(&[("app.test", app.address)], extra).await;
    let mut open = Vec::new();
    for _ in 0..2 {
        open.push(TcpStream::connect(gateway.address).await.expect("connect"));
    }
    // Let the accept loop admit both before the third arrives.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut third = TcpStream::connect(gateway.address).await.expect("connect");
    let mut buffer = [0u8; 256];
    let read =
        tokio::time::timeout(Duration::from_secs(2), third.read(&mut buffer)).await.expect("closed at once");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert_eq!(refused(gateway.admin_address, "per_ip").await, 1);
    for stream in &mut open {
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    gateway.stop().await;
}
