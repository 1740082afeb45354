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
        let store = gateway::app::open_store(&config.store).expect("store");
        let key = gateway::app::audit_key(&config, store.as_ref()).expect("key");
        let log = Arc::new(AuditLog::start(store.clone(), key, Metrics::new()).expect("log"));
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
    let store = gateway::app::open_store(&config.store).expect("store");
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
        let store = gateway::app::open_store(&config.store).expect("store");
        let key = gateway::app::audit_key(&config, store.as_ref()).expect("key");
        let log = AuditLog::start(store, key, Metrics::new()).expect("log");
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
    let store = gateway::app::open_store(&config.store).expect("store");
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
