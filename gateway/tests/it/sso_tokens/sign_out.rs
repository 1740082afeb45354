//! Signing out from the provider's side (OpenID Connect back-channel logout), a discovery
//! document that names another issuer, and a provider that stalls while the gateway refetches
//! its keys.

use super::*;

const LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

impl World {
    /// Logout token claims for provider session `sid`.
    fn logout_claims(&self, sid: &str) -> Value {
        let now = unix_now();
        json!({
            "iss": self.provider.issuer, "aud": CLIENT_ID, "sub": "alice", "sid": sid,
            "iat": now, "exp": now + 120, "jti": random_base64(12),
            "events": { LOGOUT_EVENT: {} },
        })
    }

    async fn post_logout_token(&self, body: &str) -> Answer {
        let request = Request::post("/.toolgate/backchannel-logout")
            .header("host", GATEWAY_HOST)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        harness::send(self.gateway.address, request).await
    }

    async fn signed_in(&self, client: &mut Client, signed_in: &SignedIn) -> bool {
        let answer = self.whoami_cookie(client, &format!("toolgate={}", signed_in.session)).await;
        match answer.status {
            StatusCode::OK => true,
            StatusCode::UNAUTHORIZED => false,
            other => panic!("whoami answered {other}: {}", answer.text()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_channel_logout_tokens_are_verified_and_end_exactly_the_named_sessions() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    let first = sign_in_with(&world, &mut client, json!({ "sid": "provider-session-1" })).await;
    let second = sign_in_with(&world, &mut client, json!({ "sid": "provider-session-2" })).await;
    assert!(world.signed_in(&mut client, &first).await && world.signed_in(&mut client, &second).await);

    let sign = |claims: &Value| world.token_with(&world.keys.ec, "ec-1", claims);
    let good = world.logout_claims("provider-session-1");
    let with = |name: &str, value: Value| {
        let mut claims = good.clone();
        if value.is_null() {
            claims.as_object_mut().expect("object").remove(name);
        } else {
            claims[name] = value;
        }
        claims
    };
    let now = unix_now();
    let mut id_token = world.claims();
    id_token["sid"] = json!("provider-session-1");
    id_token["nonce"] = json!("n");
    let forged: Vec<(&str, String)> = vec![
        ("no token", String::new()),
        ("not a JWT", "logout_token=hello".into()),
        (
            "signed by another key",
            format!("logout_token={}", world.token_with(&world.keys.attacker, "ec-1", &good)),
        ),
        ("an ID token", format!("logout_token={}", sign(&id_token))),
        ("no events", format!("logout_token={}", sign(&with("events", Value::Null)))),
        ("another event", format!("logout_token={}", sign(&with("events", json!({ "urn:x": {} }))))),
        ("with a nonce", format!("logout_token={}", sign(&with("nonce", json!("n"))))),
        ("another audience", format!("logout_token={}", sign(&with("aud", json!("someone-else"))))),
        ("another issuer", format!("logout_token={}", sign(&with("iss", json!("http://evil.example"))))),
        ("expired", format!("logout_token={}", sign(&with("exp", json!(now - 600))))),
        ("no iat", format!("logout_token={}", sign(&with("iat", Value::Null)))),
        ("no jti", format!("logout_token={}", sign(&with("jti", Value::Null)))),
        (
            "neither sid nor sub",
            format!(
                "logout_token={}",
                sign(&{
                    let mut claims = with("sid", Value::Null);
                    claims.as_object_mut().expect("object").remove("sub");
                    claims
                })
            ),
        ),
        ("two tokens", format!("logout_token={0}&logout_token={0}", sign(&good))),
    ];
    for (label, body) in &forged {
        let answer = world.post_logout_token(body).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{label}: {}", answer.text());
        assert_eq!(answer.header("cache-control"), Some("no-store"), "{label}");
        let error: Value = serde_json::from_slice(&answer.body).expect("an OAuth-style error");
        assert_eq!(error["error"], "invalid_request", "{label}");
    }
    assert!(world.signed_in(&mut client, &first).await, "a forged logout token ended a session");
    assert!(world.signed_in(&mut client, &second).await);

    // The provider's real token ends the session it names, and only that one.
    let token = sign(&good);
    let answer = world.post_logout_token(&format!("logout_token={token}")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert!(!world.signed_in(&mut client, &first).await, "the named session lives on");
    assert!(world.signed_in(&mut client, &second).await, "another provider session was ended");
    let replay = world.post_logout_token(&format!("logout_token={token}")).await;
    assert_eq!(replay.status, StatusCode::BAD_REQUEST, "a logout token is used once");

    // A token naming only the user ends every session of that user.
    let mut by_user = with("sid", Value::Null);
    by_user["jti"] = json!("another-token");
    let by_user = sign(&by_user);
    let answer = world.post_logout_token(&format!("logout_token={by_user}")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert!(!world.signed_in(&mut client, &second).await);
}

/// An issuer that does not match the provider's discovery document is a configuration
/// mismatch: the page and the log say so, not "cannot be reached".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovery_document_naming_another_issuer_is_reported_as_a_configuration_mismatch() {
    let world = World::start().await;
    world.provider.with_state(|state| state.published_issuer = Some(format!("{}/", world.provider.issuer)));
    let mut client = Client::new(world.gateway.address);
    let login = start_login(&mut client, &world.site).await;
    assert_eq!(login.status, StatusCode::SERVICE_UNAVAILABLE, "{}", login.text());
    let page = login.text();
    assert!(page.contains("configuration mismatch"), "{page}");
    assert!(!page.contains("cannot be reached"), "{page}");
    // Asked again within the retry pause, the answer is still the mismatch, not an outage.
    let again = start_login(&mut client, &world.site).await;
    assert!(again.text().contains("configuration mismatch"), "{}", again.text());
    // Nor does anything else get in.
    let api = world.whoami(&mut client, &format!("Bearer {}", world.valid_token())).await;
    assert_refused_or_unavailable(&api, "a bearer token while discovery mismatches");
}

/// Readers never wait on the network: while a key refetch hangs at the provider, requests whose
/// keys are known go on being answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_key_refetch_does_not_hold_up_requests_with_known_keys() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    let signed_in = sign_in(&world, &mut client).await;
    assert_eq!(
        world.whoami(&mut client, &format!("Bearer {}", world.valid_token())).await.status,
        StatusCode::OK
    );

    world.provider.set_jwks_stalled(true);
    // Past the refetch interval, so an unknown key id goes back to the provider, and hangs.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let unknown = world.token_with(&world.keys.attacker, "ec-77", &world.claims());
    let stalled = {
        let (address, site) = (world.gateway.address, world.site.clone());
        tokio::spawn(async move {
            Client::new(address)
                .get(&site, "/.toolgate/whoami", &[("authorization", &format!("Bearer {unknown}"))])
                .await
        })
    };
    while world.provider.jwks_hits() < 2 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A token never seen before (so not in the verified-token cache), signed with a known key.
    let mut claims = world.claims();
    claims["jti"] = json!("fresh");
    let fresh = world.token_with(&world.keys.ec, "ec-1", &claims);
    // A deadlock guard, not a timing claim: before fetch-then-swap this request waited for the
    // stalled refetch for as long as the provider stalled.
    let answer =
        tokio::time::timeout(Duration::from_secs(20), world.whoami(&mut client, &format!("Bearer {fresh}")))
            .await
            .expect("a request with a known key waited for the stalled refetch");
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    assert!(world.signed_in(&mut client, &signed_in).await);
    assert!(!stalled.is_finished(), "the refetch was not stalled: the test proves nothing");
    world.provider.set_jwks_stalled(false);
    let refused = stalled.await.expect("stalled request");
    assert_refused_or_unavailable(&refused, "the unknown key after the stall");
}
