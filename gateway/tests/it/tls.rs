//! TLS on the user-facing listener: rustls with ALPN, so browsers get HTTP/2 and older clients
//! HTTP/1.1, with the same rewriting either way.

use crate::harness::{self, reply, upstream};
use bytes::Bytes;
use gateway::app;
use gateway::config::Config;
use gateway::shutdown::Shutdown;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{CertificateDer, ServerName};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};

pub struct TestCertificate {
    pub cert_pem: String,
    pub key_pem: String,
    pub der: CertificateDer<'static>,
}

pub fn certificate(host: &str) -> TestCertificate {
    let certified = rcgen::generate_simple_self_signed(vec![host.to_owned()]).expect("certificate");
    TestCertificate {
        cert_pem: certified.cert.pem(),
        key_pem: certified.signing_key.serialize_pem(),
        der: certified.cert.der().clone(),
    }
}

async fn tls_client(
    address: std::net::SocketAddr,
    certificate: &TestCertificate,
    alpn: &[u8],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(certificate.der.clone()).expect("root");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let stream = TcpStream::connect(address).await.expect("connect");
    connector.connect(ServerName::try_from("app.test").expect("name"), stream).await.expect("TLS handshake")
}

#[tokio::test]
async fn https_serves_http2_and_http1_by_alpn() {
    let app = upstream(|_| reply("text/html", "<html><head></head><body>tls</body></html>")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let certificate = certificate("app.test");
    let (cert_path, key_path) = (directory.path().join("cert.pem"), directory.path().join("key.pem"));
    std::fs::write(&cert_path, &certificate.cert_pem).expect("write cert");
    std::fs::write(&key_path, &certificate.key_pem).expect("write key");
    let tls = format!("[server.tls]\ncert = \"{}\"\nkey = \"{}\"", cert_path.display(), key_path.display());
    let config =
        Config::parse(&harness::config_text(&[("app.test", app.address)], &tls), "tls.toml").expect("config");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let gateway = app::start(config, listener, admin, Shutdown::new()).expect("start");

    let stream = tls_client(gateway.address, &certificate, b"h2").await;
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.expect("h2");
    tokio::spawn(connection);
    let request = http::Request::get("https://app.test/")
        .header("accept", "text/html")
        .body(Full::new(Bytes::new()))
        .expect("request");
    let response = sender.send_request(request).await.expect("response");
    assert_eq!(response.version(), http::Version::HTTP_2);
    let page = response.into_body().collect().await.expect("body").to_bytes();
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains(&harness::runtime_tag_prefix()), "{page}");
    assert!(page.contains("tls"));

    let stream = tls_client(gateway.address, &certificate, b"http/1.1").await;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("h1");
    tokio::spawn(connection);
    let request =
        http::Request::get("/").header("host", "app.test").body(Full::new(Bytes::new())).expect("request");
    let response = sender.send_request(request).await.expect("response");
    assert_eq!(response.version(), http::Version::HTTP_11);
    assert_eq!(response.status(), 200);
    assert_eq!(app.requests()[0].headers["x-forwarded-proto"], "https");
    gateway.stop().await;
}

#[tokio::test]
async fn cleartext_http2_with_prior_knowledge_works() {
    let app = upstream(|_| reply("application/json", "{}")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let stream = TcpStream::connect(gateway.address).await.expect("connect");
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await.expect("h2c");
    tokio::spawn(connection);
    let request = http::Request::get("http://app.test/x")
        .header("cookie", "a=1")
        .header("cookie", "b=2")
        .body(Full::new(Bytes::new()))
        .expect("request");
    let response = sender.send_request(request).await.expect("response");
    assert_eq!(response.status(), 200);
    let seen = &app.requests()[0];
    assert_eq!(
        seen.headers.get_all("cookie").iter().collect::<Vec<_>>(),
        ["a=1; b=2"],
        "HTTP/2 cookie fields are joined for HTTP/1.1"
    );
    gateway.stop().await;
}
