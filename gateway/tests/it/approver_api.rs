//! The approvals API for approver groups on the gateway host: the queue shows only what the
//! caller's groups may decide, the requester cannot approve their own call (four eyes), and a
//! decision wakes the waiting turn.

use crate::harness::{self, Answer};
use crate::openai::world::World;
use bytes::Bytes;
use gateway::approvals::{ApprovalState, Approver, Binding, args_digest, canonical_args};
use http::{Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};

fn call(world: &World, method: &str, path: &str, token: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut request = Request::builder().method(method).uri(path).header("host", world.host());
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.body(Full::new(Bytes::from(body.to_owned()))).expect("request")
}

fn json_of(answer: &Answer) -> Value {
    serde_json::from_slice(&answer.body).unwrap_or_else(|_| panic!("not JSON: {}", answer.text()))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approver_decides_a_pending_call_and_the_waiting_turn_learns_it() {
    let world = World::start().await;
    let approvals = world.gateway.state.approvals.clone();
    let now = gateway::support::clock::unix_now();
    let args = canonical_args(&json!({"amount": 1500, "invoice": "INV-7"}));
    let binding = Binding {
        user: "ivan".into(),
        session: "session-digest".into(),
        site: "tasks".into(),
        tool: "pay_invoice".into(),
        args_digest: args_digest(&args),
        call_id: "call-1".into(),
        expires_at: now + 300,
    };
    let record = approvals
        .request(binding, args, Approver::Group("treasury".into()), "amount over 1000", None, now)
        .await
        .expect("approval requested");
    let waiting = {
        let approvals = approvals.clone();
        let id = record.id.clone();
        tokio::spawn(async move {
            approvals.wait(&id, tokio::time::Instant::now() + std::time::Duration::from_secs(10)).await
        })
    };

    let address = world.gateway.address;
    let unauthenticated = harness::send(address, call(&world, "GET", "/.toolgate/approvals", None, "")).await;
    assert_eq!(unauthenticated.status, StatusCode::UNAUTHORIZED);
    let outsider = world.token("olga", &["engineering"]);
    let queue =
        harness::send(address, call(&world, "GET", "/.toolgate/approvals", Some(&outsider), "")).await;
    assert_eq!(json_of(&queue)["approvals"], json!([]), "not her group's call");

    let treasurer = world.token("tara", &["treasury"]);
    let queue =
        harness::send(address, call(&world, "GET", "/.toolgate/approvals", Some(&treasurer), "")).await;
    let listed = &json_of(&queue)["approvals"][0];
    assert_eq!(listed["id"], record.id.as_str());
    assert_eq!(listed["requested_by"], "ivan");
    assert_eq!(listed["args"], json!({"amount": 1500, "invoice": "INV-7"}), "the exact arguments");

    let path = format!("/.toolgate/approvals/{}", record.id);
    // The requester is in the group too, but may not approve his own call.
    let ivan = world.token("ivan", &["treasury"]);
    let own = harness::send(address, call(&world, "POST", &path, Some(&ivan), r#"{"approve": true}"#)).await;
    assert_eq!(own.status, StatusCode::CONFLICT, "{}", own.text());
    let approved = harness::send(
        address,
        call(&world, "POST", &path, Some(&treasurer), r#"{"approve": true, "comment": "ok"}"#),
    )
    .await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.text());
    let again =
        harness::send(address, call(&world, "POST", &path, Some(&treasurer), r#"{"approve": false}"#)).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "decided once");

    let decided = waiting.await.expect("task").expect("wait");
    assert!(matches!(decided.state, ApprovalState::Approved { .. }), "{:?}", decided.state);
    world.gateway.stop().await;
}
