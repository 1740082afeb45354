//! Three gateway replicas on one PostgreSQL database (`postgres/cluster.rs`), with no sticky
//! sessions: a session signed in through one replica browses through the others; an approval
//! decided on one wakes the turn waiting on another at once (not after its 2 s poll); a tool
//! result posted to one reaches the turn another runs; a gated form action learnt on one is
//! guarded by the others; a policy version saved on one is in force on the others within 1 s;
//! the per-user turn limit holds across them. And while the database is down, what needs it
//! answers 503 within 2 s, `/readyz` says so, and both recover when it returns, without a
//! restart.

use super::*;
use crate::postgres::cluster::{Cluster, PASSWORD};
use gateway::approvals::{Approver, Binding, Decider, args_digest, canonical_args};
use gateway::turns::{Owner, ToolOutcome};

/// What each replica needs besides its listeners: the database and the shared keys.
pub(super) struct Shared {
    pub(super) cluster: Cluster,
    pub(super) database: String,
    secrets: tempfile::TempDir,
    /// More configuration for every replica (an `[llm]` section).
    pub(super) extra: String,
}

impl Shared {
    pub(super) async fn start() -> Self {
        let cluster = Cluster::start();
        let database = cluster.database("replicas").await;
        let secrets = tempfile::tempdir().expect("secrets directory");
        let write =
            |name: &str, text: &str| std::fs::write(secrets.path().join(name), text).expect("write secret");
        write("client-secret", "s3cret\n");
        write("session-key", SESSION_KEY);
        write("db-password", PASSWORD);
        write("assertion-key.pem", &assertion_key_pem());
        Self { cluster, database, secrets, extra: String::new() }
    }

    /// A replica's configuration: SSO against `issuer`, one site, the shared store, the policy
    /// managed by the dashboard (in the store).
    fn config(&self, issuer: &str, upstream: SocketAddr) -> Config {
        Config::parse(&self.config_text(issuer, upstream), "replica.toml").expect("replica config is valid")
    }

    /// The configuration file's text (a replica in a process of its own reads it from a file).
    pub(super) fn config_text(&self, issuer: &str, upstream: SocketAddr) -> String {
        let secret = |name: &str| self.secrets.path().join(name).display().to_string();
        format!(
            "public_url = \"http://localhost:1\"\n\
             [server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
             [store]\nurl = \"{url}\"\npassword = \"file:{password}\"\ntls = \"disable\"\npool_size = 4\n\
             [policy]\nmanaged_by = \"dashboard\"\n\
             [limits]\nmax_header_bytes = 4194304\n\
             [sso]\nissuer = \"{issuer}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"file:{client}\"\n\
             algorithms = [\"ES256\", \"RS256\"]\nsession_keys = [\"file:{session}\"]\n\
             assertion_keys = [\"file:{assertion}\"]\n\
             [sites.app]\nhost = \"app.localhost\"\nupstream = \"http://{upstream}\"\n{extra}",
            extra = self.extra,
            url = self.cluster.url(&self.database),
            password = secret("db-password"),
            client = secret("client-secret"),
            session = secret("session-key"),
            assertion = secret("assertion-key.pem"),
        )
    }

    pub(super) async fn replica(&self, issuer: &str, upstream: SocketAddr) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind gateway");
        let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
        app::start(self.config(issuer, upstream), listener, admin, Shutdown::new())
            .await
            .expect("replica starts")
    }
}

/// An ES256 key in PKCS#8 PEM, as `sso.assertion_keys` takes it.
fn assertion_key_pem() -> String {
    let document =
        EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .expect("key generates");
    let encoded = STANDARD.encode(document.as_ref());
    let lines: Vec<&str> =
        encoded.as_bytes().chunks(64).map(|line| std::str::from_utf8(line).unwrap_or("")).collect();
    format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"))
}

/// Three replicas behind one provider and one site; the world's gateway is the first.
async fn three_replicas(shared: &Shared) -> (World, Running, Running) {
    let keys = Keys::generate();
    let published = vec![ec_jwk(&keys.ec.pair, "ec-1", Some("ES256")), rsa_jwk(&keys.rsa, "rsa-1")];
    let provider = Provider::start_with_issuer_suffix(published, "").await;
    let upstream = recording_upstream().await;
    let first = shared.replica(&provider.issuer, upstream.address).await;
    let second = shared.replica(&provider.issuer, upstream.address).await;
    let third = shared.replica(&provider.issuer, upstream.address).await;
    let site = format!("app.localhost:{}", first.address.port());
    let world =
        World { keys, provider, upstream, gateway: first, site, _secrets: tempfile::tempdir().expect("dir") };
    (world, second, third)
}

fn seconds_now() -> u64 {
    u64::try_from(unix_now()).unwrap_or(0)
}

fn owner() -> Owner {
    Owner { user: "alice".into(), session: "session-digest".into(), site: "app".into() }
}

/// Waits (polling every 10 ms) until `done` holds, at most `limit`; returns how long it took.
async fn within(limit: Duration, mut done: impl AsyncFnMut() -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done().await {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_share_sessions_approvals_results_gates_limits_and_the_policy() {
    let shared = Shared::start().await;
    let (world, second, third) = three_replicas(&shared).await;
    let (a, b, c) = (world.gateway.state.clone(), second.state.clone(), third.state.clone());

    // Signed in through A; the same cookie browses through B and C (no sticky sessions).
    let mut through_a = Client::new(world.gateway.address);
    let signed_in = sign_in(&world, &mut through_a).await;
    let cookie = format!("toolgate={}", signed_in.session);
    for replica in [&second, &third] {
        let mut client = Client::new(replica.address);
        let site = format!("app.localhost:{}", replica.address.port());
        let page = client.get(&site, "/reports", &[("accept", "text/html"), ("cookie", &cookie)]).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text());
        assert!(page.text().contains("site page"));
    }
    assert_eq!(world.upstream.requests().len(), 2, "both pages came from the site");

    // An approval asked on A and waited for there is decided on B: A's waiter wakes at once.
    let now = seconds_now();
    let canonical = canonical_args(&json!({"amount": 1200}));
    let binding = Binding {
        user: "alice".into(),
        session: "session-digest".into(),
        site: "app".into(),
        tool: "pay".into(),
        args_digest: args_digest(&canonical),
        call_id: "call-1".into(),
        expires_at: now + 300,
    };
    let record = a
        .approvals
        .request(binding, canonical, Approver::Group("treasury".into()), "big", None, now)
        .await
        .expect("approval asked");
    let waiter = {
        let (a, id) = (a.clone(), record.id.clone());
        tokio::spawn(async move {
            a.approvals.wait(&id, tokio::time::Instant::now() + Duration::from_secs(30)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let groups = ["treasury".to_owned()];
    let decided_at = Instant::now();
    b.approvals
        .decide(&record.id, &Decider::member("bob", &groups), true, "ok", now)
        .await
        .expect("decided on B");
    let woken = tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("woken").expect("task");
    let woke_after = decided_at.elapsed();
    assert!(matches!(woken.expect("record").state, gateway::approvals::ApprovalState::Approved { .. }));
    assert!(woke_after < Duration::from_secs(1), "woken by the notice, not the 2 s poll: {woke_after:?}");

    // A turn running on A gets the tool result posted to C.
    let (_turn, mut results) = a.turns.start("turn-1".into(), owner(), 2, 1_000_000).await.expect("turn");
    let outcome = ToolOutcome { call_id: "call-7".into(), result: Ok(json!({"rows": 3})) };
    let posted_at = Instant::now();
    assert!(c.turns.deliver("turn-1", &owner(), outcome.clone()).await, "C accepts it for A's turn");
    let received = tokio::time::timeout(Duration::from_secs(5), results.recv()).await.expect("delivered");
    assert_eq!(received.map(|outcome| outcome.call_id).as_deref(), Some("call-7"));
    assert!(posted_at.elapsed() < Duration::from_secs(1), "at once: {:?}", posted_at.elapsed());
    let stranger = Owner { user: "mallory".into(), ..owner() };
    assert!(!c.turns.deliver("turn-1", &stranger, outcome).await, "not for somebody else's turn");

    // The per-user limit holds across replicas: alice has one more turn, wherever it starts.
    let (_second_turn, _) = b.turns.start("turn-2".into(), owner(), 2, 1_000_000).await.expect("second turn");
    let refused = c.turns.start("turn-3".into(), owner(), 2, 1_000_000).await.err();
    assert_eq!(refused, Some(gateway::turns::Refusal::TooManyTurns(2)));

    // A form action gated on A is guarded on B and C: at once through the notice, and by a
    // look into the store for a state-changing request.
    let target = gateway::approvals::FormTarget { method: "POST".into(), action_path: "/pay".into() };
    a.gated_forms.remember("app", &target, seconds_now()).await;
    assert!(c.gated_forms.is_guarded(&http::Method::POST, "app", "/pay", seconds_now()).await);
    let heard =
        within(Duration::from_secs(1), async || b.gated_forms.is_gated("app", "/pay", seconds_now())).await;
    assert!(heard.is_some(), "B heard of the gate");

    // A policy version saved on A is in force on B and C within a second.
    let versions = a.policy_versions.as_ref().expect("dashboard-managed policy");
    let base = versions.current().await.expect("read").map_or(0, |current| current.version);
    let text = "[[rule]]\nid = \"saved-on-a\"\nsites = [\"app\"]\ntools.allow = [\"pay\"]\n";
    let saved = versions.save(base, text, "admin", "from A", seconds_now()).await.expect("saved");
    for (name, replica) in [("B", &b), ("C", &c)] {
        let took = within(Duration::from_secs(1), async || replica.policy.version() == saved.version).await;
        assert!(took.is_some(), "{name} did not put version {} in force within 1 s", saved.version);
        assert!(replica.policy.current().rule_ids().any(|id| id.to_string() == "saved-on-a"), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_database_is_down_requests_get_503_in_time_and_all_recovers_without_a_restart() {
    let mut shared = Shared::start().await;
    let keys = Keys::generate();
    let provider =
        Provider::start_with_issuer_suffix(vec![ec_jwk(&keys.ec.pair, "ec-1", Some("ES256"))], "").await;
    let upstream = recording_upstream().await;
    let replica = shared.replica(&provider.issuer, upstream.address).await;
    let mut client = Client::new(replica.address);
    let mut admin = Client::new(replica.admin_address);
    let ready = admin.get("localhost", "/readyz", &[]).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.text());
    assert_eq!(start_login(&mut client, "app.localhost").await.status, StatusCode::FOUND, "sign-in starts");

    shared.cluster.stop();
    let asked = Instant::now();
    let login = start_login(&mut client, "app.localhost").await;
    let took = asked.elapsed();
    assert_eq!(login.status, StatusCode::SERVICE_UNAVAILABLE, "{}", login.text());
    assert!(took < Duration::from_millis(2500), "answered within the 2 s call limit: {took:?}");
    let asked = Instant::now();
    let ready = admin.get("localhost", "/readyz", &[]).await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE, "{}", ready.text());
    assert!(asked.elapsed() < Duration::from_millis(2500));
    assert!(!ready.text().contains(PASSWORD), "no secret in the reason");
    let cookie = "toolgate=not-a-real-session";
    let page = client.get("app.localhost", "/reports", &[("accept", "text/html"), ("cookie", cookie)]).await;
    assert_ne!(page.status, StatusCode::OK, "nothing served without its session check");
    assert!(upstream.requests().is_empty());

    shared.cluster.restart();
    let recovered = within(Duration::from_secs(10), async || {
        admin.get("localhost", "/readyz", &[]).await.status == StatusCode::OK
    })
    .await;
    assert!(recovered.is_some(), "/readyz recovers by itself");
    assert_eq!(
        start_login(&mut client, "app.localhost").await.status,
        StatusCode::FOUND,
        "sign-in works again"
    );
}

/// A rolling upgrade: a newer release migrates the schema (additions only, as every migration
/// is) while a replica of this release runs. The running replica goes on serving on the newer
/// schema, sharing the database with the new ones; a replica of this release that starts after
/// the migration is refused, naming both versions, so the rollout replaces it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_a_rolling_upgrade_an_old_replica_serves_on_the_newer_schema() {
    let shared = Shared::start().await;
    let keys = Keys::generate();
    let provider =
        Provider::start_with_issuer_suffix(vec![ec_jwk(&keys.ec.pair, "ec-1", Some("ES256"))], "").await;
    let upstream = recording_upstream().await;
    let old = shared.replica(&provider.issuer, upstream.address).await;

    // The newer release's migration: a column and a table this release does not know.
    let known = gateway::store::postgres::SCHEMA_VERSION;
    let database = shared.cluster.client(&shared.database).await;
    database
        .batch_execute(
            "ALTER TABLE toolgate_kv ADD COLUMN written_at timestamptz DEFAULT now();
             ALTER TABLE toolgate_audit ADD COLUMN trace_id text;
             CREATE TABLE toolgate_next (id bigint PRIMARY KEY);
             UPDATE toolgate_schema SET version = version + 1",
        )
        .await
        .expect("the newer release migrates");

    // The old replica writes and reads the shared store as before: a sign-in starts (a
    // pending login is written), an approval is asked and decided, the audit log appends.
    let mut client = Client::new(old.address);
    assert_eq!(start_login(&mut client, "app.localhost").await.status, StatusCode::FOUND);
    let state = old.state.clone();
    let now = seconds_now();
    let canonical = canonical_args(&json!({"n": 1}));
    let binding = Binding {
        user: "alice".into(),
        session: "s".into(),
        site: "app".into(),
        tool: "pay".into(),
        args_digest: args_digest(&canonical),
        call_id: "c".into(),
        expires_at: now + 300,
    };
    let record =
        state.approvals.request(binding, canonical, Approver::User, "", None, now).await.expect("asked");
    state.approvals.decide(&record.id, &Decider::member("alice", &[]), true, "", now).await.expect("decided");
    let event = gateway::audit::event::AuditEvent::new(gateway::audit::event::EventKind::Login).actor(
        "alice",
        None,
        &[],
    );
    state.audit.record(event).await.expect("the audit log appends on the newer schema");
    let mut admin = Client::new(old.admin_address);
    let ready = admin.get("localhost", "/readyz", &[]).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.text());

    // A replica of the old release starting now is refused, and says why.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind gateway");
    let admin_listener = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
    let refused = app::start(
        shared.config(&provider.issuer, upstream.address),
        listener,
        admin_listener,
        Shutdown::new(),
    )
    .await
    .err()
    .expect("an older release does not start on a newer schema")
    .to_string();
    assert!(
        refused.contains(&format!("version {}", known + 1)) && refused.contains(&format!("({known})")),
        "{refused}"
    );
}

/// The agent over HTTP across replicas, as the page's runtime drives it with no sticky
/// sessions: the turn streams from A, its call needs the treasury group's approval, which a
/// treasurer gives through B's approvals API, and the page posts the tool's result to C. The
/// turn on A goes on at each step and ends with the model's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_on_one_replica_is_approved_on_another_and_gets_its_result_from_a_third() {
    let mut shared = Shared::start().await;
    let (_model, llm) = crate::agent_turn::model(gateway::demo::model::StandInOptions::default()).await;
    shared.extra = llm;
    let (world, second, third) = three_replicas(&shared).await;
    let (a, b, c) = (world.gateway.state.clone(), second.state.clone(), third.state.clone());
    let versions = a.policy_versions.as_ref().expect("dashboard-managed policy");
    let base = versions.current().await.expect("read").map_or(0, |current| current.version);
    let policy = "groups = [\"treasury\"]\n[[rule]]\nid = \"tasks-need-treasury\"\nsites = [\"app\"]\n\
                  tools.approve_by = { tools = [\"add_task\"], group = \"treasury\" }\n";
    let saved = versions.save(base, policy, "admin", "", seconds_now()).await.expect("policy saved");
    // The replica that saved it swaps it in as the others do, from the store's notice.
    for replica in [&a, &b, &c] {
        let current =
            within(Duration::from_secs(1), async || replica.policy.version() == saved.version).await;
        assert!(current.is_some(), "the policy is in force everywhere");
    }

    let mut through_a = Client::new(world.gateway.address);
    let cookie = format!("toolgate={}", sign_in(&world, &mut through_a).await.session);
    let site_host = "app.localhost";
    let session = through_a.get(site_host, "/.toolgate/agent/session", &[("cookie", &cookie)]).await;
    assert_eq!(session.status, StatusCode::OK, "{}", session.text());
    let csrf = serde_json::from_slice::<Value>(&session.body).expect("session JSON")["csrf"]
        .as_str()
        .expect("csrf")
        .to_owned();
    let post = |host: &str, path: &str, body: &Value, authorization: Option<&str>| {
        let mut request = Request::post(path)
            .header("host", host)
            .header("content-type", "application/json")
            .header("cookie", cookie.as_str())
            .header("x-toolgate-csrf", csrf.as_str());
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        request.body(Full::new(Bytes::from(body.to_string()))).expect("request")
    };
    let turn = json!({
        "message": "Please add a task: \"Water the plants\"",
        "tools": [{"name": "add_task", "description": "Add a task to the board", "source": "voix",
                   "input_schema": {"type": "object", "properties": {"title": {"type": "string"}},
                                    "required": ["title"]}}],
        "contexts": [],
    });
    let response =
        crate::harness::open(world.gateway.address, post(site_host, "/.toolgate/agent/turn", &turn, None))
            .await;
    assert_eq!(response.status(), StatusCode::OK);

    let mut treasurer_claims = world.claims();
    treasurer_claims["sub"] = json!("tara");
    treasurer_claims["groups"] = json!(["treasury"]);
    let treasurer = format!("Bearer {}", world.token_with(&world.keys.ec, "ec-1", &treasurer_claims));
    let (b_address, c_address) = (second.address, third.address);
    let mut turn_id = String::new();
    let seen = crate::agent_turn::events(response, async |event: &Value| match event["event"].as_str() {
        Some("started") => turn_id = event["turn_id"].as_str().unwrap_or_default().to_owned(),
        Some("approval_required") => {
            assert_eq!(event["approver"], "treasury");
            let path = format!("/.toolgate/approvals/{}", event["approval_id"].as_str().unwrap_or_default());
            let decision = json!({"approve": true, "comment": "decided on B"});
            let decided =
                crate::harness::send(b_address, post(GATEWAY_HOST, &path, &decision, Some(&treasurer))).await;
            assert_eq!(decided.status, StatusCode::OK, "{}", decided.text());
        }
        Some("tool_call") => {
            let answer = json!({"turn_id": turn_id, "call_id": event["call_id"], "ok": true,
                                "result": {"added": event["args"]["title"]}});
            let posted =
                crate::harness::send(c_address, post(site_host, "/.toolgate/agent/result", &answer, None))
                    .await;
            assert_eq!(posted.status, StatusCode::ACCEPTED, "{}", posted.text());
        }
        _ => {}
    })
    .await;
    let kinds: Vec<&str> = seen.iter().filter_map(|event| event["event"].as_str()).collect();
    for step in ["approval_required", "approval_resolved", "tool_call", "done"] {
        assert!(kinds.contains(&step), "{step} missing: {seen:#?}");
    }
    let resolved = seen.iter().find(|event| event["event"] == "approval_resolved").expect("resolved");
    assert_eq!(resolved["decision"], "approved");
    let text = crate::agent_turn::answer_text(&seen);
    assert!(text.contains("Water the plants"), "the answer reports the result: {text}");
    let parked = c.store.range(gateway::store::Table::ToolResults, b"", 10).await.expect("read");
    assert!(parked.is_empty(), "the result C parked was taken by A");
}

/// An agent's form submission that reaches the site through B answers the call a page on A
/// asks about: the site's answer is shared, not kept by the replica that saw it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_submission_through_one_replica_answers_the_call_on_another() {
    let shared = Shared::start().await;
    let (world, second, _third) = three_replicas(&shared).await;
    let mut through_a = Client::new(world.gateway.address);
    let cookie = format!("toolgate={}", sign_in(&world, &mut through_a).await.session);
    let session = through_a.get("app.localhost", "/.toolgate/agent/session", &[("cookie", &cookie)]).await;
    let csrf = serde_json::from_slice::<Value>(&session.body).expect("session JSON")["csrf"]
        .as_str()
        .expect("csrf")
        .to_owned();

    // The runtime marks the submission with its call; the browser sends it to B.
    let submission = Request::post("/tasks/add")
        .header("host", "app.localhost")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-dest", "document")
        .header("cookie", format!("{cookie}; toolgate-submit=call-42:POST:/tasks/add"))
        .body(Full::new(Bytes::from_static(b"title=Water+the+plants")))
        .expect("request");
    let answered = crate::harness::send(second.address, submission).await;
    assert_eq!(answered.status, StatusCode::OK, "{}", answered.text());

    let outcome = through_a
        .get(
            "app.localhost",
            "/.toolgate/agent/outcomes/call-42?arrival=0",
            &[("cookie", &cookie), ("x-toolgate-csrf", &csrf)],
        )
        .await;
    assert_eq!(outcome.status, StatusCode::OK, "{}", outcome.text());
    let outcome: Value = serde_json::from_slice(&outcome.body).expect("outcome JSON");
    assert_eq!((&outcome["observed"], &outcome["ok"]), (&json!(true), &json!(true)), "{outcome}");
    let other = through_a
        .get(
            "app.localhost",
            "/.toolgate/agent/outcomes/call-43?arrival=0",
            &[("cookie", &cookie), ("x-toolgate-csrf", &csrf)],
        )
        .await;
    assert_eq!(serde_json::from_slice::<Value>(&other.body).expect("JSON")["observed"], json!(false));
}
