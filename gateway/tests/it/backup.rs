//! `toolgate store backup` and `restore` as an operator runs them: a backup taken from a running
//! gateway while audit records are being appended restores to a store whose chain verifies; a
//! streamed backup restores, and a cut or tampered one changes nothing; the admin endpoint wants
//! POST, a loopback peer and the token; a stopped store is read directly.

use gateway::admin::backup::TOKEN_FILE;
use gateway::app::shutdown::Shutdown;
use gateway::app::{self, Running};
use gateway::audit::event::{AuditEvent, EventKind};
use gateway::config::Config;
use gateway::store::Table;
use gateway::store::backup::MAGIC;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::net::TcpListener;
use tokio::process::Command;

/// Writes `name` (a gateway config with its store in `store`) into `directory`.
fn config_file(directory: &Path, name: &str, store: &str) -> PathBuf {
    std::fs::write(directory.join("audit.key"), "the backup test audit key").expect("write key");
    let path = directory.join(name);
    std::fs::write(
        &path,
        format!(
            "public_url = \"http://gateway.test\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
             insecure_no_sso = true\n[store]\npath = \"{store}\"\n[audit]\nkey = \"file:audit.key\"\n\
             [sites.a]\nhost = \"a.test\"\nupstream = \"http://127.0.0.1:1\"\n"
        ),
    )
    .expect("write config");
    path
}

async fn start(config: &Path) -> Running {
    let config = Config::load(config).expect("config");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
    app::start(config, listener, admin, Shutdown::new()).await.expect("gateway starts")
}

struct Output {
    ok: bool,
    stdout: Vec<u8>,
    stderr: String,
}

impl Output {
    fn text(&self) -> String {
        format!("{}{}", String::from_utf8_lossy(&self.stdout), self.stderr)
    }
}

async fn toolgate(arguments: &[&str], stdin: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    command.args(arguments);
    if let Some(file) = stdin {
        command.stdin(std::fs::File::open(file).expect("stdin file"));
    }
    let output = command.output().await.expect("run toolgate");
    Output {
        ok: output.status.success(),
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `toolgate audit verify`: the number of records in a chain that verifies.
async fn verified_records(config: &Path) -> u64 {
    let output = toolgate(&["audit", "verify", "--config", path(config)], None).await;
    let text = output.text();
    assert!(output.ok, "the chain must verify: {text}");
    text.strip_prefix("ok: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("verify output: {text}"))
}

fn path(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Appends audit records from several tasks until stopped; counts the acknowledged ones.
struct Load {
    acknowledged: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    writers: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(gateway: &Running) -> Self {
        let acknowledged = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let writers = (0..8)
            .map(|writer| {
                let (state, acknowledged, stop) = (gateway.state.clone(), acknowledged.clone(), stop.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let event = AuditEvent::new(EventKind::ToolCall)
                            .actor(&format!("user-{writer}"), None, &[])
                            .site("load")
                            .decision("allow", "load");
                        state.audit.record(event).await.expect("audit record");
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        Self { acknowledged, stop, writers }
    }

    fn count(&self) -> u64 {
        self.acknowledged.load(Ordering::SeqCst)
    }

    async fn wait_for(&self, records: u64) {
        while self.count() < records {
            tokio::task::yield_now().await;
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    async fn finish(self) -> u64 {
        let Self { acknowledged, stop, writers } = self;
        stop.store(true, Ordering::Relaxed);
        for writer in writers {
            writer.await.expect("writer");
        }
        acknowledged.load(Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn backup_under_audit_write_load_restores_to_a_verified_chain() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_file(directory.path(), "toolgate.toml", "data");
    let gateway = start(&config).await;
    let baseline = last_seq(&gateway);
    let load = Load::start(&gateway);
    load.wait_for(500).await;

    let before = load.count();
    let target = directory.path().join("backup");
    let admin = gateway.admin_address.to_string();
    let backup = toolgate(
        &["store", "backup", "--config", path(&config), "--to", path(&target), "--admin", &admin],
        None,
    )
    .await;
    let during = load.count() - before;
    let written = load.finish().await;
    assert!(backup.ok, "{}", backup.text());
    assert!(backup.stderr.contains("from the running gateway"), "{}", backup.stderr);
    assert!(backup.stderr.contains("audit chain ok"), "{}", backup.stderr);
    assert!(during > 0, "records must have been appended while the backup ran");

    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(target.join("toolgate-backup.json")).expect("manifest"))
            .expect("manifest JSON");
    let in_backup = manifest["audit"]["records"].as_u64().expect("audit records in the manifest");

    let restored = config_file(directory.path(), "restored.toml", "restored");
    let restore =
        toolgate(&["store", "restore", "--config", path(&restored), "--from", path(&target)], None).await;
    assert!(restore.ok, "{}", restore.text());
    assert!(restore.stderr.contains("audit chain ok"), "{}", restore.stderr);

    let records = verified_records(&restored).await;
    assert_eq!(records, in_backup, "the restored store holds what the backup held");
    // Every record acknowledged before the backup began is in it, and so is the backup's own
    // audit record; records written while it ran may or may not be, but nothing beyond the log.
    assert!(
        records > baseline + before,
        "{records} records restored; {baseline} + {before} were there before the backup"
    );
    assert!(
        records <= baseline + written + 1,
        "{records} records restored, {baseline} + {written} + 1 written"
    );
    gateway.stop().await;

    // A backup directory without its manifest (a backup killed part-way) is refused, and so is
    // one whose tables do not match the manifest's counts or digests.
    let copy = |name: &str| {
        let to = directory.path().join(name);
        let copied = std::process::Command::new("cp").arg("-r").arg(&target).arg(&to).status().expect("cp");
        assert!(copied.success());
        to
    };
    let no_manifest = copy("no-manifest");
    std::fs::remove_file(no_manifest.join("toolgate-backup.json")).expect("remove manifest");
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let to = copy(name);
        let mut value = manifest.clone();
        edit(&mut value);
        std::fs::write(to.join("toolgate-backup.json"), value.to_string()).expect("manifest");
        to
    };
    let wrong_count = edited("wrong-count", &|value| value["records"]["audit"] = serde_json::json!(1));
    let wrong_digest = edited("wrong-digest", &|value| value["sha256"]["audit"] = serde_json::json!("00"));
    for (from, needle) in [
        (&no_manifest, "has no toolgate-backup.json"),
        (&wrong_count, "its manifest says 1"),
        (&wrong_digest, "does not match its manifest's digest"),
    ] {
        let target_config = config_file(directory.path(), "refused.toml", "refused");
        let restore =
            toolgate(&["store", "restore", "--config", path(&target_config), "--from", path(from)], None)
                .await;
        assert!(!restore.ok && restore.stderr.contains(needle), "{needle}: {}", restore.text());
        assert!(!directory.path().join("refused").join("db").exists(), "nothing was restored");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_streamed_backup_restores_and_a_cut_or_tampered_one_changes_nothing() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_file(directory.path(), "toolgate.toml", "data");
    let gateway = start(&config).await;
    let load = Load::start(&gateway);
    load.wait_for(200).await;
    let admin = gateway.admin_address.to_string();
    let backup =
        toolgate(&["store", "backup", "--config", path(&config), "--to", "-", "--admin", &admin], None).await;
    load.finish().await;
    gateway.stop().await;
    assert!(backup.ok, "{}", backup.stderr);
    assert!(backup.stdout.starts_with(MAGIC), "standard output carries the stream");
    let stream = directory.path().join("backup.stream");
    std::fs::write(&stream, &backup.stdout).expect("write stream");

    // From a file, and from standard input.
    let restored = config_file(directory.path(), "restored.toml", "restored");
    let restore =
        toolgate(&["store", "restore", "--config", path(&restored), "--from", path(&stream)], None).await;
    assert!(restore.ok, "{}", restore.text());
    let records = verified_records(&restored).await;
    assert!(records >= 200, "{records}");
    let from_stdin = config_file(directory.path(), "stdin.toml", "from-stdin");
    let restore =
        toolgate(&["store", "restore", "--config", path(&from_stdin), "--from", "-"], Some(&stream)).await;
    assert!(restore.ok, "{}", restore.text());
    assert_eq!(verified_records(&from_stdin).await, records);

    // A store is there now: restoring over it needs --replace.
    let again =
        toolgate(&["store", "restore", "--config", path(&restored), "--from", path(&stream)], None).await;
    assert!(!again.ok && again.stderr.contains("--replace"), "{}", again.text());

    // A cut stream and a tampered one are refused, and the store in place stays as it was.
    let cut = directory.path().join("cut.stream");
    std::fs::write(&cut, &backup.stdout[..backup.stdout.len() / 2]).expect("write cut");
    let restore =
        toolgate(&["store", "restore", "--config", path(&restored), "--from", path(&cut), "--replace"], None)
            .await;
    assert!(!restore.ok && restore.stderr.contains("incomplete"), "{}", restore.text());
    assert_eq!(verified_records(&restored).await, records, "the store in place is back");

    let tampered = directory.path().join("tampered.stream");
    let mut bytes = backup.stdout.clone();
    let at = find(&bytes, b"\"toolgate.site\":\"load\"").expect("a load record in the stream");
    bytes[at + 17] = b'L';
    std::fs::write(&tampered, &bytes).expect("write tampered");
    let restore = toolgate(
        &["store", "restore", "--config", path(&restored), "--from", path(&tampered), "--replace"],
        None,
    )
    .await;
    assert!(!restore.ok && restore.stderr.contains("BROKEN"), "{}", restore.text());
    assert_eq!(verified_records(&restored).await, records, "the store in place is back");
    let leftovers: Vec<_> = std::fs::read_dir(directory.path())
        .expect("list")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.contains("before-restore"))
        .collect();
    assert!(leftovers.is_empty(), "a failed restore leaves nothing aside: {leftovers:?}");
}

/// The audit log's last sequence number in a running gateway.
fn last_seq(gateway: &Running) -> u64 {
    gateway
        .state
        .audit
        .store()
        .last(Table::Audit)
        .expect("audit")
        .map_or(0, |(key, _)| u64::from_be_bytes(key.as_slice().try_into().expect("an 8-byte key")))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backup_endpoint_wants_post_and_the_token_and_is_audited() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_file(directory.path(), "toolgate.toml", "data");
    let gateway = start(&config).await;
    let token_path = directory.path().join("data").join(TOKEN_FILE);
    let token = std::fs::read_to_string(&token_path).expect("the gateway wrote its token");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&token_path).expect("meta").permissions());
    assert_eq!(mode & 0o777, 0o600, "only the gateway's user may read the token");

    let admin = gateway.admin_address;
    let ask = |method: &'static str, token: Option<String>| async move {
        let mut request = http::Request::builder().method(method).uri("/backup").header("host", "admin");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request.body(http_body_util::Full::new(bytes::Bytes::new())).expect("request");
        crate::harness::send(admin, request).await
    };
    assert_eq!(ask("GET", Some(token.clone())).await.status, 405);
    assert_eq!(ask("POST", None).await.status, 401);
    assert_eq!(ask("POST", Some("0".repeat(64))).await.status, 401);
    let answer = ask("POST", Some(token.clone())).await;
    assert_eq!(answer.status, 200);
    assert!(answer.body.starts_with(MAGIC));

    let metrics = gateway.state.metrics.render();
    assert!(metrics.contains("toolgate_store_backups_total{outcome=\"refused\"} 2"), "{metrics}");
    assert!(metrics.contains("toolgate_store_backups_total{outcome=\"completed\"} 1"), "{metrics}");
    let audited = gateway.state.audit.store().range(Table::Audit, b"", usize::MAX).expect("audit");
    let backups = audited.iter().filter(|(_, record)| find(record, b"\"store_backup\"").is_some()).count();
    assert_eq!(backups, 1, "the one backup taken is audited, refusals are not backups");

    // The command with a token the gateway does not hold: refused, and nothing left behind.
    std::fs::write(&token_path, "not the token").expect("overwrite the token file");
    let target = directory.path().join("refused");
    let admin = admin.to_string();
    let refused = toolgate(
        &["store", "backup", "--config", path(&config), "--to", path(&target), "--admin", &admin],
        None,
    )
    .await;
    assert!(!refused.ok && refused.stderr.contains("401"), "{}", refused.text());
    assert!(!target.exists(), "a failed backup leaves no directory that could pass for one");

    gateway.stop().await;
    assert!(!token_path.exists(), "a stopped gateway withdraws its token");

    // A gateway whose store lives in memory has nothing to back up.
    let memory = crate::harness::gateway(&[("a.test", "127.0.0.1:1".parse().expect("address"))], "").await;
    let request = http::Request::builder()
        .method("POST")
        .uri("/backup")
        .header("host", "admin")
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .expect("request");
    assert_eq!(crate::harness::send(memory.admin_address, request).await.status, 404);
    memory.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_store_is_backed_up_from_its_files() {
    let directory = tempfile::tempdir().expect("temp dir");
    let config = config_file(directory.path(), "toolgate.toml", "data");
    let stress = toolgate(&["audit", "stress", "--config", path(&config), "--count", "300"], None).await;
    assert!(stress.ok, "{}", stress.text());
    // A token left behind by a gateway that died, pointing at a port nobody listens on.
    std::fs::write(directory.path().join("data").join(TOKEN_FILE), "stale").expect("stale token");
    let closed =
        TcpListener::bind("127.0.0.1:0").await.expect("bind").local_addr().expect("address").to_string();

    let target = directory.path().join("offline");
    let backup = toolgate(
        &["store", "backup", "--config", path(&config), "--to", path(&target), "--admin", &closed],
        None,
    )
    .await;
    assert!(backup.ok, "{}", backup.text());
    assert!(backup.stderr.contains("from the stopped store"), "{}", backup.stderr);
    assert!(backup.stderr.contains("audit chain ok: 300 records"), "{}", backup.stderr);

    let again = toolgate(&["store", "backup", "--config", path(&config), "--to", path(&target)], None).await;
    assert!(!again.ok && again.stderr.contains("not empty"), "{}", again.text());
}
