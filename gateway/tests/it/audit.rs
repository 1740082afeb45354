//! The audit log as an operator meets it: records acknowledged by a process that is then
//! killed (SIGKILL) are all there after restart and the chain verifies; exports round-trip;
//! hostile values are stored and exported safely.

use gateway::audit::chain::Record;
use gateway::audit::event::{AuditEvent, EventKind};
use gateway::audit::{AuditLog, query};
use gateway::config::Config;
use gateway::metrics::Metrics;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn config_in(directory: &Path) -> PathBuf {
    let path = directory.join("toolgate.toml");
    std::fs::write(
        &path,
        "public_url = \"http://localhost:1\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
         insecure_no_sso = true\n[store]\npath = \"data\"\n[audit]\nkey = \"file:audit.key\"\n\
         [sites.a]\nhost = \"a.test\"\nupstream = \"http://127.0.0.1:1\"\n",
    )
    .expect("write config");
    std::fs::write(directory.join("audit.key"), "a test audit key").expect("write key");
    path
}

async fn toolgate(arguments: &[&str]) -> (bool, String, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_toolgate")).args(arguments).output().await.expect("run toolgate");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A small deterministic generator, so a failing cycle can be reproduced.
struct Dice(u64);

impl Dice {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn acknowledged_records_survive_sigkill_at_random_moments() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_in(directory.path());
    let config = config.to_str().expect("path");
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
            | 1;
    let mut dice = Dice(seed);
    let mut highest_acknowledged = 0u64;
    for cycle in 0..50 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args([
                "audit",
                "stress",
                "--config",
                config,
                "--count",
                "100000000",
                "--concurrency",
                "16",
                "--print-acks",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start the writer");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let delay = Duration::from_millis(20 + dice.next(200));
        let reading = async {
            let mut highest = 0;
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(seq) = line.strip_prefix("ack ").and_then(|seq| seq.parse::<u64>().ok()) {
                    highest = highest.max(seq);
                }
            }
            highest
        };
        let killer = async {
            tokio::time::sleep(delay).await;
            child.start_kill().expect("SIGKILL");
            child.wait().await.expect("reaped")
        };
        let (highest, status) = tokio::join!(reading, killer);
        assert!(!status.success(), "cycle {cycle} (seed {seed}): the writer must have been killed");
        highest_acknowledged = highest_acknowledged.max(highest);

        let (ok, stdout, stderr) = toolgate(&["audit", "verify", "--config", config]).await;
        assert!(ok, "cycle {cycle} (seed {seed}): chain broken after SIGKILL: {stdout}{stderr}");
        let last: u64 = stdout
            .trim()
            .rsplit("..")
            .next()
            .and_then(|last| last.parse().ok())
            .unwrap_or_else(|| panic!("verify output: {stdout}"));
        assert!(
            last >= highest_acknowledged,
            "cycle {cycle} (seed {seed}): record {highest_acknowledged} was acknowledged but the log ends at {last}"
        );
    }
    assert!(highest_acknowledged > 0, "some records were acknowledged");
}

/// Acknowledged means fsynced: sled's own flush is `sync_file_range`, which neither empties the
/// disk's write cache nor writes the file's metadata, so a power cut could undo it. Watched from
/// outside with strace: one writer, so each record is a batch of its own, and each batch needs
/// an `fdatasync` of the store's log before its acknowledgement.
#[tokio::test(flavor = "multi_thread")]
async fn every_acknowledged_batch_is_fdatasynced_first() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_in(directory.path());
    let trace = directory.path().join("syscalls");
    let output = Command::new("/usr/bin/strace")
        .args(["-f", "-qq", "-e", "trace=fdatasync", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(["audit", "stress", "--config"])
        .arg(&config)
        .args(["--count", "20", "--concurrency", "1", "--print-acks"])
        .output()
        .await
        .expect("strace runs (the test command installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.lines().filter(|line| line.starts_with("ack ")).count(), 20, "{stdout}");
    let syscalls = std::fs::read_to_string(&trace).expect("strace output");
    let synced = syscalls.lines().filter(|line| line.contains("fdatasync(") && line.ends_with("= 0")).count();
    assert!(synced >= 20, "20 acknowledged batches, {synced} successful fdatasync calls:\n{syscalls}");
}

#[tokio::test(flavor = "multi_thread")]
async fn exports_round_trip_and_hostile_values_stay_inert() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config_path = config_in(directory.path());
    let config = Config::load(&config_path).expect("config");
    let hostile = [
        "eve\r\nseq=\"999\" forged line",
        "\u{1b}[2J\u{1b}[31mred alert",
        "nul\0byte",
        &"w".repeat(64 * 1024),
        "/admin/../../etc/passwd?x=\n<script>",
    ];
    {
        let store = embedded_store(&config);
        let key = gateway::app::audit_key(&config, store.as_ref()).expect("key");
        let log = Arc::new(
            AuditLog::start(&gateway::store::StoreHandle::Embedded(store.clone()), key, Metrics::new())
                .expect("log"),
        );
        for value in hostile {
            let event = AuditEvent::new(EventKind::AccessDenied)
                .actor(value, Some(value), &[value.to_owned()])
                .site(value)
                .resource(value);
            log.record(event.decision("deny", "site_access_rule")).await.expect("recorded");
        }
    }
    // The writer thread releases the store when its queue closes; give it a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let config_arg = config_path.to_str().expect("path");
    let (ok, jsonl, stderr) =
        toolgate(&["audit", "export", "--config", config_arg, "--format", "jsonl"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(jsonl.lines().count(), hostile.len(), "one line per record, whatever the values");
    let exported: Vec<Record> =
        jsonl.lines().map(|line| serde_json::from_str(line).expect("each line is a record")).collect();
    let (ok, syslog, stderr) =
        toolgate(&["audit", "export", "--config", config_arg, "--format", "syslog"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(syslog.lines().count(), hostile.len());
    for line in jsonl.lines().chain(syslog.lines()) {
        assert!(
            !line.contains('\r') && !line.contains('\u{1b}') && !line.contains('\0'),
            "raw control character in {line:.120}"
        );
    }
    assert!(
        syslog.lines().all(|line| line.starts_with("<110>1 ")),
        "every syslog line is one RFC 5424 message"
    );

    // Re-imported JSON lines equal the stored records exactly.
    let store = embedded_store(&config);
    let stored = query::find(store.as_ref(), &query::Filter::default(), 0, 100).expect("query").records;
    assert_eq!(exported, stored);
    assert_eq!(
        stored[0].event.actor.as_ref().map(|actor| actor.user_id.as_str()),
        Some(hostile[0]),
        "stored exactly, escaped only on output"
    );
    assert!(stored.iter().all(Record::hash_is_valid));
}

/// `audit prune` writes its own record (`pruning`, with the count) before it deletes anything,
/// so an interrupted prune leaves a trace; the completion (`pruned`) follows, and the chain
/// still verifies from the checkpoint.
#[tokio::test]
async fn a_prune_is_audited_before_it_deletes() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config_path = config_in(directory.path());
    let config = Config::load(&config_path).expect("config");
    {
        let store = embedded_store(&config);
        let key = gateway::app::audit_key(&config, store.as_ref()).expect("key");
        let log =
            AuditLog::start(&gateway::store::StoreHandle::Embedded(store), key, Metrics::new()).expect("log");
        for index in 0..5 {
            log.record(AuditEvent::new(EventKind::Login).actor(&format!("user{index}"), None, &[]))
                .await
                .expect("record");
        }
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let before = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let (ok, stdout, stderr) =
        toolgate(&["audit", "prune", "--config", config_path.to_str().expect("path"), "--before", &before])
            .await;
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("pruned 5 records"), "{stdout}");
    let (ok, stdout, stderr) =
        toolgate(&["audit", "verify", "--config", config_path.to_str().expect("path")]).await;
    assert!(ok, "the pruned log verifies: {stdout}{stderr}");
    let store = embedded_store(&config);
    let page = query::find(store.as_ref(), &Default::default(), 0, 50).expect("records");
    let checkpoints: Vec<(u64, String)> = page
        .records
        .iter()
        .filter(|record| record.event.kind == Some(EventKind::Checkpoint))
        .map(|record| (record.seq, record.event.decision.clone().unwrap_or_default()))
        .collect();
    assert_eq!(checkpoints.len(), 2, "{checkpoints:?}");
    let (pruning, pruned) =
        (&checkpoints.iter().find(|c| c.1 == "pruning"), &checkpoints.iter().find(|c| c.1 == "pruned"));
    let (pruning, pruned) = (pruning.expect("the prune's own record"), pruned.expect("the completion"));
    assert!(pruning.0 < pruned.0, "the prune was recorded before it ran: {checkpoints:?}");
    assert!(
        page.records.iter().all(|record| record.event.kind != Some(EventKind::Login)),
        "the logins are gone"
    );
}

/// Damage in an older part of the log does not hide: start-up checks only the end of the chain,
/// and the full verification that follows in the background reports the damage in the metric,
/// `/readyz`, and the dashboard's chain status, while the gateway keeps serving.
#[tokio::test(flavor = "multi_thread")]
async fn damage_deep_in_the_log_is_found_after_start() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config_path = config_in(directory.path());
    let config = Config::load(&config_path).expect("config");
    {
        let store = embedded_store(&config);
        let key = gateway::app::audit_key(&config, store.as_ref()).expect("key");
        let log = Arc::new(
            AuditLog::start(&gateway::store::StoreHandle::Embedded(store.clone()), key, Metrics::new())
                .expect("log"),
        );
        // In order for the first few (record 3 is user2), then all at once (group commit).
        for index in 0..5 {
            log.record(AuditEvent::new(EventKind::Login).actor(&format!("user{index}"), None, &[]))
                .await
                .expect("record");
        }
        let mut writers = tokio::task::JoinSet::new();
        for index in 5..1500 {
            let log = log.clone();
            writers.spawn(async move {
                log.record(AuditEvent::new(EventKind::Login).actor(&format!("user{index}"), None, &[])).await
            });
        }
        while let Some(written) = writers.join_next().await {
            written.expect("writer").expect("record");
        }
        // Record 3 is far from the end: an edit there escapes the start-up check.
        let key = Record::key(3);
        let stored = store.get(gateway::store::Table::Audit, &key).expect("get").expect("record 3");
        let edited = String::from_utf8(stored).expect("json").replace("\"user2\"", "\"mallory\"");
        store.put(gateway::store::Table::Audit, &key, edited.as_bytes()).expect("edit");
        store.flush().expect("flush");
    }
    // sled lets go of the directory a moment after the last handle is dropped.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
    let running = gateway::app::start(config, listener, admin, gateway::app::shutdown::Shutdown::new())
        .await
        .expect("a log damaged deep inside still starts: the damage is reported, not fatal");
    let admin = running.admin_address;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let metrics = crate::harness::send(admin, crate::harness::get("admin", "/metrics")).await.text();
        if metrics.lines().any(|line| line == "toolgate_audit_chain_damaged 1") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no damage reported within 60 s:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ready = crate::harness::send(admin, crate::harness::get("admin", "/readyz")).await;
    assert_eq!(ready.status, http::StatusCode::SERVICE_UNAVAILABLE, "{}", ready.text());
    assert!(ready.text().contains("audit chain damaged"), "{}", ready.text());
    let healthy = crate::harness::send(admin, crate::harness::get("admin", "/healthz")).await;
    assert_eq!(healthy.status, http::StatusCode::OK, "the process itself is fine");
    let status = running.state.dashboard.chain.recent(&running.state.audit, &running.state.metrics).await;
    assert!(
        matches!(status, dashboard::ChainStatus::Broken { at_seq: 3, .. }),
        "the dashboard names the first bad record: {status:?}"
    );
    running.stop().await;
}

/// The embedded store the configuration names, opened here (the gateway is stopped).
fn embedded_store(config: &Config) -> Arc<dyn gateway::store::Store> {
    let gateway::config::StoreLocation::Directory(path) = &config.store else { panic!("a store directory") };
    Arc::new(gateway::store::SledStore::open(path, None).expect("store"))
}
