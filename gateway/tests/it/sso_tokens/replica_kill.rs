//! A replica killed with SIGKILL under audited load: three `toolgate run` processes on one
//! PostgreSQL database, each refusing a signed-in user a site their groups may not use. A
//! refusal is answered only once its audit record is committed, so every 403 a client got is a
//! record in the log, from the killed replica too; and the one chain verifies.

use super::replicas::Shared;
use super::*;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::io::AsyncBufReadExt;

/// A replica in a process of its own; its address once it listens.
async fn replica_process(config: &std::path::Path) -> (tokio::process::Child, SocketAddr) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["run", "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start a replica");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let address = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(address) = line.strip_prefix("toolgate listening on http://") {
                return address.parse::<SocketAddr>().expect("address");
            }
        }
        panic!("the replica ended before it listened");
    })
    .await
    .expect("the replica listens within a minute");
    // The rest of its output is read too: a closed pipe would fail the replica's next line.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, address)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_under_audited_load_loses_no_acknowledged_record() {
    let mut shared = Shared::start().await;
    shared.extra = "allow_groups = [\"admins\"]\n".to_owned();
    let keys = Keys::generate();
    let provider =
        Provider::start_with_issuer_suffix(vec![ec_jwk(&keys.ec.pair, "ec-1", Some("ES256"))], "").await;
    let upstream = recording_upstream().await;
    let signing_in = shared.replica(&provider.issuer, upstream.address).await;
    let site = format!("app.localhost:{}", signing_in.address.port());
    let world = World {
        keys,
        provider,
        upstream,
        gateway: signing_in,
        site,
        _secrets: tempfile::tempdir().expect("dir"),
    };

    let users = ["ana", "ben", "cai"];
    let mut cookies = Vec::new();
    for user in users {
        let mut client = Client::new(world.gateway.address);
        let signed_in = sign_in_with(&world, &mut client, json!({"sub": user})).await;
        cookies.push(format!("toolgate={}", signed_in.session));
    }
    let directory = tempfile::tempdir().expect("temp dir");
    let config = directory.path().join("replica.toml");
    std::fs::write(&config, shared.config_text(&world.provider.issuer, world.upstream.address))
        .expect("config");
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(replica_process(&config).await);
    }

    // Each replica refuses its own user, as fast as the client can ask.
    let stop = Arc::new(AtomicBool::new(false));
    let refused: Vec<Arc<AtomicU64>> = (0..3).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let mut load = Vec::new();
    for (index, (_, address)) in replicas.iter().enumerate() {
        let (stop, count, cookie, address) =
            (stop.clone(), refused[index].clone(), cookies[index].clone(), *address);
        load.push(tokio::spawn(async move {
            let mut client = Client::new(address);
            while !stop.load(Ordering::Relaxed) {
                // After the SIGKILL the client finds no gateway; that ends this task.
                let answer = client.get("app.localhost", "/reports", &[("cookie", &cookie)]).await;
                assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text());
                count.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // Under load, once every replica has answered some refusals (a busy machine may take a while
    // for the first), one dies.
    let all_refusing = async {
        while refused.iter().any(|count| count.load(Ordering::Relaxed) < 20) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all_refusing)
        .await
        .expect("every replica refuses within a minute");
    replicas[1].0.start_kill().expect("SIGKILL");
    let _ = replicas[1].0.wait().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for task in load {
        let _ = task.await;
    }
    assert!(world.upstream.requests().is_empty(), "no refused request reached the site");

    let database = shared.cluster.client(&shared.database).await;
    for (index, user) in users.iter().enumerate() {
        let acknowledged = refused[index].load(Ordering::Relaxed);
        assert!(acknowledged > 0, "{user}'s replica refused some requests");
        let row = database
            .query_one(
                "SELECT count(*) FROM toolgate_audit WHERE kind = 'access_denied' AND user_id = $1",
                &[user],
            )
            .await
            .expect("count");
        let recorded = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
        assert!(recorded >= acknowledged, "{user}: {acknowledged} refusals answered, {recorded} recorded");
        eprintln!("{user}: {acknowledged} refusals answered, {recorded} recorded");
    }
    let verified = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["audit", "verify", "--config"])
        .arg(&config)
        .output()
        .await
        .expect("verify runs");
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
}
