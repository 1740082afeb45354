//! `hyper-floor UPSTREAM [LISTEN]`: forwards every request to `http://UPSTREAM` and streams the
//! answer back, with the same server (hyper-util's auto HTTP/1 + HTTP/2 connection), client
//! (hyper-util's pooled legacy client, `TCP_NODELAY`) and runtime (tokio, two workers) as the
//! gateway, and nothing else: no routing, headers untouched, no logging or metrics. What it
//! costs per request is what the gateway cannot go below with this stack.

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut arguments = std::env::args().skip(1);
    let upstream = arguments.next().expect("usage: hyper-floor UPSTREAM_HOST:PORT [LISTEN_ADDR]");
    let listen = arguments.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Client<HttpConnector, Incoming> = Client::builder(TokioExecutor::new()).build(connector);
    let listener = tokio::net::TcpListener::bind(&listen).await.expect("bind the listen address");
    println!("hyper-floor listening on http://{}", listener.local_addr().expect("local address"));
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
