//! The PostgreSQL store against a real PostgreSQL server (`postgres/cluster.rs`): the semantics
//! the embedded store promises (single-use takes, compare-and-swap, ordered ranges, batches,
//! sweeps), exactly once across concurrent callers, migrations that replicas starting together
//! run once, a refused newer schema, and credentials kept out of the URL.

pub(crate) mod cluster;

use crate::tls::TestCa;
use cluster::{Cluster, PASSWORD, ServerTls};
use gateway::store::{PgSettings, PgStore, Table};
use std::sync::Arc;

fn settings(cluster: &Cluster, database: &str) -> PgSettings {
    PgSettings { url: cluster.url(database), password: Some(PASSWORD.to_owned()), tls: None, pool_size: 8 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_keeps_the_embedded_stores_promises() {
    let cluster = Cluster::start();
    let database = cluster.database("kv").await;
    let store = PgStore::connect(&settings(&cluster, &database)).await.expect("connected");
    let table = Table::Sessions;

    store.put(table, b"b", b"2").await.expect("put");
    store.put(table, b"a", b"1").await.expect("put");
    store.put(table, b"b", b"two").await.expect("replace");
    store.put(Table::Approvals, b"a", b"other table").await.expect("put");
    assert_eq!(store.get(table, b"b").await.expect("get").as_deref(), Some(&b"two"[..]));
    assert_eq!(store.get(table, b"zz").await.expect("get"), None);

    // Compare-and-swap in each of its four forms.
    assert!(!store.compare_and_swap(table, b"a", Some(b"stale"), Some(b"x")).await.expect("cas"));
    assert!(store.compare_and_swap(table, b"a", Some(b"1"), Some(b"one")).await.expect("cas"));
    assert!(!store.compare_and_swap(table, b"a", None, Some(b"x")).await.expect("cas: present"));
    assert!(store.compare_and_swap(table, b"c", None, Some(b"3")).await.expect("cas: absent"));
    assert!(store.compare_and_swap(table, b"c", Some(b"3"), None).await.expect("cas: remove"));
    assert!(store.compare_and_swap(table, b"c", None, None).await.expect("cas: still absent"));
    assert!(!store.compare_and_swap(table, b"a", None, None).await.expect("cas: not absent"));

    // Ranges in byte order (0xff sorts after every ASCII key), per table.
    store
        .put_batch(table, &[(vec![0xff], b"high".to_vec()), (b"d".to_vec(), b"4".to_vec())])
        .await
        .expect("batch");
    let keys = |entries: Vec<(Vec<u8>, Vec<u8>)>| entries.into_iter().map(|(key, _)| key).collect::<Vec<_>>();
    assert_eq!(
        keys(store.range(table, b"", 10).await.expect("range")),
        [b"a".to_vec(), b"b".to_vec(), b"d".to_vec(), vec![0xff]]
    );
    assert_eq!(keys(store.range(table, b"b", 2).await.expect("range")), [b"b".to_vec(), b"d".to_vec()]);
    assert_eq!(store.last(table).await.expect("last").map(|(key, _)| key), Some(vec![0xff]));

    assert_eq!(store.take(table, b"d").await.expect("take").as_deref(), Some(&b"4"[..]));
    assert_eq!(store.take(table, b"d").await.expect("take again"), None);
    assert_eq!(store.delete_below(table, b"b").await.expect("delete below"), 1);
    let expired = |value: &[u8]| value == b"two";
    assert_eq!(store.sweep(table, &expired).await.expect("sweep"), 1);
    assert_eq!(keys(store.range(table, b"", 10).await.expect("range")), [vec![0xff]]);
    assert_eq!(store.get(Table::Approvals, b"a").await.expect("get").as_deref(), Some(&b"other table"[..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_use_record_is_taken_once_whoever_races_for_it() {
    let cluster = Cluster::start();
    let database = cluster.database("race").await;
    // Two pools, as two replicas would have.
    let first = Arc::new(PgStore::connect(&settings(&cluster, &database)).await.expect("connected"));
    let second = Arc::new(PgStore::connect(&settings(&cluster, &database)).await.expect("connected"));
    for round in 0..5u8 {
        let key = [b'h', round];
        first.put(Table::Handoffs, &key, b"ticket").await.expect("put");
        first.put(Table::Approvals, &key, b"pending").await.expect("put");
        let mut racers = Vec::new();
        for index in 0..16 {
            let store = if index % 2 == 0 { first.clone() } else { second.clone() };
            racers.push(tokio::spawn(async move {
                let taken = store.take(Table::Handoffs, &key).await.expect("take").is_some();
                let decided = store
                    .compare_and_swap(Table::Approvals, &key, Some(b"pending"), Some(b"decided"))
                    .await
                    .expect("cas");
                (taken, decided)
            }));
        }
        let mut takes = 0;
        let mut decisions = 0;
        for racer in racers {
            let (taken, decided) = racer.await.expect("racer");
            takes += usize::from(taken);
            decisions += usize::from(decided);
        }
        assert_eq!((takes, decisions), (1, 1), "round {round}: exactly one take and one decision");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_migrate_once_and_a_newer_schema_is_refused() {
    let cluster = Cluster::start();
    let database = cluster.database("schema").await;
    let settings = settings(&cluster, &database);
    let starts = (0..4).map(|_| PgStore::connect(&settings));
    for started in futures_util::future::join_all(starts).await {
        started.expect("every replica starts");
    }
    let client = cluster.client(&database).await;
    let version: i32 =
        client.query_one("SELECT version FROM toolgate_schema", &[]).await.expect("version").get(0);
    assert_eq!(version, gateway::store::postgres::SCHEMA_VERSION);

    client.execute("UPDATE toolgate_schema SET version = 999", &[]).await.expect("newer schema");
    let refused = PgStore::connect(&settings).await.err().expect("a newer schema is refused").to_string();
    assert!(
        refused.contains("999")
            && refused.contains(&format!("({})", gateway::store::postgres::SCHEMA_VERSION)),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_stay_out_of_the_url_and_a_wrong_password_fails() {
    let cluster = Cluster::start();
    let database = cluster.database("auth").await;
    let mut with_password = settings(&cluster, &database);
    with_password.url = with_password.url.replace("toolgate@", &format!("toolgate:{PASSWORD}@"));
    let refused = PgStore::connect(&with_password).await.err().expect("refused").to_string();
    assert!(refused.contains("store.password") && !refused.contains(PASSWORD), "{refused}");

    let mut wrong = settings(&cluster, &database);
    wrong.password = Some("not-the-password".to_owned());
    let failed = PgStore::connect(&wrong).await.err().expect("wrong password").to_string();
    assert!(failed.contains("password"), "{failed}");
}

/// A client configuration that trusts only `ca` (and checks names, as rustls always does).
fn trusting(ca: &TestCa) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der.clone()).expect("CA");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

fn server_tls(ca: &TestCa, name: &str) -> ServerTls {
    let issued = ca.issue(name, rcgen::ExtendedKeyUsagePurpose::ServerAuth);
    ServerTls { cert_pem: issued.cert_pem, key_pem: issued.key_pem }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_verifies_the_servers_certificate_and_name_and_is_never_skipped() {
    let ca = TestCa::new("database CA");
    let cluster = Cluster::start_with(Some(&server_tls(&ca, "127.0.0.1")));
    let database = cluster.database("tls").await;
    let with_tls = |config| PgSettings { tls: Some(config), ..settings(&cluster, &database) };

    let store = PgStore::connect(&with_tls(trusting(&ca))).await.expect("verified TLS");
    store.put(Table::Meta, b"k", b"v").await.expect("put over TLS");
    let client = cluster.client(&database).await;
    let encrypted: bool = client
        .query_one("SELECT bool_and(ssl) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE application_name = 'toolgate'", &[])
        .await
        .expect("pg_stat_ssl")
        .get(0);
    assert!(encrypted, "the store's connections use TLS");

    let stranger = TestCa::new("another CA");
    let refused =
        PgStore::connect(&with_tls(trusting(&stranger))).await.err().expect("unknown issuer").to_string();
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");

    // A certificate for another name, from the trusted CA.
    let elsewhere = Cluster::start_with(Some(&server_tls(&ca, "db.example")));
    let other = elsewhere.database("tls").await;
    let settings_elsewhere = PgSettings { tls: Some(trusting(&ca)), ..settings(&elsewhere, &other) };
    let mismatch = PgStore::connect(&settings_elsewhere).await.err().expect("name mismatch").to_string();
    assert!(mismatch.to_lowercase().contains("certificate"), "{mismatch}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_tls_is_refused_when_tls_is_asked_for() {
    let cluster = Cluster::start();
    let database = cluster.database("plain").await;
    let ca = TestCa::new("database CA");
    let settings = PgSettings { tls: Some(trusting(&ca)), ..settings(&cluster, &database) };
    let refused = PgStore::connect(&settings).await.err().expect("no plain-text fallback").to_string();
    assert!(refused.contains("TLS") || refused.contains("SSL") || refused.contains("ssl"), "{refused}");
}

/// The audit log on PostgreSQL: records land in `toolgate_audit` with a column for each of the
/// query API's filters, the query API answers through them (the same records the in-order
/// reading finds), and the chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_log_has_real_columns_and_queries_use_them() {
    use gateway::audit::event::{AuditEvent, EventKind};
    use gateway::audit::{AuditLog, digest::DigestKey, query, verify};
    use gateway::store::StoreHandle;

    let cluster = Cluster::start();
    let database = cluster.database("audit_columns").await;
    let store =
        StoreHandle::Postgres(PgStore::connect(&settings(&cluster, &database)).await.expect("connected"));
    let log = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || {
            AuditLog::start(&store, DigestKey::new(b"k"), gateway::metrics::Metrics::new()).expect("log")
        })
        .await
        .expect("started")
    };
    let people = [
        ("alice", "hr", "allow"),
        ("bob", "hr", "deny"),
        ("alice", "tasks", "deny"),
        ("carol", "tasks", "allow"),
    ];
    for (user, site, decision) in people {
        let event =
            AuditEvent::new(EventKind::ToolCall).actor(user, None, &[]).site(site).decision(decision, "rule");
        log.record(event).await.expect("recorded");
    }
    log.record(AuditEvent::new(EventKind::Login).actor("alice", None, &[])).await.expect("recorded");

    let client = cluster.client(&database).await;
    let rows = client
        .query("SELECT seq, user_id, site, kind, decision FROM toolgate_audit ORDER BY seq", &[])
        .await
        .expect("columns");
    type Columns = (i64, Option<String>, Option<String>, Option<String>, Option<String>);
    let columns: Vec<Columns> =
        rows.iter().map(|row| (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4))).collect();
    assert_eq!(columns.len(), 5);
    assert_eq!(
        columns[1],
        (2, Some("bob".into()), Some("hr".into()), Some("tool_call".into()), Some("deny".into()))
    );
    assert_eq!(columns[4].2, None, "a login has no site");

    let blocking = store.blocking_store();
    let found = move |filter: query::Filter, limit: usize| {
        let store = blocking.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                query::find(store.as_ref(), &filter, 0, limit).expect("query")
            })
            .await
            .expect("query ran")
        }
    };
    let seqs = |page: &query::Page| page.records.iter().map(|record| record.seq).collect::<Vec<_>>();
    let alice = found(query::Filter { user: Some("alice".into()), ..Default::default() }, 10).await;
    assert_eq!(seqs(&alice), [1, 3, 5]);
    let denied_on_hr =
        query::Filter { site: Some("hr".into()), decision: Some("deny".into()), ..Default::default() };
    assert_eq!(seqs(&found(denied_on_hr, 10).await), [2]);
    let logins = found(query::Filter { kind: Some("login".into()), ..Default::default() }, 10).await;
    assert_eq!(seqs(&logins), [5]);
    let first_two = found(query::Filter::default(), 2).await;
    assert_eq!((seqs(&first_two), first_two.next), (vec![1, 2], Some(2)), "pages by sequence number");
    let future = query::Filter {
        since: Some(std::time::SystemTime::now() + std::time::Duration::from_secs(3600)),
        ..Default::default()
    };
    assert!(found(future, 10).await.records.is_empty());

    let blocking = store.blocking_store();
    let verified =
        tokio::task::spawn_blocking(move || verify::verify(blocking.as_ref(), &DigestKey::new(b"k")))
            .await
            .expect("verify ran")
            .expect("read")
            .expect("the chain verifies");
    assert_eq!((verified.first, verified.last), (1, 5));
}
