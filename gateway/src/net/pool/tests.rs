//! The pool against a hand-written upstream that counts its connections and records what it
//! was sent, so each test can see which connection a request went on.

use super::*;
use crate::http::body::{empty, full};
use http_body_util::BodyExt;
use hyper_util::client::legacy::connect::HttpConnector;
use std::sync::atomic::AtomicUsize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the upstream does with a connection after answering.
#[derive(Clone, Copy)]
enum After {
    /// Keeps it open for the next request.
    KeepAlive,
    /// Answers with `Connection: close` and closes it.
    Close,
    /// Closes it at once without saying so.
    Vanish,
    /// Keeps it open for a while, then closes it without saying so, as a server does whose
    /// keep-alive time ran out.
    IdleFor(Duration),
}

struct Upstream {
    address: std::net::SocketAddr,
    connections: Arc<AtomicUsize>,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Upstream {
    /// Answers every request with `body_len` bytes of `x`.
    async fn start(after: After, body_len: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let connections = Arc::new(AtomicUsize::new(0));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (counted, recorded) = (Arc::clone(&connections), Arc::clone(&heads));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, after, body_len, Arc::clone(&recorded)));
            }
        });
        Self { address, connections, heads }
    }

    fn uri(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("heads").clone()
    }
}

async fn serve(mut stream: TcpStream, after: After, body_len: usize, heads: Arc<Mutex<Vec<String>>>) {
    let mut buffer = Vec::new();
    loop {
        let mut chunk = [0u8; 4096];
        let end = loop {
            if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
                break end + 4;
            }
            let read = match after {
                After::IdleFor(idle) => match tokio::time::timeout(idle, stream.read(&mut chunk)).await {
                    Ok(read) => read,
                    Err(_) => return,
                },
                _ => stream.read(&mut chunk).await,
            };
            match read {
                Ok(0) | Err(_) => return,
                Ok(read) => buffer.extend_from_slice(&chunk[..read]),
            }
        };
        let head: Vec<u8> = buffer.drain(..end).collect();
        heads.lock().expect("heads").push(String::from_utf8_lossy(&head).into_owned());
        let close = if matches!(after, After::Close) { "Connection: close\r\n" } else { "" };
        let answer =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {body_len}\r\n{close}\r\n{}", "x".repeat(body_len));
        if stream.write_all(answer.as_bytes()).await.is_err() || matches!(after, After::Close | After::Vanish)
        {
            return;
        }
    }
}

fn pool(idle_timeout: Duration, max_idle: usize) -> Pool<HttpConnector> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Pool::new(connector, idle_timeout, max_idle)
}

fn get(uri: &str) -> Request<ProxyBody> {
    Request::get(uri).body(empty()).expect("request")
}

/// Sends a GET and reads the answer whole.
async fn fetch(pool: &Pool<HttpConnector>, uri: &str) -> Result<usize, PoolError> {
    let response = pool.send(get(uri)).await?;
    let body = response.into_body().collect().await.expect("the body arrives").to_bytes();
    Ok(body.len())
}

/// Waits until the pool holds `count` idle connections (they come back from a task).
async fn until_idle(pool: &Pool<HttpConnector>, count: usize) {
    for _ in 0..200 {
        if pool.shared.idle_count() == count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the pool holds {} idle connections, not {count}", pool.shared.idle_count());
}

#[tokio::test]
async fn requests_in_turn_share_one_connection_in_origin_form_with_the_host() {
    let upstream = Upstream::start(After::KeepAlive, 5).await;
    let pool = pool(Duration::from_secs(90), 8);
    for round in 0..5 {
        assert_eq!(fetch(&pool, &upstream.uri(&format!("/page?round={round}"))).await.expect("answer"), 5);
        until_idle(&pool, 1).await;
    }
    assert_eq!(upstream.connections(), 1, "one keep-alive connection carried all five");
    let heads = upstream.heads();
    assert!(heads[3].starts_with("GET /page?round=3 HTTP/1.1\r\n"), "origin form: {}", heads[3]);
    let host = format!("host: {}\r\n", upstream.address);
    assert!(heads[3].to_ascii_lowercase().contains(&host), "the authority as Host: {}", heads[3]);
}

#[tokio::test]
async fn a_request_that_names_its_host_keeps_it() {
    let upstream = Upstream::start(After::KeepAlive, 0).await;
    let pool = pool(Duration::from_secs(90), 8);
    let mut request = get(&upstream.uri("/"));
    request.headers_mut().insert(header::HOST, HeaderValue::from_static("app.example"));
    pool.send(request).await.expect("answer");
    let head = upstream.heads().remove(0).to_ascii_lowercase();
    assert!(head.starts_with("get / http/1.1\r\n") && head.contains("host: app.example\r\n"), "{head}");
    assert_eq!(head.matches("host:").count(), 1, "{head}");
}

#[tokio::test]
async fn an_answer_left_unread_takes_its_connection_with_it() {
    let upstream = Upstream::start(After::KeepAlive, 256 * 1024).await;
    let pool = pool(Duration::from_secs(90), 8);
    let response = pool.send(get(&upstream.uri("/big"))).await.expect("answer");
    drop(response);
    assert_eq!(fetch(&pool, &upstream.uri("/next")).await.expect("answer"), 256 * 1024);
    assert_eq!(upstream.connections(), 2, "a half-read connection is never reused");
}

#[tokio::test]
async fn connections_the_upstream_closes_are_not_reused() {
    for after in [After::Close, After::Vanish] {
        let upstream = Upstream::start(after, 3).await;
        let pool = pool(Duration::from_secs(90), 8);
        for _ in 0..3 {
            assert_eq!(fetch(&pool, &upstream.uri("/")).await.expect("every request is answered"), 3);
            // Let the close reach the pooled connection, as it would between real requests.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(upstream.connections(), 3);
        assert_eq!(upstream.heads().len(), 3, "no request was sent twice");
    }
}

#[tokio::test]
async fn an_idle_connection_its_upstream_closed_is_passed_over() {
    let upstream = Upstream::start(After::IdleFor(Duration::from_millis(30)), 2).await;
    let pool = pool(Duration::from_secs(90), 8);
    fetch(&pool, &upstream.uri("/")).await.expect("answer");
    until_idle(&pool, 1).await;
    // The upstream closes the idle connection; the pool's sweep has not run yet.
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(pool.shared.idle_count(), 1);
    assert_eq!(fetch(&pool, &upstream.uri("/again")).await.expect("answered on a new connection"), 2);
    assert_eq!(upstream.connections(), 2);
    assert_eq!(upstream.heads().len(), 2, "no request was sent twice");
}

#[tokio::test]
async fn idle_connections_past_the_timeout_are_closed() {
    let upstream = Upstream::start(After::KeepAlive, 1).await;
    let pool = pool(Duration::from_millis(60), 8);
    fetch(&pool, &upstream.uri("/")).await.expect("answer");
    until_idle(&pool, 1).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(pool.shared.idle_count(), 0, "the sweep closed it");
    fetch(&pool, &upstream.uri("/")).await.expect("answer");
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn at_most_max_idle_connections_wait_per_origin() {
    let upstream = Upstream::start(After::KeepAlive, 1).await;
    let pool = pool(Duration::from_secs(90), 2);
    let answers = (0..6).map(|_| pool.send(get(&upstream.uri("/"))));
    let answers: Vec<_> = futures_util::future::join_all(answers).await;
    assert_eq!(upstream.connections(), 6, "six at once need six connections");
    for answer in answers {
        answer.expect("answer").into_body().collect().await.expect("body");
    }
    until_idle(&pool, 2).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(pool.shared.idle_count(), 2);
}

#[tokio::test]
async fn origins_do_not_share_connections() {
    let (one, two) = (Upstream::start(After::KeepAlive, 1).await, Upstream::start(After::KeepAlive, 2).await);
    let pool = pool(Duration::from_secs(90), 8);
    for _ in 0..3 {
        assert_eq!(fetch(&pool, &one.uri("/")).await.expect("answer"), 1);
        assert_eq!(fetch(&pool, &two.uri("/")).await.expect("answer"), 2);
    }
    assert_eq!((one.connections(), two.connections()), (1, 1));
}

#[tokio::test]
async fn a_request_body_goes_out_whole() {
    let upstream = Upstream::start(After::KeepAlive, 0).await;
    let pool = pool(Duration::from_secs(90), 8);
    let request = Request::post(upstream.uri("/form")).body(full("a=1")).expect("request");
    pool.send(request).await.expect("answer");
    assert!(upstream.heads()[0].to_ascii_lowercase().contains("content-length: 3\r\n"));
}

#[tokio::test]
async fn failures_say_where_they_happened() {
    let pool = pool(Duration::from_secs(90), 8);
    let unsupported = pool.send(get("ftp://127.0.0.1/")).await;
    assert!(matches!(unsupported, Err(PoolError::NoOrigin)));
    let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = closed.local_addr().expect("address");
    drop(closed);
    let refused = pool.send(get(&format!("http://{address}/"))).await;
    assert!(matches!(refused, Err(PoolError::Connect(_))), "{refused:?}");
}
