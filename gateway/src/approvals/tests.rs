//! Approvals: binding checks (arguments, user, session, site, tool, call), replay, expiry,
//! unknown ids, forged tokens, who may decide, racing consumers, waiting, the dashboard queue.
use super::*;
use crate::store::SledStore;
use serde_json::json;
use std::sync::Arc;

const NOW: u64 = 1_000_000;

fn approvals() -> Approvals {
    Approvals::new(
        crate::store::StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store"))),
        [42; 32],
    )
}

fn binding_for(arguments: &serde_json::Value, now: u64) -> (Binding, String) {
    let canonical = canonical_args(arguments);
    let binding = Binding {
        user: "alice".into(),
        session: "session-digest".into(),
        site: "expenses".into(),
        tool: "submit_expense".into(),
        args_digest: args_digest(&canonical),
        call_id: "call_1".into(),
        expires_at: now + 300,
    };
    (binding, canonical)
}

async fn pending(approvals: &Approvals, approver: Approver) -> ApprovalRecord {
    let (binding, canonical) = binding_for(&json!({"amount": 1200, "note": "taxi"}), NOW);
    approvals.request(binding, canonical, approver, "rule big-expenses", None, NOW).await.expect("request")
}

/// An approved record (by the user themself) and its token.
async fn approved(approvals: &Approvals) -> (ApprovalRecord, String) {
    let record = pending(approvals, Approver::User).await;
    let record = approvals
        .decide(&record.id, &Decider::member("alice", &[]), true, "ok", NOW + 1)
        .await
        .expect("decide");
    let token = approvals.token(&record);
    (record, token)
}

fn error(result: Result<ApprovalRecord, ApprovalError>) -> &'static str {
    match result {
        Ok(record) => panic!("expected a refusal, got {:?}", record.state),
        Err(error) => error.reason(),
    }
}

#[tokio::test]
async fn an_approved_call_is_consumed_once_and_replay_is_refused() {
    let approvals = approvals();
    let (record, token) = approved(&approvals).await;
    let consumed = approvals.consume(&token, &record.binding, NOW + 2).await.expect("first use");
    assert_eq!(consumed.state, ApprovalState::Consumed { at: NOW + 2 });
    assert_eq!(error(approvals.consume(&token, &record.binding, NOW + 3).await), "replayed");
    assert_eq!(
        approvals.get(&record.id).await.expect("get").map(|record| record.state),
        Some(consumed.state)
    );
}

#[tokio::test]
async fn every_binding_field_is_checked_with_its_own_error() {
    let approvals = approvals();
    let (record, token) = approved(&approvals).await;
    let expected = &record.binding;
    let (changed, _) = binding_for(&json!({"amount": 12000, "note": "taxi"}), NOW);
    let cases = [
        (Binding { args_digest: changed.args_digest, ..expected.clone() }, "arguments_changed"),
        (Binding { user: "mallory".into(), ..expected.clone() }, "other_user"),
        (Binding { session: "another-session".into(), ..expected.clone() }, "other_session"),
        (Binding { site: "hr".into(), ..expected.clone() }, "other_site"),
        (Binding { tool: "delete_expense".into(), ..expected.clone() }, "other_tool"),
        (Binding { call_id: "call_2".into(), ..expected.clone() }, "other_call"),
    ];
    for (binding, reason) in cases {
        assert_eq!(error(approvals.consume(&token, &binding, NOW + 2).await), reason);
    }
    // None of the refusals used the approval up.
    assert!(approvals.consume(&token, expected, NOW + 2).await.is_ok());
}

#[tokio::test]
async fn expired_unknown_forged_and_undecided_approvals_are_refused() {
    let approvals = approvals();
    let (record, token) = approved(&approvals).await;
    assert_eq!(error(approvals.consume(&token, &record.binding, record.binding.expires_at).await), "expired");

    let unknown = approvals.token(&ApprovalRecord { id: "A".repeat(22), ..record.clone() });
    assert_eq!(error(approvals.consume(&unknown, &record.binding, NOW + 2).await), "unknown_approval");
    assert_eq!(error(approvals.consume("not a token", &record.binding, NOW + 2).await), "malformed_token");

    // A token signed with another key, or for another binding, does not verify.
    let foreign = Approvals::new(
        crate::store::StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store"))),
        [7; 32],
    )
    .token(&record);
    assert_eq!(error(approvals.consume(&foreign, &record.binding, NOW + 2).await), "invalid_token");
    let widened = Binding { expires_at: record.binding.expires_at + 3600, ..record.binding.clone() };
    let stretched = approvals.token(&ApprovalRecord { binding: widened, ..record.clone() });
    assert_eq!(error(approvals.consume(&stretched, &record.binding, NOW + 2).await), "invalid_token");

    let waiting = pending(&approvals, Approver::User).await;
    let waiting_token = approvals.token(&waiting);
    assert_eq!(error(approvals.consume(&waiting_token, &waiting.binding, NOW + 2).await), "not_approved");
    approvals.decide(&waiting.id, &Decider::member("alice", &[]), false, "no", NOW + 2).await.expect("deny");
    assert_eq!(error(approvals.consume(&waiting_token, &waiting.binding, NOW + 3).await), "denied");
}

#[tokio::test]
async fn only_the_user_decides_their_own_approval() {
    let approvals = approvals();
    let record = pending(&approvals, Approver::User).await;
    let admins = vec!["admins".to_owned()];
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("bob", &admins), true, "", NOW).await),
        "not_allowed"
    );
    let decided = approvals
        .decide(&record.id, &Decider::member("alice", &[]), true, "", NOW)
        .await
        .expect("alice decides");
    assert!(matches!(decided.state, ApprovalState::Approved { ref by, .. } if by == "alice"));
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("alice", &[]), false, "", NOW).await),
        "already_decided"
    );
}

#[tokio::test]
async fn a_group_approval_needs_a_member_other_than_the_requester() {
    let approvals = approvals();
    let approver = Approver::Group("finance-approvers".into());
    let record = pending(&approvals, approver).await;
    let finance = vec!["finance-approvers".to_owned()];
    let staff = vec!["staff".to_owned()];
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("bob", &staff), true, "", NOW).await),
        "not_allowed"
    );
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("alice", &staff), true, "", NOW).await),
        "not_allowed"
    );
    // Alice is in the group too, but four eyes: she cannot approve her own call.
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("alice", &finance), true, "", NOW).await),
        "self_approval"
    );
    let decided = approvals
        .decide(&record.id, &Decider::member("carol", &finance), true, "fine", NOW)
        .await
        .expect("member");
    assert!(matches!(decided.state, ApprovalState::Approved { ref by, ref comment, .. }
        if by == "carol" && comment == "fine"));
}

#[tokio::test]
async fn deciding_after_expiry_marks_the_record_expired() {
    let approvals = approvals();
    let record = pending(&approvals, Approver::User).await;
    let late = record.binding.expires_at;
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("alice", &[]), true, "", late).await),
        "expired"
    );
    assert_eq!(
        approvals.get(&record.id).await.expect("get").map(|record| record.state),
        Some(ApprovalState::Expired)
    );
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("alice", &[]), true, "", NOW).await),
        "expired"
    );
}

#[tokio::test]
async fn sizes_and_inconsistent_requests_are_refused() {
    let approvals = approvals();
    let record = pending(&approvals, Approver::User).await;
    let long = "x".repeat(MAX_COMMENT + 1);
    assert_eq!(
        error(approvals.decide(&record.id, &Decider::member("alice", &[]), true, &long, NOW).await),
        "comment_too_long"
    );

    let (binding, _) = binding_for(&json!({}), NOW);
    let huge = canonical_args(&json!({"text": "x".repeat(MAX_CANONICAL_ARGS)}));
    let huge_binding = Binding { args_digest: args_digest(&huge), ..binding.clone() };
    let result = approvals.request(huge_binding, huge, Approver::User, "", None, NOW).await;
    assert_eq!(error(result), "arguments_too_large");

    let reordered = r#"{"b":1,"a":2}"#.to_owned();
    let reordered_binding = Binding { args_digest: args_digest(&reordered), ..binding.clone() };
    let result = approvals.request(reordered_binding, reordered, Approver::User, "", None, NOW).await;
    assert_eq!(error(result), "invalid_request", "arguments must be canonical");
    let result = approvals.request(binding.clone(), r#"{"a":1}"#.into(), Approver::User, "", None, NOW).await;
    assert_eq!(error(result), "invalid_request", "digest must match");
    let stale = Binding { expires_at: NOW, ..binding.clone() };
    assert_eq!(
        error(approvals.request(stale, "{}".into(), Approver::User, "", None, NOW).await),
        "invalid_request"
    );
    let form = FormTarget { method: "post".into(), action_path: "/submit".into() };
    let result = approvals.request(binding, "{}".into(), Approver::User, "", Some(form), NOW).await;
    assert_eq!(error(result), "invalid_request", "form method must be upper case");
    assert_eq!(approvals.get("../../etc").await.expect("get"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tasks_racing_to_consume_succeed_exactly_once() {
    for _ in 0..20 {
        let approvals = Arc::new(approvals());
        let (record, token) = approved(&approvals).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (approvals, barrier) = (Arc::clone(&approvals), Arc::clone(&barrier));
                let (token, binding) = (token.clone(), record.binding.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    approvals.consume(&token, &binding, NOW + 2).await.map_err(|error| error.reason())
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for racer in racers {
            outcomes.push(racer.await.expect("task"));
        }
        assert_eq!(outcomes.iter().filter(|outcome| outcome.is_ok()).count(), 1, "{outcomes:?}");
        assert!(outcomes.contains(&Err("replayed")), "{outcomes:?}");
    }
}

#[tokio::test]
async fn wait_resolves_on_a_decision_and_expires_at_the_deadline() {
    let approvals = Arc::new(approvals());
    let now = unix_now();
    let (binding, canonical) = binding_for(&json!({"amount": 5}), now);
    let record = approvals.request(binding, canonical, Approver::User, "", None, now).await.expect("request");
    let waiter = {
        let (approvals, id) = (Arc::clone(&approvals), record.id.clone());
        tokio::spawn(async move { approvals.wait(&id, Instant::now() + Duration::from_secs(30)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    approvals.decide(&record.id, &Decider::member("alice", &[]), false, "no", now).await.expect("decide");
    let started = std::time::Instant::now();
    let resolved = tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("woken").expect("task");
    assert!(matches!(resolved.expect("wait").state, ApprovalState::Denied { .. }));
    assert!(started.elapsed() < POLL_INTERVAL, "woken by the notifier, not the poll");

    let (binding, canonical) = binding_for(&json!({"amount": 6}), now);
    let record = approvals.request(binding, canonical, Approver::User, "", None, now).await.expect("request");
    let expired = approvals.wait(&record.id, Instant::now() + Duration::from_millis(50)).await.expect("wait");
    assert_eq!(expired.state, ApprovalState::Expired);
    let missing = approvals.wait(&"B".repeat(22), Instant::now()).await;
    assert!(matches!(missing, Err(ApprovalError::Unknown)));
}

#[tokio::test]
async fn the_dashboard_queue_lists_pending_group_approvals_of_the_deciders_groups() {
    let approvals = approvals();
    let now = unix_now();
    let ask = async |arguments: serde_json::Value, approver: Approver| {
        let (binding, canonical) = binding_for(&arguments, now);
        approvals.request(binding, canonical, approver, "", None, now).await.expect("request")
    };
    let finance = ask(json!({"n": 1}), Approver::Group("finance".into())).await;
    let decided = ask(json!({"n": 2}), Approver::Group("finance".into())).await;
    ask(json!({"n": 3}), Approver::Group("hr".into())).await;
    ask(json!({"n": 4}), Approver::User).await;
    let carol_groups = ["finance".to_owned()];
    approvals
        .decide(&decided.id, &Decider::member("carol", &carol_groups), true, "", now)
        .await
        .expect("decide");
    let queue = approvals
        .pending_for(Queue::Groups(&["finance".to_owned(), "staff".to_owned()]))
        .await
        .expect("queue");
    assert_eq!(queue.iter().map(|record| record.id.as_str()).collect::<Vec<_>>(), vec![finance.id.as_str()]);
    assert!(approvals.pending_for(Queue::Groups(&[])).await.expect("queue").is_empty());
    // Administrators and auditors see every group's pending approvals (never a user's own).
    let everything = approvals.pending_for(Queue::Everything).await.expect("queue");
    assert_eq!(everything.len(), 2, "finance's and hr's: {everything:?}");
}

/// Administrators decide any group's approval, so a group whose only member asked is not stuck
/// until the approval expires; four eyes still holds for them.
#[tokio::test]
async fn an_administrator_decides_any_group_approval_but_not_their_own() {
    let approvals = approvals();
    let record = pending(&approvals, Approver::Group("finance-approvers".into())).await;
    let none: Vec<String> = Vec::new();
    let erin = Decider { user: "erin", groups: &none, admin: true };
    let alice_as_admin = Decider { user: "alice", groups: &none, admin: true };
    assert_eq!(error(approvals.decide(&record.id, &alice_as_admin, true, "", NOW).await), "self_approval");
    let decided =
        approvals.decide(&record.id, &erin, true, "covering", NOW).await.expect("an administrator decides");
    assert!(matches!(decided.state, ApprovalState::Approved { ref by, .. } if by == "erin"));
    let user_call = pending(&approvals, Approver::User).await;
    assert_eq!(
        error(approvals.decide(&user_call.id, &erin, true, "", NOW).await),
        "not_allowed",
        "a user's own confirmation stays theirs"
    );
}

#[tokio::test]
async fn sweep_removes_records_an_hour_past_expiry() {
    let approvals = approvals();
    let record = pending(&approvals, Approver::User).await;
    assert_eq!(approvals.sweep(record.binding.expires_at).await.expect("sweep"), 0);
    assert_eq!(approvals.sweep(record.binding.expires_at + RETENTION_SECONDS).await.expect("sweep"), 1);
    assert_eq!(approvals.get(&record.id).await.expect("get"), None);
}

#[tokio::test]
async fn canonical_arguments_sort_keys_and_drop_whitespace() {
    let one = canonical_args(&json!({"b": [1, {"d": 1, "c": "x y"}], "a": null}));
    assert_eq!(one, r#"{"a":null,"b":[1,{"c":"x y","d":1}]}"#);
    assert_eq!(args_digest(&one).len(), 64);
    assert_ne!(args_digest(&one), args_digest(&canonical_args(&json!({"a": 0}))));
}
