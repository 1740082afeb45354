//! TLS on the user-facing listener (rustls with ALPN, so browsers get HTTP/2 and older clients
//! HTTP/1.1; a minimum protocol version; HSTS over TLS only) and TLS to upstreams (a site's own
//! CA bundle, a client certificate for mutual TLS, `check-config` naming broken files).

use crate::harness::{self, reply, upstream};
use bytes::Bytes;
use gateway::app::shutdown::Shutdown;
use gateway::app::{self, Running};
use gateway::config::Config;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{CertificateDer, ServerName};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
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

/// A private certificate authority that issues server and client certificates.
pub struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pub cert_pem: String,
    pub der: CertificateDer<'static>,
}

impl TestCa {
    pub fn new(name: &str) -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name.push(rcgen::DnType::CommonName, name);
        params.key_usages =
            vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("CA certificate");
        Self { issuer: rcgen::Issuer::new(params, key), cert_pem: cert.pem(), der: cert.der().clone() }
    }

    /// A certificate for `name`, for a server (`ServerAuth`) or a client (`ClientAuth`).
    pub fn issue(&self, name: &str, purpose: rcgen::ExtendedKeyUsagePurpose) -> TestCertificate {
        let mut params = rcgen::CertificateParams::new(vec![name.to_owned()]).expect("params");
        params.distinguished_name.push(rcgen::DnType::CommonName, name);
        params.extended_key_usages = vec![purpose];
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("issued certificate");
        TestCertificate { cert_pem: cert.pem(), key_pem: key.serialize_pem(), der: cert.der().clone() }
    }
}

/// Writes a certificate and its key as `{name}.pem` and `{name}.key` in `directory`.
pub fn write_pair(directory: &Path, name: &str, certificate: &TestCertificate) -> (PathBuf, PathBuf) {
    let (cert, key) = (directory.join(format!("{name}.pem")), directory.join(format!("{name}.key")));
    std::fs::write(&cert, &certificate.cert_pem).expect("write certificate");
    std::fs::write(&key, &certificate.key_pem).expect("write key");
    (cert, key)
}

/// `[server.tls]` for the pair, plus `extra` keys.
pub fn tls_section(cert: &Path, key: &Path, extra: &str) -> String {
    format!(
        "[server.tls]\ncert = {:?}\nkey = {:?}\n{extra}\n",
        cert.display().to_string(),
        key.display().to_string()
    )
}

/// Starts a gateway from whole configuration text (TLS files must exist).
pub async fn start(text: &str) -> Running {
    let config = Config::parse(text, "tls.toml").expect("config");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    app::start(config, listener, admin, Shutdown::new()).await.expect("start")
}

/// A TLS connection to `address` for `app.test`, trusting `roots`, offering `versions`.
pub async fn connect(
    address: SocketAddr,
    roots: &[&CertificateDer<'static>],
    versions: &[&'static rustls::SupportedProtocolVersion],
    alpn: &[u8],
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add((*root).clone()).expect("root");
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("versions")
        .with_root_certificates(store)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let stream = TcpStream::connect(address).await.expect("connect");
    connector.connect(ServerName::try_from("app.test").expect("name"), stream).await
}

async fn tls_client(
    address: SocketAddr,
    certificate: &TestCertificate,
    alpn: &[u8],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    connect(address, &[&certificate.der], rustls::DEFAULT_VERSIONS, alpn).await.expect("TLS handshake")
}

/// One HTTP/1.1 GET over a TLS stream; status and headers.
async fn get_over(stream: tokio_rustls::client::TlsStream<TcpStream>, host: &str) -> http::response::Parts {
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("h1");
    tokio::spawn(connection);
    let request =
        http::Request::get("/").header("host", host).body(Full::new(Bytes::new())).expect("request");
    let response = sender.send_request(request).await.expect("response");
    let (parts, body) = response.into_parts();
    body.collect().await.expect("body");
    parts
}

#[tokio::test]
async fn https_serves_http2_and_http1_by_alpn() {
    let app = upstream(|_| reply("text/html", "<html><head></head><body>tls</body></html>")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let certificate = certificate("app.test");
    let (cert_path, key_path) = write_pair(directory.path(), "cert", &certificate);
    let tls = tls_section(&cert_path, &key_path, "");
    let gateway = start(&harness::config_text(&[("app.test", app.address)], &tls)).await;

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

#[tokio::test]
async fn a_minimum_of_tls_1_3_refuses_tls_1_2_clients() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let certificate = certificate("app.test");
    let (cert, key) = write_pair(directory.path(), "cert", &certificate);
    let tls_1_2: &[&'static rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];
    let tls_1_3: &[&'static rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];

    let default =
        start(&harness::config_text(&[("app.test", app.address)], &tls_section(&cert, &key, ""))).await;
    let stream = connect(default.address, &[&certificate.der], tls_1_2, b"http/1.1").await;
    assert!(stream.is_ok(), "the default minimum (1.2) accepts TLS 1.2: {:?}", stream.err());
    default.stop().await;

    let strict = tls_section(&cert, &key, "min_version = \"1.3\"");
    let strict = start(&harness::config_text(&[("app.test", app.address)], &strict)).await;
    let refused = connect(strict.address, &[&certificate.der], tls_1_2, b"http/1.1").await;
    assert!(refused.is_err(), "a TLS 1.2-only client must be refused");
    let stream = connect(strict.address, &[&certificate.der], tls_1_3, b"http/1.1").await.expect("TLS 1.3");
    assert_eq!(stream.get_ref().1.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
    assert_eq!(get_over(stream, "app.test").await.status, 200);
    strict.stop().await;
}

#[tokio::test]
async fn hsts_is_sent_over_tls_and_never_over_plain_http() {
    let app = upstream(|_| {
        let mut response = reply("text/plain", "ok");
        response.headers_mut().insert("strict-transport-security", "max-age=60".parse().expect("value"));
        response
    })
    .await;
    let directory = tempfile::tempdir().expect("temp dir");
    let certificate = certificate("app.test");
    let (cert, key) = write_pair(directory.path(), "cert", &certificate);
    let hsts = "hsts_max_age = \"365d\"\nhsts_include_subdomains = true";
    let gateway =
        start(&harness::config_text(&[("app.test", app.address)], &tls_section(&cert, &key, hsts))).await;
    let expected = "max-age=31536000; includeSubDomains";
    let site = get_over(tls_client(gateway.address, &certificate, b"http/1.1").await, "app.test").await;
    assert_eq!(site.headers.get_all("strict-transport-security").iter().collect::<Vec<_>>(), [expected]);
    // The gateway's own pages (here: the unknown-host error page) carry it too.
    let own = get_over(tls_client(gateway.address, &certificate, b"http/1.1").await, "nowhere.test").await;
    assert_eq!(own.status, 404);
    assert_eq!(own.headers["strict-transport-security"], expected);
    gateway.stop().await;

    // Without the option the gateway adds nothing (the site's own header passes through)…
    let plain_tls =
        start(&harness::config_text(&[("app.test", app.address)], &tls_section(&cert, &key, ""))).await;
    let own = get_over(tls_client(plain_tls.address, &certificate, b"http/1.1").await, "nowhere.test").await;
    assert!(!own.headers.contains_key("strict-transport-security"));
    plain_tls.stop().await;
    // …and over plain HTTP it never sends one.
    let plain = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = harness::send(plain.address, harness::get("nowhere.test", "/")).await;
    assert_eq!(answer.header("strict-transport-security"), None);
    plain.stop().await;
}

/// An HTTPS upstream answering "over tls", presenting `certificate` (signed by a private CA);
/// with `client_ca`, it requires a client certificate issued by that CA.
pub async fn tls_upstream(certificate: &TestCertificate, client_ca: Option<&TestCa>) -> SocketAddr {
    use rustls_pki_types::PrivateKeyDer;
    use rustls_pki_types::pem::PemObject;
    let key = PrivateKeyDer::from_pem_slice(certificate.key_pem.as_bytes()).expect("key");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("versions");
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(ca.der.clone()).expect("client CA");
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .expect("verifier");
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(vec![certificate.der.clone()], key).expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else { return };
                let client = stream.get_ref().1.peer_certificates().map_or(0, <[_]>::len);
                let service = hyper::service::service_fn(move |_request| async move {
                    Ok::<_, std::convert::Infallible>(reply(
                        "text/plain",
                        format!("over tls; client certificates: {client}"),
                    ))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    address
}

/// A gateway config with one HTTPS site on `localhost:{port}` and `site_tls` as its `[tls]`.
fn https_site(address: SocketAddr, site_tls: &str) -> String {
    let text = harness::config_text(&[("secure.test", address)], "")
        .replace(&format!("http://{address}"), &format!("https://localhost:{}", address.port()));
    if site_tls.is_empty() { text } else { format!("{text}[sites.site0.tls]\n{site_tls}\n") }
}

#[tokio::test]
async fn an_upstream_with_a_private_ca_is_trusted_through_its_ca_file_only() {
    let ca = TestCa::new("Private Test CA");
    let address =
        tls_upstream(&ca.issue("localhost", rcgen::ExtendedKeyUsagePurpose::ServerAuth), None).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let ca_file = directory.path().join("ca.pem");
    std::fs::write(&ca_file, &ca.cert_pem).expect("write CA");

    let trusting =
        start(&https_site(address, &format!("ca_file = {:?}", ca_file.display().to_string()))).await;
    let answer = harness::send(trusting.address, harness::get("secure.test", "/")).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.text(), "over tls; client certificates: 0");
    trusting.stop().await;

    let untrusting = start(&https_site(address, "")).await;
    let answer = harness::send(untrusting.address, harness::get("secure.test", "/")).await;
    assert_eq!(answer.status, 502);
    assert_eq!(answer.header("x-toolgate-reason"), Some("upstream_tls"));
    untrusting.stop().await;
}

#[tokio::test]
async fn mutual_tls_presents_the_configured_client_certificate() {
    let server_ca = TestCa::new("Server CA");
    let client_ca = TestCa::new("Client CA");
    let server = server_ca.issue("localhost", rcgen::ExtendedKeyUsagePurpose::ServerAuth);
    let address = tls_upstream(&server, Some(&client_ca)).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let ca_file = directory.path().join("ca.pem");
    std::fs::write(&ca_file, &server_ca.cert_pem).expect("write CA");
    let client = client_ca.issue("toolgate", rcgen::ExtendedKeyUsagePurpose::ClientAuth);
    let (client_cert, client_key) = write_pair(directory.path(), "client", &client);
    let ca_line = format!("ca_file = {:?}", ca_file.display().to_string());

    let identity = format!(
        "{ca_line}\nclient_cert = {:?}\nclient_key = {:?}",
        client_cert.display().to_string(),
        client_key.display().to_string()
    );
    let presenting = start(&https_site(address, &identity)).await;
    let answer = harness::send(presenting.address, harness::get("secure.test", "/")).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.text(), "over tls; client certificates: 1");
    presenting.stop().await;

    let anonymous = start(&https_site(address, &ca_line)).await;
    let answer = harness::send(anonymous.address, harness::get("secure.test", "/")).await;
    assert_eq!(
        answer.status, 502,
        "an upstream that requires a client certificate refuses the gateway without one"
    );
    anonymous.stop().await;
}

#[test]
fn check_config_names_broken_tls_files_and_settings_by_key() {
    let directory = tempfile::tempdir().expect("temp dir");
    let not_a_certificate = directory.path().join("junk.pem");
    std::fs::write(&not_a_certificate, "not a certificate").expect("write");
    let address: SocketAddr = "127.0.0.1:9".parse().expect("address");
    let text = format!(
        "{}[sites.other]\nhost = \"other.test\"\nupstream = \"https://localhost:9\"\n[sites.other.tls]\nca_file = {:?}\nclient_cert = {:?}\nclient_key = \"/nonexistent/client.key\"\n",
        https_site(address, "ca_file = \"/nonexistent/ca.pem\""),
        not_a_certificate.display().to_string(),
        not_a_certificate.display().to_string(),
    );
    let path = directory.path().join("toolgate.toml");
    std::fs::write(&path, text).expect("write config");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("check-config")
        .arg(&path)
        .output()
        .expect("run toolgate");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("sites.site0.tls.ca_file: cannot load CA certificates from /nonexistent/ca.pem"),
        "{stderr}"
    );
    assert!(stderr.contains("sites.other.tls.ca_file: cannot load CA certificates from"), "{stderr}");

    let bad_settings = "public_url = \"http://g.test\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\ninsecure_no_sso = true\n\
        [server.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nmin_version = \"1.1\"\nhsts_include_subdomains = true\n\
        [sites.a]\nhost = \"a.test\"\nupstream = \"https://a.internal\"\n[sites.a.tls]\nclient_cert = \"c.pem\"\n";
    let error = Config::parse(bad_settings, "bad.toml").expect_err("invalid TLS settings").to_string();
    for expected in [
        "line 9: server.tls.min_version: `1.1` is not a TLS version",
        "line 10: server.tls.hsts_include_subdomains: needs server.tls.hsts_max_age",
        "line 15: sites.a.tls.client_cert: needs client_key beside it",
    ] {
        assert!(error.contains(expected), "missing {expected:?} in:\n{error}");
    }
}
