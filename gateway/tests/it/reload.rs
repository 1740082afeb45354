//! Reloading without a restart: the listener's certificate (file change and explicit reload;
//! open connections keep theirs, a broken pair is refused), and SIGHUP on the real binary
//! reloading the configuration together with the policy (an invalid file changes nothing).

use crate::harness::{self, reply, upstream};
use crate::process::spawn_gateway_in;
use crate::tls::{TestCertificate, certificate, connect, start, tls_section, write_pair};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls_pki_types::CertificateDer;
use std::net::SocketAddr;
use std::time::Duration;

/// Polls `condition` every 50 ms until it holds; fails after 20 s (a bound, not a timing claim).
async fn eventually<F, Fut>(what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..400 {
        if condition().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

async fn metrics(admin: SocketAddr) -> String {
    harness::send(admin, harness::get("admin", "/metrics")).await.text()
}

/// The value of one series (`name{labels}`) in the exposition text; 0 when absent.
async fn counter(admin: SocketAddr, series: &str) -> u64 {
    let text = metrics(admin).await;
    text.lines().find_map(|line| line.strip_prefix(series)?.trim().parse().ok()).unwrap_or(0)
}

/// The leaf certificate a fresh connection to the gateway is served.
async fn served_certificate(
    address: SocketAddr,
    roots: &[&CertificateDer<'static>],
) -> CertificateDer<'static> {
    let stream = connect(address, roots, rustls::DEFAULT_VERSIONS, b"http/1.1").await.expect("TLS handshake");
    stream.get_ref().1.peer_certificates().expect("peer certificates")[0].clone()
}

fn overwrite(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).expect("overwrite");
}

#[tokio::test]
async fn a_new_certificate_serves_new_connections_while_open_ones_keep_theirs() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let (old, new): (TestCertificate, TestCertificate) = (certificate("app.test"), certificate("app.test"));
    let (cert, key) = write_pair(directory.path(), "server", &old);
    let gateway =
        start(&harness::config_text(&[("app.test", app.address)], &tls_section(&cert, &key, ""))).await;
    let roots = [&old.der, &new.der];

    // A keep-alive connection opened before the swap.
    let stream = connect(gateway.address, &roots, rustls::DEFAULT_VERSIONS, b"http/1.1").await.expect("TLS");
    assert_eq!(stream.get_ref().1.peer_certificates().expect("peer")[0], old.der);
    let (mut open, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("h1");
    tokio::spawn(connection);
    let request =
        || http::Request::get("/").header("host", "app.test").body(Full::new(Bytes::new())).expect("request");
    assert_eq!(open.send_request(request()).await.expect("response").status(), 200);

    // The files change (as cert-manager or an operator would replace them); the poll notices.
    overwrite(&key, &new.key_pem);
    overwrite(&cert, &new.cert_pem);
    eventually("new connections get the new certificate", || async {
        served_certificate(gateway.address, &roots).await == new.der
    })
    .await;
    // The series exists at 0 from the start: the reload must have counted.
    assert!(
        !metrics(gateway.admin_address).await.contains("toolgate_tls_reloads_total{outcome=\"applied\"} 0")
    );

    // The connection opened before the swap goes on, with the certificate it started with.
    let response = open.send_request(request()).await.expect("the open connection still works");
    assert_eq!(response.status(), 200);
    assert_eq!(response.into_body().collect().await.expect("body").to_bytes(), "ok");
    gateway.stop().await;
}

#[tokio::test]
async fn a_broken_certificate_pair_never_replaces_the_working_one() {
    let app = upstream(|_| reply("text/plain", "ok")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let (working, other) = (certificate("app.test"), certificate("app.test"));
    let (cert, key) = write_pair(directory.path(), "server", &working);
    let gateway =
        start(&harness::config_text(&[("app.test", app.address)], &tls_section(&cert, &key, ""))).await;
    let roots = [&working.der, &other.der];

    // A certificate whose key is not in the key file (a half-finished rotation), reloaded
    // explicitly (what SIGHUP does; the file poll may have seen it as well).
    overwrite(&cert, &other.cert_pem);
    let error = gateway.reloader.reload_certificate().await.expect_err("mismatched pair refused");
    assert!(
        error.to_string().starts_with("server.tls: certificate and key are not usable together"),
        "{error}"
    );
    assert_eq!(served_certificate(gateway.address, &roots).await, working.der, "the working pair stays");
    let admin = gateway.admin_address;
    let rejected = "toolgate_tls_reloads_total{outcome=\"rejected\"}";
    let before = counter(admin, rejected).await;
    assert!(before >= 1);

    // Garbage in the certificate file, noticed by the file poll.
    overwrite(&cert, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
    eventually("the poll rejects the garbage", || async { counter(admin, rejected).await > before }).await;
    assert_eq!(served_certificate(gateway.address, &roots).await, working.der, "still the working pair");
    assert_eq!(counter(admin, "toolgate_tls_reloads_total{outcome=\"applied\"}").await, 0);

    // Every rejection is audited, naming the certificate file only.
    let page =
        gateway::audit::query::find(gateway.state.audit.store(), &Default::default(), 0, 50).expect("audit");
    let audited: Vec<_> = page
        .records
        .iter()
        .filter(|record| record.event.kind == Some(gateway::audit::event::EventKind::CertificateRejected))
        .collect();
    assert_eq!(audited.len() as u64, counter(admin, rejected).await);
    assert_eq!(audited[0].event.resource.as_deref(), Some(cert.display().to_string().as_str()));
    gateway.stop().await;
}

/// A gateway configuration file in `directory` with `sites` and the policy file beside it.
fn config_file(sites: &[(&str, &str, SocketAddr)]) -> String {
    let mut text = String::from(
        "public_url = \"http://gateway.test\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
         insecure_no_sso = true\n[store]\npath = \":memory:\"\n[policy]\nfile = \"policy.toml\"\n",
    );
    for (id, host, address) in sites {
        text.push_str(&format!("[sites.{id}]\nhost = \"{host}\"\nupstream = \"http://{address}\"\n"));
    }
    text
}

fn rule(id: &str, site: &str) -> String {
    format!("[[rule]]\nid = \"{id}\"\nsites = [\"{site}\"]\ntools.allow = [\"lookup\"]\n")
}

async fn body_of(address: SocketAddr, host: &str) -> (u16, String) {
    let answer = harness::send(address, harness::get(host, "/")).await;
    (answer.status.as_u16(), answer.text())
}

async fn hangup(gateway: &crate::process::GatewayProcess) {
    let pid = gateway.child.id().expect("pid").to_string();
    let sent = tokio::process::Command::new("kill").args(["-HUP", &pid]).status().await.expect("kill");
    assert!(sent.success());
}

#[tokio::test]
async fn sighup_reloads_the_configuration_with_its_policy_and_refuses_invalid_files() {
    let first = upstream(|_| reply("text/plain", "first")).await;
    let second = upstream(|_| reply("text/plain", "second")).await;
    let added = upstream(|_| reply("text/plain", "added")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let (config_path, policy_path) =
        (directory.path().join("toolgate.toml"), directory.path().join("policy.toml"));
    std::fs::write(&policy_path, rule("tasks-lookup", "tasks")).expect("policy");
    let gateway =
        spawn_gateway_in(directory.path(), &config_file(&[("tasks", "app.test", first.address)]), &[]).await;
    assert_eq!(body_of(gateway.address, "app.test").await, (200, "first".into()));
    assert_eq!(body_of(gateway.address, "new.test").await.0, 404);

    // A changed upstream, a new site, a policy naming that site (valid only with the new
    // configuration) and a listener change that needs a restart.
    let sites = [("tasks", "app.test", second.address), ("wiki", "new.test", added.address)];
    let changed =
        config_file(&sites).replace("listen = \"127.0.0.1:0\"\nadmin", "listen = \"127.0.0.1:1\"\nadmin");
    std::fs::write(&config_path, changed).expect("config");
    std::fs::write(&policy_path, format!("{}{}", rule("tasks-lookup", "tasks"), rule("wiki-lookup", "wiki")))
        .expect("policy");
    hangup(&gateway).await;
    let admin = gateway.admin_address;
    eventually("the configuration is applied", || async {
        metrics(admin).await.contains("toolgate_config_reloads_total{outcome=\"applied\"} 1")
    })
    .await;
    assert_eq!(
        body_of(gateway.address, "app.test").await,
        (200, "second".into()),
        "the changed upstream is used"
    );
    assert_eq!(body_of(gateway.address, "new.test").await, (200, "added".into()), "the new site works");
    let text = metrics(admin).await;
    assert!(text.contains("toolgate_policy_rules 2"), "the policy came with it:\n{text}");

    // An invalid file changes nothing, the policy included (no "policy reloaded" after it).
    let applied_policies = |text: &str| {
        text.lines()
            .find(|line| line.starts_with("toolgate_policy_reloads_total{outcome=\"applied\"}"))
            .map(str::to_owned)
    };
    let policies_before = applied_policies(&metrics(admin).await);
    std::fs::write(&config_path, config_file(&sites).replace("upstream =", "upstrem =")).expect("config");
    hangup(&gateway).await;
    eventually("the invalid configuration is rejected", || async {
        metrics(admin).await.contains("toolgate_config_reloads_total{outcome=\"rejected\"} 1")
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        applied_policies(&metrics(admin).await),
        policies_before,
        "the policy was not reloaded either"
    );
    assert_eq!(body_of(gateway.address, "app.test").await, (200, "second".into()));
    assert_eq!(body_of(gateway.address, "new.test").await, (200, "added".into()));

    // Nor does a valid file the policy does not fit (it still names the removed site).
    std::fs::write(&config_path, config_file(&[("tasks", "app.test", first.address)])).expect("config");
    hangup(&gateway).await;
    eventually("the configuration without the policy's site is rejected", || async {
        metrics(admin).await.contains("toolgate_config_reloads_total{outcome=\"rejected\"} 2")
    })
    .await;
    assert_eq!(body_of(gateway.address, "app.test").await, (200, "second".into()));
    assert_eq!(body_of(gateway.address, "new.test").await, (200, "added".into()));
    assert!(metrics(admin).await.contains("toolgate_policy_rules 2"));
}

#[tokio::test]
async fn an_in_process_reload_is_audited_and_names_what_needs_a_restart() {
    let (first, second) =
        (upstream(|_| reply("text/plain", "first")).await, upstream(|_| reply("text/plain", "second")).await);
    let directory = tempfile::tempdir().expect("temp dir");
    let (config_path, policy_path) =
        (directory.path().join("toolgate.toml"), directory.path().join("policy.toml"));
    std::fs::write(&policy_path, rule("tasks-lookup", "tasks")).expect("policy");
    std::fs::write(&config_path, config_file(&[("tasks", "app.test", first.address)])).expect("config");
    let config = gateway::config::Config::load(&config_path).expect("config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let gateway = gateway::app::start(config, listener, admin, gateway::app::shutdown::Shutdown::new())
        .await
        .expect("start");

    let next = config_file(&[("tasks", "app.test", second.address)]).replace(":memory:", "elsewhere");
    std::fs::write(&config_path, next).expect("config");
    let reloaded = gateway.reloader.reload_config().await.expect("valid configuration");
    assert_eq!(reloaded.restart_needed, ["store"]);
    assert_eq!(reloaded.sites, 1);
    assert_eq!(body_of(gateway.address, "app.test").await, (200, "second".into()));
    let current = gateway.reloader.current();
    assert_eq!(
        current.config.store,
        gateway::config::StoreLocation::Memory,
        "the store keeps its running value"
    );
    assert!(std::sync::Arc::ptr_eq(&current.audit, &gateway.state.audit), "long-lived state is shared");

    let invalid = config_file(&[("tasks", "app.test", first.address)])
        .replace("insecure_no_sso = true\n", "insecure_no_sso = true\n[limits]\nmax_headers = 1\n");
    std::fs::write(&config_path, invalid).expect("config");
    let error = gateway.reloader.reload_config().await.expect_err("invalid configuration").to_string();
    assert!(error.contains("toolgate.toml: line 7: limits.max_headers: must be at least 16"), "{error}");
    assert_eq!(body_of(gateway.address, "app.test").await, (200, "second".into()), "nothing changed");
    let page =
        gateway::audit::query::find(gateway.state.audit.store(), &Default::default(), 0, 50).expect("audit");
    let kinds: Vec<_> = page.records.iter().filter_map(|record| record.event.kind).collect();
    use gateway::audit::event::EventKind;
    assert!(
        kinds.contains(&EventKind::ConfigReload) && kinds.contains(&EventKind::ConfigRejected),
        "{kinds:?}"
    );
    gateway.stop().await;
}

/// Every documented series with a known label set exists at 0 for every configured site from
/// the start, so the alerts on their increase (docs/operations.md) fire on a site's first
/// upstream failure, refused page, model failure or blocked submission.
#[tokio::test(flavor = "multi_thread")]
async fn site_series_exist_at_zero_from_the_start() {
    let site = upstream(|_| reply("text/plain", "ok")).await;
    let gateway = harness::gateway(&[("tasks.test", site.address)], "").await;
    let text = metrics(gateway.admin_address).await;
    for series in [
        "toolgate_upstream_errors_total{reason=\"upstream_refused\",site=\"site0\"} 0",
        "toolgate_upstream_errors_total{reason=\"upstream_timeout\",site=\"site0\"} 0",
        "toolgate_rewrite_failures_total{reason=\"rewrite_memory\",site=\"site0\"} 0",
        "toolgate_llm_calls_total{outcome=\"llm_unreachable\",site=\"site0\"} 0",
        "toolgate_llm_calls_total{outcome=\"ok\",site=\"site0\"} 0",
        "toolgate_enforced_blocks_total{reason=\"replayed\",site=\"site0\"} 0",
        "toolgate_enforced_blocks_total{reason=\"marked_malformed\",site=\"site0\"} 0",
        "toolgate_inventory_changes_total{change=\"changed\",site=\"site0\"} 0",
        "toolgate_audit_chain_damaged 0",
    ] {
        assert!(text.lines().any(|line| line == series), "{series} missing:\n{text}");
    }
    gateway.stop().await;
}
