//! The gateway's own time in an agent turn, against the deterministic stand-in model on loopback:
//! a turn through `/.toolgate/agent/turn` (prompt building, policy, redaction, audit, the model
//! call, SSE to the page) next to the same model call made directly. The difference is the
//! gateway's share; the budget is ≤ 2 ms at p99.
//!
//! Besides criterion's means, it prints p50/p99 of both over 500 turns each (criterion reports
//! means; the budget is a percentile).

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use gateway::app::shutdown::Shutdown;
use gateway::config::Config;
use gateway::llm::{ChatRequest, LlmClient, LlmConfig, Message};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

const POLICY: &str = "[[rule]]\nid = \"bench\"\ntools.allow = [\"add_task\"]\ncontexts.allow = [\"task_list\"]\nredact = [\"email\"]\n";
const TURN: &str = r##"{"message": "What is on the list? Ask carol@corp.example.",
  "tools": [{"name": "add_task", "description": "Add a task", "source": "voix",
             "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}}}],
  "contexts": [{"name": "task_list", "text": "#1 Water the plants\n#2 Call dana@corp.example"}]}"##;

struct Setup {
    runtime: tokio::runtime::Runtime,
    gateway: SocketAddr,
    model: LlmClient,
    csrf: String,
    _policy: tempfile::TempDir,
}

fn setup() -> Setup {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let (gateway, model, csrf, policy) = runtime.block_on(async {
        let model_listener = TcpListener::bind("127.0.0.1:0").await.expect("bind model");
        let model_address = model_listener.local_addr().expect("address");
        tokio::spawn(gateway::demo::model::serve(model_listener, std::future::pending()));
        let directory = tempfile::tempdir().expect("dir");
        std::fs::write(directory.path().join("policy.toml"), POLICY).expect("policy");
        let text = format!(
            "public_url = \"http://gateway.test\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
             insecure_no_sso = true\nlog_format = \"json\"\n[store]\npath = \":memory:\"\n[policy]\nfile = {:?}\n\
             [llm]\nbase_url = \"http://{model_address}/v1\"\nmodel = \"toolgate-demo-stand-in\"\n\
             [agent]\nmax_concurrent_turns = 64\ntokens_per_hour = 1000000000000\n\
             [sites.tasks]\nhost = \"tasks.test\"\nupstream = \"http://127.0.0.1:9\"\n",
            directory.path().join("policy.toml").display().to_string()
        );
        let config = Config::parse(&text, "bench.toml").expect("config");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
        let running = gateway::app::start(config, listener, admin, Shutdown::new()).await.expect("gateway");
        let session = request(running.address, "GET", "/.toolgate/agent/session", "", "").await;
        let csrf = serde_json::from_str::<serde_json::Value>(&session).expect("session")["csrf"]
            .as_str()
            .expect("csrf")
            .to_owned();
        let base = url::Url::parse(&format!("http://{model_address}/v1")).expect("url");
        let model = LlmClient::new(LlmConfig::new(base, "toolgate-demo-stand-in")).expect("client");
        let address = running.address;
        // Dropping `Running` would start the drain; the gateway serves until the process ends.
        std::mem::forget(running);
        (address, model, csrf, directory)
    });
    Setup { runtime, gateway, model, csrf, _policy: policy }
}

/// One HTTP/1.1 request on a fresh connection; the whole answer body as text.
async fn request(address: SocketAddr, method: &str, path: &str, csrf: &str, body: &str) -> String {
    let stream = TcpStream::connect(address).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "tasks.test")
        .header("content-type", "application/json")
        .header("x-toolgate-csrf", csrf)
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("request");
    let response = sender.send_request(request).await.expect("response");
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// One whole turn through the gateway (the stand-in answers with text: no tool round).
async fn turn(setup_gateway: SocketAddr, csrf: &str) {
    let events = request(setup_gateway, "POST", "/.toolgate/agent/turn", csrf, TURN).await;
    assert!(events.contains("event: done"), "the turn did not finish: {events}");
}

/// The same model call made directly.
async fn direct(model: &LlmClient) {
    let request = ChatRequest {
        messages: vec![Message::System("bench".into()), Message::User("What is on the list?".into())],
        ..ChatRequest::default()
    };
    let mut stream = model.stream(request).await.expect("stream");
    while let Some(event) = stream.next().await {
        event.expect("event");
    }
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |fraction: f64| samples[((samples.len() as f64 * fraction) as usize).min(samples.len() - 1)];
    (at(0.5), at(0.99))
}

fn agent_turn(criterion: &mut Criterion) {
    let setup = setup();
    let mut group = criterion.benchmark_group("agent");
    group.bench_function("model_direct", |bencher| {
        bencher.iter(|| setup.runtime.block_on(direct(&setup.model)))
    });
    group.bench_function("turn_via_gateway", |bencher| {
        bencher.iter(|| setup.runtime.block_on(turn(setup.gateway, &setup.csrf)))
    });
    group.finish();

    let (direct_samples, turn_samples) = setup.runtime.block_on(async {
        let (mut direct_samples, mut turn_samples) = (Vec::new(), Vec::new());
        for _ in 0..500 {
            let started = Instant::now();
            direct(&setup.model).await;
            direct_samples.push(started.elapsed());
            let started = Instant::now();
            turn(setup.gateway, &setup.csrf).await;
            turn_samples.push(started.elapsed());
        }
        (direct_samples, turn_samples)
    });
    let (direct_p50, direct_p99) = percentiles(direct_samples);
    let (turn_p50, turn_p99) = percentiles(turn_samples);
    println!(
        "agent turn over 500 runs: model direct p50 {direct_p50:?} p99 {direct_p99:?}; through the gateway p50 \
         {turn_p50:?} p99 {turn_p99:?}; the gateway's own share p50 {:?} p99 {:?} (budget 2 ms at p99)",
        turn_p50.saturating_sub(direct_p50),
        turn_p99.saturating_sub(direct_p99)
    );
}

criterion_group!(benches, agent_turn);
criterion_main!(benches);
