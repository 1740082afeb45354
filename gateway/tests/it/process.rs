//! The `toolgate` binary as an operator runs it: `run --config`, SIGTERM draining in-flight
//! requests, TLS to an upstream trusted through the system roots (`SSL_CERT_FILE`), and the hidden
//! `demo-model` command (the stand-in model alone).

use crate::harness::{self, channel_body, reply, upstream};
use bytes::Bytes;
use http_body_util::BodyExt;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct GatewayProcess {
    pub child: Child,
    pub address: SocketAddr,
    pub admin_address: SocketAddr,
}

pub async fn spawn_gateway(
    config: &str,
    environment: &[(&str, &str)],
) -> (GatewayProcess, tempfile::TempDir) {
    let directory = tempfile::tempdir().expect("temp dir");
    let process = spawn_gateway_in(directory.path(), config, environment).await;
    (process, directory)
}

/// Starts `toolgate run` with `config` written to `directory/toolgate.toml`; its standard error
/// (the log) goes to `directory/stderr.log`.
pub async fn spawn_gateway_in(
    directory: &std::path::Path,
    config: &str,
    environment: &[(&str, &str)],
) -> GatewayProcess {
    let path = directory.join("toolgate.toml");
    std::fs::write(&path, config).expect("write config");
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    command
        .arg("run")
        .arg("--config")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(directory.join("stderr.log")).expect("create stderr.log"))
        .kill_on_drop(true);
    for (name, value) in environment {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("start toolgate");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let (address, admin_address) = tokio::time::timeout(Duration::from_secs(20), async {
        let mut address = None;
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if let Some(listening) = line.strip_prefix("toolgate listening on http://") {
                address = Some(listening.parse::<SocketAddr>().expect("address"));
            }
            if let Some(admin) = line.strip_prefix("toolgate admin on http://") {
                let admin = admin.parse::<SocketAddr>().expect("admin address");
                return (address.expect("listening line comes first"), admin);
            }
        }
        panic!("toolgate exited before listening");
    })
    .await
    .expect("toolgate starts within 20 s");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    GatewayProcess { child, address, admin_address }
}

#[tokio::test]
async fn sigterm_drains_an_in_flight_slow_response() {
    let app = upstream(|_| {
        let (sender, body) = channel_body();
        tokio::spawn(async move {
            let _ = sender.send(Bytes::from_static(b"first half, ")).await;
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let _ = sender.send(Bytes::from_static(b"second half")).await;
        });
        let mut response = http::Response::new(body);
        response.headers_mut().insert("content-type", "text/plain".parse().expect("type"));
        response
    })
    .await;
    let config = harness::config_text(&[("app.test", app.address)], "[timeouts]\nshutdown_grace = \"20s\"");
    let (mut gateway, _directory) = spawn_gateway(&config, &[]).await;

    let response = harness::open(gateway.address, harness::get("app.test", "/slow")).await;
    let mut body = response.into_body();
    let first = body.frame().await.expect("frame").expect("ok").into_data().expect("data");
    assert_eq!(first, "first half, ");

    let pid = gateway.child.id().expect("pid").to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().await.expect("kill");
    assert!(killed.success());

    // New connections are refused once the listener is closed...
    let mut refused = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if tokio::net::TcpStream::connect(gateway.address).await.is_err() {
            refused = true;
            break;
        }
    }
    assert!(refused, "the listener must close on SIGTERM");
    // ...while the request in flight completes.
    let rest = body.collect().await.expect("rest of the body").to_bytes();
    assert_eq!(rest, "second half");
    let status = tokio::time::timeout(Duration::from_secs(10), gateway.child.wait())
        .await
        .expect("exits after draining")
        .expect("status");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn every_request_is_one_json_log_line_with_its_request_id() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let config = harness::config_text(&[("app.test", app.address)], "log_format = \"json\"");
    let (mut gateway, directory) = spawn_gateway(&config, &[("RUST_LOG", "info")]).await;

    let mut request_ids = Vec::new();
    for index in 0..200 {
        let response =
            harness::open(gateway.address, harness::get("app.test", &format!("/item/{index}"))).await;
        assert_eq!(response.status(), 200);
        let id = response.headers()["x-request-id"].to_str().expect("request id").to_owned();
        request_ids.push(id);
    }
    // Stopped at once after the last answer (the log writer's own tests cover lines still
    // waiting at exit).
    let pid = gateway.child.id().expect("pid").to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().await.expect("kill").success());
    let status = tokio::time::timeout(Duration::from_secs(10), gateway.child.wait())
        .await
        .expect("exits")
        .expect("status");
    assert!(status.success(), "{status:?}");

    let log = std::fs::read_to_string(directory.path().join("stderr.log")).expect("stderr.log");
    let answered: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}")))
        .filter(|line: &serde_json::Value| line["message"] == "answered")
        .collect();
    let logged: Vec<&str> = answered.iter().filter_map(|line| line["span"]["request_id"].as_str()).collect();
    assert_eq!(logged, request_ids, "one line per request, in order");
    for line in &answered {
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["status"], 200);
        assert_eq!(line["route"], "pass_through");
        assert!(line["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{line}");
        assert_eq!(line["span"]["site"], "site0");
        assert_eq!(line["span"]["method"], "GET");
        assert_eq!(line["target"], "gateway::routes");
    }
    assert!(!log.contains("/item/"), "paths are not logged");
}

#[tokio::test]
async fn tls_upstream_trusted_through_system_roots() {
    let certificate = crate::tls::certificate("localhost");
    let directory = tempfile::tempdir().expect("temp dir");
    let ca_path = directory.path().join("ca.pem");
    std::fs::write(&ca_path, &certificate.cert_pem).expect("write ca");
    let address = tls_upstream(&certificate).await;
    let config = harness::config_text(&[("secure.test", address)], "")
        .replace(&format!("http://{address}"), &format!("https://localhost:{}", address.port()));
    let (gateway, _config_directory) =
        spawn_gateway(&config, &[("SSL_CERT_FILE", ca_path.to_str().expect("path"))]).await;
    let answer = harness::send(gateway.address, harness::get("secure.test", "/")).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.text(), "over tls");

    // Without the CA the same upstream is refused with a clear reason.
    let (untrusting, _other) = spawn_gateway(&config, &[("SSL_CERT_FILE", "/nonexistent")]).await;
    let answer = harness::send(untrusting.address, harness::get("secure.test", "/")).await;
    assert_eq!(answer.status, 502);
    assert_eq!(answer.header("x-toolgate-reason"), Some("upstream_tls"));
}

async fn tls_upstream(certificate: &crate::tls::TestCertificate) -> SocketAddr {
    use rustls_pki_types::PrivateKeyDer;
    use rustls_pki_types::pem::PemObject;
    let key = PrivateKeyDer::from_pem_slice(certificate.key_pem.as_bytes()).expect("key");
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![certificate.der.clone()], key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else { return };
                let service = hyper::service::service_fn(|_request| async {
                    Ok::<_, std::convert::Infallible>(reply("text/plain", "over tls"))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    address
}

/// `toolgate demo-model` (hidden; the model server of `bench/load.sh relay`): serves the stand-in
/// on loopback, prints its address, answers a chat completion as the stand-in, stops on SIGTERM.
#[tokio::test]
async fn demo_model_command_serves_the_stand_in_and_stops_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["demo-model", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start toolgate demo-model");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("prints its address within 20 s")
        .expect("read stdout")
        .expect("a line");
    let address: SocketAddr = line
        .strip_prefix("toolgate demo model listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .parse()
        .expect("address");
    assert!(address.ip().is_loopback(), "{address}");

    let body = serde_json::json!({
        "model": "toolgate-demo-stand-in",
        "messages": [{"role": "user", "content": "Please export the report for region 3"}],
        "tools": [{"type": "function", "function": {"name": "export_report",
            "description": "Export the report as CSV",
            "parameters": {"type": "object", "properties": {"region": {"type": "number"}}}}}],
    });
    let request = http::Request::post("/v1/chat/completions")
        .header("host", address.to_string())
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let answer = harness::send(address, request).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    let json: serde_json::Value = serde_json::from_slice(&answer.body).expect("JSON answer");
    assert_eq!(json["model"], "toolgate-demo-stand-in", "{json}");
    let call = &json["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "export_report", "the stand-in picks the matching tool: {json}");

    let pid = child.id().expect("pid").to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().await.expect("kill").success());
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exits on SIGTERM")
        .expect("status");
    assert!(status.success(), "{status:?}");
}
