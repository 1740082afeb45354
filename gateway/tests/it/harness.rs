//! Shared helpers: real upstream servers and real gateways on 127.0.0.1 port 0, and a plain
//! HTTP/1.1 client. No mocks of our own code: every test crosses real sockets.

use bytes::Bytes;
use gateway::app::shutdown::Shutdown;
use gateway::app::{self, Running};
use gateway::config::Config;
use gateway::http::body::{self, BoxError, ProxyBody};
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A request as the upstream saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: http::Method,
    pub uri: http::Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// A running upstream and what it has received.
pub struct Upstream {
    pub address: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Upstream {
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().map(|seen| seen.clone()).unwrap_or_default()
    }
}

/// Starts an upstream that answers every request with `respond(seen request)`.
pub async fn upstream<F>(respond: F) -> Upstream
where
    F: Fn(&Seen) -> Response<ProxyBody> + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind upstream");
    let address = listener.local_addr().expect("upstream address");
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let respond = Arc::new(respond);
    let recorded = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let respond = respond.clone();
            let recorded = recorded.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let respond = respond.clone();
                    let recorded = recorded.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let seen =
                            Seen { method: parts.method, uri: parts.uri, headers: parts.headers, body };
                        let response = respond(&seen);
                        recorded.lock().expect("record").push(seen);
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
    Upstream { address, seen }
}

/// A response with a body and content type.
pub fn reply(content_type: &str, body: impl Into<Bytes>) -> Response<ProxyBody> {
    let mut response = Response::new(body::full(body.into()));
    response.headers_mut().insert(http::header::CONTENT_TYPE, content_type.parse().expect("content type"));
    response
}

/// A body fed from a channel, so a test decides when each chunk leaves the upstream.
pub struct ChannelBody(pub mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|bytes| Ok(Frame::data(bytes))))
    }
}

pub fn channel_body() -> (mpsc::Sender<Bytes>, ProxyBody) {
    let (sender, receiver) = mpsc::channel(16);
    (sender, ChannelBody(receiver).boxed_unsync())
}

/// An upstream that answers its one request with a `content_type` body the test feeds through
/// the returned sender, piece by piece.
pub async fn streaming_upstream(content_type: &'static str) -> (mpsc::Sender<Bytes>, Upstream) {
    let (sender, body) = channel_body();
    let body = std::sync::Mutex::new(Some(body));
    let app = upstream(move |_| {
        let mut response = Response::new(body.lock().expect("lock").take().expect("one request"));
        response.headers_mut().insert("content-type", HeaderValue::from_static(content_type));
        response
    })
    .await;
    (sender, app)
}

/// The configuration text for a gateway in front of `sites` (host, upstream), plus `extra`
/// TOML appended at the top level (for `[timeouts]`, `[limits]`...).
pub fn config_text(sites: &[(&str, SocketAddr)], extra: &str) -> String {
    let mut text = String::from(
        "public_url = \"http://gateway.test\"\n\
         [server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\ninsecure_no_sso = true\n",
    );
    text.push_str(extra);
    text.push('\n');
    if !extra.contains("[store]") {
        text.push_str("[store]\npath = \":memory:\"\n");
    }
    for (index, (host, address)) in sites.iter().enumerate() {
        text.push_str(&format!("[sites.site{index}]\nhost = \"{host}\"\nupstream = \"http://{address}\"\n"));
    }
    text
}

/// Starts a gateway in this process.
pub async fn gateway(sites: &[(&str, SocketAddr)], extra: &str) -> Running {
    gateway_from_text(&config_text(sites, extra)).await
}

/// Starts a gateway in this process from a whole configuration text.
pub async fn gateway_from_text(text: &str) -> Running {
    let config = Config::parse(text, "test.toml").expect("test config is valid");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind gateway");
    let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
    app::start(config, listener, admin, Shutdown::new()).await.expect("gateway starts")
}

/// Starts a gateway in this process that enforces `policy` (policy TOML; rules name sites
/// `site0`, `site1`… in the order of `sites`). The directory holding the policy file must live
/// as long as the gateway, so it is returned beside it.
pub async fn gateway_with_policy(
    sites: &[(&str, SocketAddr)],
    extra: &str,
    policy: &str,
) -> (Running, tempfile::TempDir) {
    let (directory, table) = policy_table(policy);
    (gateway(sites, &format!("{extra}\n{table}")).await, directory)
}

/// Starts a gateway enforcing `policy` in front of `sites`, with `site_tables` appended after
/// the sites (TOML such as `[[sites.site0.forms.rule]]` tables).
pub async fn gateway_with_site_tables(
    sites: &[(&str, SocketAddr)],
    site_tables: &str,
    policy: &str,
) -> (Running, tempfile::TempDir) {
    let (directory, table) = policy_table(policy);
    (gateway_from_text(&format!("{}{site_tables}", config_text(sites, &table))).await, directory)
}

/// Writes `policy` into a new temporary directory; returns it and the `[policy]` table naming
/// the file.
fn policy_table(policy: &str) -> (tempfile::TempDir, String) {
    let directory = tempfile::tempdir().expect("policy dir");
    let file = directory.path().join("policy.toml");
    std::fs::write(&file, policy).expect("write policy");
    let table = format!("[policy]\nfile = {:?}\n", file.display().to_string());
    (directory, table)
}

/// A response with its whole body read.
pub struct Answer {
    pub status: http::StatusCode,
    pub headers: HeaderMap,
    /// The body as it crossed the wire, still in its `Content-Encoding` (`decoded` and `text`
    /// read it as a browser does).
    pub body: Bytes,
}

impl Answer {
    /// The body as a browser hands it to the page: decoded from its `Content-Encoding`.
    pub fn decoded(&self) -> Vec<u8> {
        match self.header("content-encoding") {
            None => self.body.to_vec(),
            Some(coding) => decode_whole(coding, &self.body),
        }
    }

    /// The decoded body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.decoded()).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// Sends one request over a fresh HTTP/1.1 connection and reads the whole answer.
pub async fn send(address: SocketAddr, request: Request<Full<Bytes>>) -> Answer {
    let response = open(address, request).await;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body completes").to_bytes();
    Answer { status: parts.status, headers: parts.headers, body }
}

/// Decodes a whole body in `coding` with a decoder independent of the gateway's; a stream that
/// does not decode fails the test.
pub fn decode_whole(coding: &str, wire: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut decoded = Vec::new();
    let result = match coding {
        "gzip" => flate2::read::GzDecoder::new(wire).read_to_end(&mut decoded),
        "deflate" => flate2::read::ZlibDecoder::new(wire).read_to_end(&mut decoded),
        "br" => brotli_decompressor::Decompressor::new(wire, 4096).read_to_end(&mut decoded),
        "zstd" => {
            zstd::stream::read::Decoder::new(wire).and_then(|mut decoder| decoder.read_to_end(&mut decoded))
        }
        other => panic!("the test client cannot decode `{other}`"),
    };
    result.unwrap_or_else(|error| panic!("a {coding} body that does not decode: {error}"));
    decoded
}

/// Sends one request over a fresh HTTP/1.1 connection; the body is left to the caller.
pub async fn open(address: SocketAddr, request: Request<Full<Bytes>>) -> Response<Incoming> {
    let stream = TcpStream::connect(address).await.expect("connect to gateway");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection.with_upgrades());
    sender.send_request(request).await.expect("response")
}

/// A GET for `path` on `host`.
pub fn get(host: &str, path: &str) -> Request<Full<Bytes>> {
    Request::get(path).header("host", host).body(Full::new(Bytes::new())).expect("request")
}

/// A page navigation, as Chromium sends it (it accepts gzip, deflate, br and zstd).
pub fn navigate(host: &str, path: &str) -> Request<Full<Bytes>> {
    navigate_accepting(host, path, "gzip, deflate, br, zstd")
}

/// A page navigation from a browser whose `Accept-Encoding` is `accept_encoding`.
pub fn navigate_accepting(host: &str, path: &str, accept_encoding: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header("host", host)
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .header("accept-encoding", accept_encoding)
        .body(Full::new(Bytes::new()))
        .expect("request")
}

/// The runtime script tag the gateway injects, up to its nonce.
pub fn runtime_tag_prefix() -> String {
    let runtime = injector::runtime_asset();
    format!("<script src=\"{}\" integrity=\"{}\" nonce=\"", runtime.path, runtime.integrity)
}

/// The Subresource Integrity value of `bytes` as a browser computes it, independently of the
/// injector's own derivation.
pub fn sri_sha384(bytes: &[u8]) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    format!("sha384-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(bytes)))
}

/// The nonce on the injected runtime tag of a page.
pub fn injected_nonce(page: &str) -> Option<String> {
    let prefix = runtime_tag_prefix();
    let start = page.find(&prefix)? + prefix.len();
    let end = page[start..].find('"')? + start;
    Some(page[start..end].to_owned())
}

/// The interpreter of the test virtualenv (`TOOLGATE_TEST_PYTHON`, else `.venv-tests/bin/python`
/// at the repository root, which `test.sh` fills), checked to import `module`; a missing one fails
/// with instructions.
pub fn test_python(module: &str) -> std::path::PathBuf {
    let python = std::env::var_os("TOOLGATE_TEST_PYTHON").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-tests/bin/python"),
        std::path::PathBuf::from,
    );
    let install = "run ./test.sh, which creates .venv-tests with the pinned openai and django packages \
                   (or point TOOLGATE_TEST_PYTHON at a Python that has them)";
    assert!(python.exists(), "no test Python at {}: {install}", python.display());
    let check = std::process::Command::new(&python)
        .args(["-c", &format!("import {module}")])
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}; {install}", python.display()));
    assert!(
        check.status.success(),
        "{} cannot import {module} ({}): {install}",
        python.display(),
        String::from_utf8_lossy(&check.stderr).trim()
    );
    python
}

/// Writes `head` and then each chunk of `body` after `pause`, on one raw connection, and returns
/// the answer's status line (for requests a well-behaved client library cannot send).
pub async fn raw_status(
    address: SocketAddr,
    head: &str,
    body: &[&[u8]],
    pause: std::time::Duration,
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("head");
    for chunk in body {
        tokio::time::sleep(pause).await;
        if stream.write_all(chunk).await.is_err() {
            break;
        }
    }
    let mut answer = vec![0; 1024];
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut answer))
        .await
        .expect("an answer");
    let read = read.expect("read");
    String::from_utf8_lossy(&answer[..read]).lines().next().unwrap_or_default().to_owned()
}
