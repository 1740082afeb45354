//! `hyper-floor UPSTREAM [LISTEN]`: forwards every request to `http://UPSTREAM` and streams the
//! answer back, with the same server (hyper-util's auto HTTP/1 + HTTP/2 connection), client
//! (hyper-util's pooled legacy client, `TCP_NODELAY`) and runtime (tokio, two workers) as the
//! gateway, and nothing else: no routing, headers untouched, no logging or metrics. What it
//! costs per request is what the gateway cannot go below with this stack.
//!
//! `FLOOR_RUNTIME=per-core` runs two single-threaded runtimes instead, each with its own
//! listener on the same port (`SO_REUSEPORT`) and its own upstream pool, the way nginx runs
//! one event loop per worker.
//!
//! `FLOOR_POOL=own` replaces hyper-util's pooled client with hyper's connection-level HTTP/1
//! client and a plain stack of idle connections, the shape of the gateway's own pool
//! (`gateway/src/net/pool/`) without its idle timeout, per-origin lanes or retry.

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::net::SocketAddr;

fn main() {
    let mut arguments = std::env::args().skip(1);
    let upstream = arguments.next().expect("usage: hyper-floor UPSTREAM_HOST:PORT [LISTEN_ADDR]");
    let listen: SocketAddr =
        arguments.next().as_deref().unwrap_or("127.0.0.1:0").parse().expect("LISTEN_ADDR is an IP:port");
    if std::env::var("FLOOR_RUNTIME").as_deref() == Ok("per-core") {
        per_core(listen, upstream);
    } else {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind(listen).await.expect("bind the listen address");
            println!("hyper-floor listening on http://{}", listener.local_addr().expect("local address"));
            serve(listener, upstream).await
        })
    }
}

/// Two threads, each a single-threaded runtime with its own listener on the same port: the
/// first binds `listen` (port 0 picks one), the second binds the port the first got.
fn per_core(listen: SocketAddr, upstream: String) {
    let mut address = listen;
    let mut threads = Vec::new();
    for _ in 0..2 {
        let (bound, listening) = std::sync::mpsc::channel();
        let upstream = upstream.clone();
        threads.push(std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let listener = reuse_port_listener(address);
                bound.send(listener.local_addr().expect("local address")).expect("main waits for it");
                serve(listener, upstream).await
            })
        }));
        address = listening.recv().expect("the listener is bound");
    }
    println!("hyper-floor listening on http://{address} (per-core)");
    for thread in threads {
        let _ = thread.join();
    }
}

/// A listener that shares its port with the other thread's (`SO_REUSEPORT`: the kernel spreads
/// new connections over both).
fn reuse_port_listener(address: SocketAddr) -> tokio::net::TcpListener {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_reuseport(true).expect("SO_REUSEPORT");
    socket.bind(address).expect("bind the listen address");
    socket.listen(1024).expect("listen")
}

async fn serve(listener: tokio::net::TcpListener, upstream: String) {
    if std::env::var("FLOOR_POOL").as_deref() == Ok("own") {
        return serve_own_pool(listener, upstream).await;
    }
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Client<HttpConnector, Incoming> = Client::builder(TokioExecutor::new()).build(connector);
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        let (client, upstream) = (client.clone(), upstream.clone());
        tokio::spawn(async move {
            let service = service_fn(move |mut request: Request<Incoming>| {
                let client = client.clone();
                let path = request.uri().path_and_query().map_or("/", |path| path.as_str());
                let uri: Result<Uri, _> = format!("http://{upstream}{path}").parse();
                async move {
                    *request.uri_mut() = uri.expect("the client sent a valid path");
                    let answer = client.request(request).await.expect("the upstream answers");
                    Ok::<_, Infallible>(answer)
                }
            });
            let _ = auto::Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// `FLOOR_POOL=own`: hyper's connection-level HTTP/1 client with a plain stack of idle
/// connections instead of hyper-util's pool.
async fn serve_own_pool(listener: tokio::net::TcpListener, upstream: String) {
    use hyper::client::conn::http1::SendRequest;
    use std::sync::{Arc, Mutex};
    struct Pool {
        idle: Mutex<Vec<SendRequest<Incoming>>>,
        upstream: String,
    }
    async fn send(pool: Arc<Pool>, request: Request<Incoming>) -> hyper::Response<Incoming> {
        let pooled = loop {
            let next = pool.idle.lock().expect("pool").pop();
            match next {
                Some(sender) if sender.is_ready() => break Some(sender),
                Some(_) => continue,
                None => break None,
            }
        };
        let mut sender = match pooled {
            Some(sender) => sender,
            None => {
                let stream = tokio::net::TcpStream::connect(&pool.upstream).await.expect("connect");
                let _ = stream.set_nodelay(true);
                let (sender, connection) =
                    hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
                tokio::spawn(connection);
                sender
            }
        };
        let answer = sender.send_request(request).await.expect("the upstream answers");
        tokio::spawn(async move {
            if sender.ready().await.is_ok() {
                pool.idle.lock().expect("pool").push(sender);
            }
        });
        answer
    }
    let pool = Arc::new(Pool { idle: Mutex::new(Vec::new()), upstream: upstream.clone() });
    let host = hyper::header::HeaderValue::from_str(&upstream).expect("a host");
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        let (pool, host) = (Arc::clone(&pool), host.clone());
        tokio::spawn(async move {
            let service = service_fn(move |mut request: Request<Incoming>| {
                let pool = Arc::clone(&pool);
                let path = request.uri().path_and_query().map_or("/", |path| path.as_str());
                let uri: Result<Uri, _> = path.parse();
                request.headers_mut().insert(hyper::header::HOST, host.clone());
                async move {
                    *request.uri_mut() = uri.expect("the client sent a valid path");
                    Ok::<_, Infallible>(send(pool, request).await)
                }
            });
            let _ = auto::Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
