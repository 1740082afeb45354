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
