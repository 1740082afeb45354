//! One audit chain with several writers: three `toolgate audit stress` processes (as three
//! replicas' writers) append to one PostgreSQL database at once and are killed with SIGKILL
//! under load. Every record any of them acknowledged is in the log, the chain verifies, and a
//! writer started afterwards goes on from where the killed ones stopped.

use crate::postgres::cluster::{Cluster, PASSWORD};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

/// A configuration on the shared store (the keys a shared store requires are named, not read:
/// the audit commands never sign anybody in).
fn config_in(directory: &Path, url: &str) -> PathBuf {
    std::fs::write(directory.join("db-password"), PASSWORD).expect("password file");
    std::fs::write(directory.join("audit.key"), "a shared audit key").expect("audit key");
    let path = directory.join("toolgate.toml");
    let text = format!(
        "public_url = \"http://localhost:1\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
         [store]\nurl = \"{url}\"\npassword = \"file:db-password\"\ntls = \"disable\"\n\
         [audit]\nkey = \"file:audit.key\"\n\
         [sso]\nissuer = \"http://127.0.0.1:9\"\nclient_id = \"toolgate\"\nclient_secret = \"env:UNUSED\"\n\
         session_keys = [\"env:UNUSED\"]\nassertion_keys = [\"env:UNUSED\"]\n\
         [sites.a]\nhost = \"a.test\"\nupstream = \"http://127.0.0.1:1\"\n"
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// Starts a writer that appends until killed, printing each acknowledgement.
fn writer(config: &Path) -> tokio::process::Child {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["audit", "stress", "--config"])
        .arg(config)
        .args(["--count", "100000000", "--concurrency", "32", "--print-acks"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start a writer")
}

/// The sequence numbers a writer acknowledged, until its output ends; `progress` hears of the
/// first hundred.
async fn acknowledged(
    stdout: tokio::process::ChildStdout,
    progress: mpsc::UnboundedSender<()>,
) -> BTreeSet<u64> {
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = BTreeSet::new();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(seq) = line.strip_prefix("ack ").and_then(|seq| seq.parse().ok()) {
            seen.insert(seq);
            if seen.len() == 100 {
                let _ = progress.send(());
            }
        }
    }
    seen
}

async fn toolgate(arguments: &[&str]) -> (bool, String) {
    // Bounded: a command that never ends (a walk that starts over) fails the test, not CI.
    let run = Command::new(env!("CARGO_BIN_EXE_toolgate")).args(arguments).kill_on_drop(true).output();
    let output = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .unwrap_or_else(|_| panic!("toolgate {arguments:?} did not finish within 180 s"))
        .expect("run toolgate");
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_writers_keep_one_chain_and_lose_no_acknowledged_record_to_sigkill() {
    let cluster = Cluster::start();
    let database = cluster.database("audit").await;
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_in(directory.path(), &cluster.url(&database));
    let config_arg = config.to_str().expect("path");

    let mut writers: Vec<_> = (0..3).map(|_| writer(&config)).collect();
    let (progress, mut writing) = mpsc::unbounded_channel();
    let readers: Vec<_> = writers
        .iter_mut()
        .map(|child| tokio::spawn(acknowledged(child.stdout.take().expect("stdout"), progress.clone())))
        .collect();
    // Once all three are appending, one dies under load; the others a moment later.
    for _ in 0..3 {
        tokio::time::timeout(Duration::from_secs(60), writing.recv())
            .await
            .expect("every writer appends within a minute")
            .expect("a writer's output");
    }
    writers[1].start_kill().expect("SIGKILL");
    tokio::time::sleep(Duration::from_millis(700)).await;
    for child in &mut writers {
        let _ = child.start_kill();
        let status = child.wait().await.expect("reaped");
        assert!(!status.success(), "every writer was killed, none finished");
    }
    let mut every = BTreeSet::new();
    for (index, reader) in readers.into_iter().enumerate() {
        let acknowledged = reader.await.expect("reader");
        assert!(!acknowledged.is_empty(), "writer {index} appended to the shared chain");
        assert!(acknowledged.is_disjoint(&every), "writer {index} got sequence numbers another writer got");
        every.extend(acknowledged);
    }

    let client = cluster.client(&database).await;
    let stored: BTreeSet<u64> = client
        .query("SELECT seq FROM toolgate_audit", &[])
        .await
        .expect("read the log")
        .iter()
        .map(|row| u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        .collect();
    let missing: Vec<_> = every.difference(&stored).take(5).collect();
    assert!(missing.is_empty(), "acknowledged but not in the log: {missing:?}");
    let last = stored.last().copied().unwrap_or(0);
    assert_eq!(stored.len() as u64, last, "one sequence, no gaps");
    let (ok, output) = toolgate(&["audit", "verify", "--config", config_arg]).await;
    assert!(ok, "the chain verifies: {output}");

    // A writer started afterwards appends after the killed ones, and the chain still verifies.
    let (ok, output) =
        toolgate(&["audit", "stress", "--config", config_arg, "--count", "10", "--print-acks"]).await;
    assert!(ok, "{output}");
    assert!(output.contains(&format!("ack {}", last + 10)), "it went on from {last}: {output}");
    let (ok, output) = toolgate(&["audit", "verify", "--config", config_arg]).await;
    assert!(ok, "{output}");
    assert!(output.contains(&format!("..{}", last + 10)), "{output}");
}

/// The audit and store commands run against the database while a replica's writer appends:
/// no single-process lock. The export reads the records, the backup copies every table into a
/// verified embedded store, the prune cuts the log with a checkpoint the chain verifies from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_and_backup_commands_work_beside_a_running_writer() {
    let cluster = Cluster::start();
    let database = cluster.database("beside").await;
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_in(directory.path(), &cluster.url(&database));
    let config_arg = config.to_str().expect("path");
    // More than one page of the backup's walk (1,024 records), so it must resume after a key.
    let (ok, output) =
        toolgate(&["audit", "stress", "--config", config_arg, "--count", "1500", "--concurrency", "64"])
            .await;
    assert!(ok, "{output}");

    let mut running = writer(&config);
    let (progress, mut writing) = mpsc::unbounded_channel();
    let reader = tokio::spawn(acknowledged(running.stdout.take().expect("stdout"), progress));
    tokio::time::timeout(Duration::from_secs(60), writing.recv())
        .await
        .expect("the writer appends")
        .expect("output");

    let export = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["audit", "export", "--config", config_arg, "--format", "jsonl"])
        .output()
        .await
        .expect("export runs");
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    let exported = String::from_utf8_lossy(&export.stdout).lines().count();
    assert!(exported >= 1600, "the records so far, the writer's included: {exported}");

    let copy = directory.path().join("backup");
    let (ok, output) =
        toolgate(&["store", "backup", "--config", config_arg, "--to", copy.to_str().expect("path")]).await;
    assert!(ok, "{output}");
    assert!(output.contains("from the database") && output.contains("audit chain ok"), "{output}");

    let cutoff =
        humantime::format_rfc3339_seconds(std::time::SystemTime::now() + Duration::from_secs(1)).to_string();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (ok, output) = toolgate(&["audit", "prune", "--config", config_arg, "--before", &cutoff]).await;
    assert!(ok, "{output}");
    assert!(output.contains("pruned"), "{output}");

    running.start_kill().expect("SIGKILL");
    let _ = running.wait().await;
    let acknowledged = reader.await.expect("reader");
    let (ok, output) = toolgate(&["audit", "verify", "--config", config_arg]).await;
    assert!(ok, "the chain verifies from the checkpoint: {output}");
    let last = acknowledged.last().copied().unwrap_or(0);
    let verified_to: u64 = output.trim().rsplit("..").next().and_then(|last| last.parse().ok()).unwrap_or(0);
    assert!(verified_to >= last, "acknowledged {last}, the log ends at {verified_to}");
}
