//! Hostile tokens and cookies against a gateway with single sign-on. A fake OpenID provider on
//! port 0 publishes an EC key (`ec-1`) and an RSA key (`rsa-1`); positive controls prove the
//! setup accepts what it should, then hundreds of forged, malformed and mis-claimed bearer tokens
//! and session cookies must each get exactly 401 without ever reaching the site. Also: failing
//! closed while the provider is down, and key rotation at the provider.

use crate::harness::{self, Answer, Upstream};
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::hmac;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use gateway::app::{self, Running};
use gateway::config::Config;
use gateway::secrets::SecretRef;
use gateway::shutdown::Shutdown;
use gateway::sso::cookies::CookieKind;
use gateway::sso::keys::KeyRing;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

const CLIENT_ID: &str = "toolgate-test";
const GATEWAY_HOST: &str = "localhost:1";
const LOGIN_PREFIX: &str = "http://localhost:1/.toolgate/login?";
/// The gateway's session key, so the test can seal cookies exactly as the gateway does.
const SESSION_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const OTHER_SESSION_KEY: &str = "HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4=";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_and_malformed_bearer_tokens_are_refused() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    let valid = world.valid_token();
    let control = world.whoami(&mut client, &format!("Bearer {valid}")).await;
    assert_eq!(control.status, StatusCode::OK, "positive control: {}", control.text());
    let identity: Value = serde_json::from_slice(&control.body).expect("whoami answers JSON");
    assert_eq!((identity["user"].as_str(), identity["via"].as_str()), (Some("alice"), Some("bearer")));
    assert_eq!(identity["groups"], json!(["eng"]));

    let corpus = forged_tokens(&world, &valid);
    assert!(corpus.len() >= 300, "only {} tokens", corpus.len());
    let jwks_before = world.provider.jwks_hits();
    let started = Instant::now();
    let mut wrong = Vec::new();
    for (label, authorization) in &corpus {
        let answer = world.whoami(&mut client, authorization).await;
        if answer.status != StatusCode::UNAUTHORIZED {
            wrong.push(format!("{label}: {} {}", answer.status, answer.text()));
        }
    }
    let report = wrong.join("\n");
    assert!(wrong.is_empty(), "{} of {} tokens not refused with 401:\n{report}", wrong.len(), corpus.len());
    // Unknown key ids refetch the provider's keys at most once per interval (1 s), however many
    // arrive: an attacker cannot turn the gateway into a flood against the provider.
    let refetches = world.provider.jwks_hits() - jwks_before;
    let allowed = started.elapsed().as_secs() as usize + 2;
    assert!(refetches <= allowed, "{refetches} key fetches in {:?}", started.elapsed());

    let after = world.whoami(&mut client, &format!("Bearer {}", world.valid_token())).await;
    assert_eq!(after.status, StatusCode::OK, "the gateway still verifies good tokens afterwards");
    assert!(world.upstream.requests().is_empty(), "no whoami request may reach the site");
}

/// RFC 7519 §4.1.1: `iss` is a single StringOrURI. jsonwebtoken alone accepts an array and
/// passes it when any member matches; the gateway must not take such a token as ours.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issuer_claims_that_are_arrays_are_refused() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    assert_eq!(world.whoami(&mut client, &control_auth(&world)).await.status, StatusCode::OK);
    let issuer = world.provider.issuer.clone();
    let mut wrong = Vec::new();
    for (label, value) in [
        ("[ours]", json!([issuer])),
        ("[ours, evil]", json!([issuer, "https://evil.example"])),
        ("[evil, ours]", json!(["https://evil.example", issuer])),
    ] {
        let mut claims = world.claims();
        claims["iss"] = value;
        let token = world.token_with(&world.keys.ec, "ec-1", &claims);
        let answer = world.whoami(&mut client, &format!("Bearer {token}")).await;
        if answer.status != StatusCode::UNAUTHORIZED {
            wrong.push(format!("iss {label}: {} {}", answer.status, answer.text()));
        }
    }
    assert!(wrong.is_empty(), "issuer arrays accepted:\n{}", wrong.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_breaks_inside_a_token_never_authenticate() {
    let world = World::start().await;
    let valid = world.valid_token();
    let (head, tail) = valid.split_at(valid.len() / 2);
    for (label, value) in [("bare LF", format!("{head}\n{tail}")), ("obs-fold", format!("{head}\r\n {tail}"))]
    {
        let mut stream = TcpStream::connect(world.gateway.address).await.expect("connect");
        let request = format!(
            "GET /.toolgate/whoami HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {value}\r\n\
             Connection: close\r\n\r\n",
            world.site
        );
        stream.write_all(request.as_bytes()).await.expect("send");
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 4"), "{label}: {answer}");
    }
    let mut client = Client::new(world.gateway.address);
    let after = world.whoami(&mut client, &format!("Bearer {valid}")).await;
    assert_eq!(after.status, StatusCode::OK, "the gateway still answers");
    assert!(world.upstream.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_and_foreign_session_cookies_are_refused() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    let flow = sign_in(&world, &mut client).await;
    // Positive controls: the real cookie works, and the test's copy of the key ring seals
    // cookies the gateway opens (so the foreign ones below differ in one thing only).
    let ring = key_ring(SESSION_KEY);
    let session_id = ring.open(CookieKind::Session.purpose(), &flow.session).expect("real cookie opens");
    let resealed = ring.seal(CookieKind::Session.purpose(), &session_id);
    for value in [&flow.session, &resealed] {
        let answer = world.whoami_cookie(&mut client, &format!("toolgate={value}")).await;
        assert_eq!(answer.status, StatusCode::OK, "control: {}", answer.text());
        assert!(answer.text().contains("\"via\":\"session\""), "{}", answer.text());
    }
    // This gateway speaks plain HTTP: only the plain name counts there, just as over HTTPS only
    // the `__Host-` name counts (a cookie under the other name may have been planted).
    let other_name = world.whoami_cookie(&mut client, &format!("__Host-toolgate={}", flow.session)).await;
    assert_eq!(
        other_name.status,
        StatusCode::UNAUTHORIZED,
        "the real session under the other name is refused"
    );

    let corpus = forged_cookies(&flow, &ring, &session_id);
    let mut wrong = Vec::new();
    for (label, value) in &corpus {
        for name in ["toolgate", "__Host-toolgate"] {
            let cookie = format!("{name}={value}");
            let whoami = world.whoami_cookie(&mut client, &cookie).await;
            if whoami.status != StatusCode::UNAUTHORIZED {
                wrong.push(format!("{label} as {name}: whoami {}", whoami.status));
            }
            let navigation = client
                .get(&world.site, "/reports?q=1", &[("accept", "text/html"), ("cookie", &cookie)])
                .await;
            let location = navigation.header("location").unwrap_or_default();
            if navigation.status != StatusCode::FOUND || !location.starts_with(LOGIN_PREFIX) {
                wrong.push(format!("{label} as {name}: navigation {} to {location:?}", navigation.status));
            }
            let api = client.get(&world.site, "/api/items", &[("accept", "*/*"), ("cookie", &cookie)]).await;
            if api.status != StatusCode::UNAUTHORIZED {
                wrong.push(format!("{label} as {name}: API call {}", api.status));
            }
        }
    }
    assert!(corpus.len() >= 40, "only {} cookies", corpus.len());
    assert!(wrong.is_empty(), "{} refusals missing:\n{}", wrong.len(), wrong.join("\n"));
    assert!(world.upstream.requests().is_empty(), "a forged cookie reached the site");

    // The count above is meaningful: the real cookie does reach the site, once.
    let cookie = format!("toolgate={}", flow.session);
    let page = client.get(&world.site, "/reports", &[("accept", "text/html"), ("cookie", &cookie)]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text());
    let seen = world.upstream.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].headers.get("x-forwarded-user").map(|v| v.as_bytes()), Some(&b"alice"[..]));
    assert!(seen[0].headers.get("cookie").is_none(), "the gateway cookie never reaches the site");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_fails_closed_while_the_provider_is_unreachable() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    let control = world.whoami(&mut client, &format!("Bearer {}", world.valid_token())).await;
    assert_eq!(control.status, StatusCode::OK, "positive control: {}", control.text());

    world.provider.set_jwks_failing(true);
    // Past the refetch interval, so an unknown key id really does go back to the provider.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let unknown = world.token_with(&world.keys.attacker, "ec-9", &world.claims());
    let answer = world.whoami(&mut client, &format!("Bearer {unknown}")).await;
    assert_refused_or_unavailable(&answer, "unknown kid while the key set fails");
    assert_redirects_to_login(&mut client, &world.site).await;

    world.provider.stop();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let unknown = world.token_with(&world.keys.attacker, "ec-10", &world.claims());
    let answer = world.whoami(&mut client, &format!("Bearer {unknown}")).await;
    assert_refused_or_unavailable(&answer, "unknown kid while the provider is stopped");
    assert_redirects_to_login(&mut client, &world.site).await;

    // A gateway that never saw the provider: navigation still redirects, login cannot start,
    // and even a well-signed token cannot be verified.
    let upstream = recording_upstream().await;
    let (second, _secrets) = start_gateway(&world.provider.issuer, upstream.address).await;
    let site = format!("app.localhost:{}", second.address.port());
    let mut second_client = Client::new(second.address);
    let location = assert_redirects_to_login(&mut second_client, &site).await;
    let login_path = location.strip_prefix("http://localhost:1").expect("login on the gateway host");
    assert!(login_path.contains("bind="), "{login_path}");
    let return_url = format!("http://{site}/");
    let login = second_client
        .get(
            GATEWAY_HOST,
            &format!("/.toolgate/login?return={}&bind=x", form_encode(&return_url)),
            &[("accept", "text/html")],
        )
        .await;
    assert_eq!(login.status, StatusCode::SERVICE_UNAVAILABLE, "{}", login.text());
    let answer =
        second_client.get(&site, "/.toolgate/whoami", &[("authorization", &control_auth(&world))]).await;
    assert_refused_or_unavailable(&answer, "valid token while the provider was never reachable");
    assert!(world.upstream.requests().is_empty(), "first gateway let a request through");
    assert!(upstream.requests().is_empty(), "second gateway let a request through");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_provider_keys_are_picked_up_and_retired_keys_refused() {
    let world = World::start().await;
    let mut client = Client::new(world.gateway.address);
    let old = world.valid_token();
    assert_eq!(world.whoami(&mut client, &format!("Bearer {old}")).await.status, StatusCode::OK);

    let new_key = ec_key();
    // Published without `alg`, as some providers do: the token's algorithm must still match the
    // key type.
    world.provider.publish(vec![ec_jwk(&new_key.pair, "ec-2", None), rsa_jwk(&world.keys.rsa, "rsa-1")]);
    let rotated = Instant::now();
    loop {
        let token = world.token_with(&new_key, "ec-2", &world.claims());
        let answer = world.whoami(&mut client, &format!("Bearer {token}")).await;
        if answer.status == StatusCode::OK {
            break;
        }
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.text());
        assert!(rotated.elapsed() < Duration::from_secs(3), "ec-2 not accepted within 3 s of rotation");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let retired = world.token_with(&world.keys.ec, "ec-1", &world.claims());
    let mut confused_rsa = world.header("RS256", "ec-2");
    confused_rsa["typ"] = json!("JWT");
    let public_point = new_key.pair.public_key().as_ref().to_vec();
    for (label, token) in [
        ("retired ec-1", retired),
        ("RS256 over ec-2", jws(&confused_rsa, &world.claims(), &Signer::Rsa(&world.keys.rsa))),
        (
            "HS256 with ec-2's public point",
            jws(
                &world.header("HS256", "ec-2"),
                &world.claims(),
                &Signer::Hmac(hmac::HMAC_SHA256, &public_point),
            ),
        ),
        ("ec-2 signed by another key", world.token_with(&world.keys.attacker, "ec-2", &world.claims())),
    ] {
        let answer = world.whoami(&mut client, &format!("Bearer {token}")).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{label}: {}", answer.text());
    }
    assert!(world.upstream.requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// The token corpus.

/// Every forged or malformed token, labelled, as the full `Authorization` value.
fn forged_tokens(world: &World, valid: &str) -> Vec<(String, String)> {
    let mut tokens: Vec<(String, String)> = Vec::new();
    let mut add = |label: String, token: String| tokens.push((label, format!("Bearer {token}")));
    let keys = &world.keys;
    let claims = world.claims();
    let ec = Signer::Ec(&keys.ec.pair);

    // `alg: none`, in every casing, with empty, garbage and even correct-looking signatures.
    for alg in ["none", "None", "NONE", "nOnE", "NoNe", "nONE", "noNE", "NOne", "none ", "", "null"] {
        for with_kid in [true, false] {
            let mut header = json!({ "alg": alg, "typ": "JWT" });
            if with_kid {
                header["kid"] = json!("ec-1");
            }
            for (name, signer) in [
                ("empty", Signer::Bytes(Vec::new())),
                ("garbage", Signer::Bytes(b"garbage-signature".to_vec())),
                ("ec-1 signature", Signer::Ec(&keys.ec.pair)),
            ] {
                add(format!("alg {alg:?}, kid {with_kid}, {name} signature"), jws(&header, &claims, &signer));
            }
        }
    }

    // HMAC with a public key as the secret (key confusion), in every shape it is published in.
    let rsa_spki = keys.rsa.public_key().as_der().expect("rsa spki").as_ref().to_vec();
    let rsa_pkcs1 = keys.rsa.public_key().as_ref().to_vec();
    let (modulus, _) = rsa_components(&rsa_pkcs1);
    let ec_point = keys.ec.pair.public_key().as_ref().to_vec();
    let ec_spki = keys.ec.pair.public_key().as_der().expect("ec spki").as_ref().to_vec();
    let secrets: Vec<(&str, Vec<u8>)> = vec![
        ("RSA SPKI PEM", pem("PUBLIC KEY", &rsa_spki).into_bytes()),
        ("RSA SPKI PEM without newline", pem("PUBLIC KEY", &rsa_spki).trim_end().as_bytes().to_vec()),
        ("RSA PKCS#1 PEM", pem("RSA PUBLIC KEY", &rsa_pkcs1).into_bytes()),
        ("RSA SPKI DER", rsa_spki),
        ("RSA PKCS#1 DER", rsa_pkcs1),
        ("RSA JWK JSON", rsa_jwk(&keys.rsa, "rsa-1").to_string().into_bytes()),
        ("RSA modulus bytes", modulus.clone()),
        ("RSA modulus base64url", URL_SAFE_NO_PAD.encode(&modulus).into_bytes()),
        ("EC point", ec_point.clone()),
        ("EC SPKI DER", ec_spki.clone()),
        ("EC SPKI PEM", pem("PUBLIC KEY", &ec_spki).into_bytes()),
        ("EC JWK JSON", ec_jwk(&keys.ec.pair, "ec-1", Some("ES256")).to_string().into_bytes()),
        ("EC x coordinate", ec_point[1..33].to_vec()),
    ];
    for (alg_name, alg) in
        [("HS256", hmac::HMAC_SHA256), ("HS384", hmac::HMAC_SHA384), ("HS512", hmac::HMAC_SHA512)]
    {
        for (secret_name, secret) in &secrets {
            for kid in ["rsa-1", "ec-1"] {
                let header = world.header(alg_name, kid);
                add(
                    format!("{alg_name} keyed with {secret_name}, kid {kid}"),
                    jws(&header, &claims, &Signer::Hmac(alg, secret)),
                );
            }
        }
    }

    // The algorithm in the header does not match the key that signed, or the key it names.
    let rsa = Signer::Rsa(&keys.rsa);
    for (label, alg, kid, signer) in [
        ("RS256 header, ec-1, EC-signed", "RS256", "ec-1", &ec),
        ("RS256 header, rsa-1, EC-signed", "RS256", "rsa-1", &ec),
        ("RS256 header, ec-1, RSA-signed", "RS256", "ec-1", &rsa),
        ("ES256 header, rsa-1, RSA-signed", "ES256", "rsa-1", &rsa),
        ("ES256 header, ec-1, RSA-signed", "ES256", "ec-1", &rsa),
        ("ES256 header, rsa-1, EC-signed", "ES256", "rsa-1", &ec),
        ("PS256 header, rsa-1, RSA-signed", "PS256", "rsa-1", &rsa),
        ("RS512 header, rsa-1, RSA-signed", "RS512", "rsa-1", &rsa),
    ] {
        add(label.into(), jws(&world.header(alg, kid), &claims, signer));
    }
    for alg in [
        "ES384",
        "ES512",
        "RS384",
        "PS384",
        "PS512",
        "EdDSA",
        "RSA-OAEP",
        "A128KW",
        "dir",
        "es256",
        "ES256 ",
        " ES256",
        "ES256\u{0}",
        "ＥＳ256",
    ] {
        add(format!("unaccepted alg {alg:?}"), jws(&world.header(alg, "ec-1"), &claims, &ec));
    }
    for alg in [json!(256), json!(null), json!(["ES256"]), json!({ "ES256": true }), json!(true)] {
        let header = json!({ "alg": alg, "kid": "ec-1" });
        add(format!("alg {alg}"), jws(&header, &claims, &ec));
    }
    add("alg missing".into(), jws(&json!({ "kid": "ec-1", "typ": "JWT" }), &claims, &ec));

    // Key ids that are not ec-1, each token otherwise signed correctly by ec-1.
    let long_kid = "k".repeat(10 * 1024);
    let kids: Vec<(&str, Value)> = vec![
        ("unknown", json!("unknown")),
        ("ec-2 (not published)", json!("ec-2")),
        ("upper case", json!("EC-1")),
        ("trailing space", json!("ec-1 ")),
        ("leading space", json!(" ec-1")),
        ("trailing NUL", json!("ec-1\u{0}")),
        ("inner NUL", json!("ec\u{0}-1")),
        ("traversal", json!("../../etc/passwd")),
        ("traversal to the key set", json!("../jwks")),
        ("dev null", json!("/dev/null")),
        ("backslash traversal", json!("..\\..\\x")),
        ("encoded traversal", json!("%2e%2e%2f")),
        ("encoded traversal to ec-1", json!("%2e%2e%2fec-1")),
        ("dot segments around ec-1", json!("ec-1/../ec-1")),
        ("URL", json!("http://evil.example/jwks.json")),
        ("URL of the real key set", json!(format!("{}/jwks", world.provider.issuer))),
        ("file URL", json!("file:///etc/passwd")),
        ("empty", json!("")),
        ("10 KB", json!(long_kid)),
        ("129 characters", json!("k".repeat(129))),
        ("newline", json!("ec-1\nec-1")),
        ("cyrillic lookalike", json!("еc-1")),
        ("wildcard", json!("*")),
        ("number", json!(1)),
        ("null", json!(null)),
        ("array", json!(["ec-1"])),
        ("object", json!({ "kid": "ec-1" })),
        ("rsa-1 for an ES256 token", json!("rsa-1")),
    ];
    for (label, kid) in kids {
        let header = json!({ "alg": "ES256", "typ": "JWT", "kid": kid });
        add(format!("kid {label}"), jws(&header, &claims, &ec));
    }
    add("kid missing".into(), jws(&json!({ "alg": "ES256", "typ": "JWT" }), &claims, &ec));

    // Headers that bring their own key: refused even when the token is otherwise valid.
    let attacker = Signer::Ec(&keys.attacker.pair);
    let attacker_jwk = ec_jwk(&keys.attacker.pair, "ec-1", Some("ES256"));
    let real_jwk = ec_jwk(&keys.ec.pair, "ec-1", Some("ES256"));
    let attacker_url = "http://127.0.0.1:9/jwks";
    let real_url = format!("{}/jwks", world.provider.issuer);
    let x5c = json!([STANDARD.encode(&ec_spki)]);
    for (label, field, value, signer, kid) in [
        ("jwk: attacker key, kid ec-1", "jwk", attacker_jwk.clone(), &attacker, Some("ec-1")),
        ("jwk: attacker key, no kid", "jwk", attacker_jwk.clone(), &attacker, None),
        ("jwk: attacker key, its own kid", "jwk", attacker_jwk, &attacker, Some("attacker")),
        ("jwk: the real key, validly signed", "jwk", real_jwk, &ec, Some("ec-1")),
        ("jku: attacker URL", "jku", json!(attacker_url), &attacker, Some("ec-1")),
        ("jku: the real key set, validly signed", "jku", json!(real_url), &ec, Some("ec-1")),
        ("x5u: attacker URL", "x5u", json!(attacker_url), &attacker, Some("ec-1")),
        ("x5u: validly signed", "x5u", json!(real_url), &ec, Some("ec-1")),
        ("x5c: attacker", "x5c", x5c.clone(), &attacker, Some("ec-1")),
        ("x5c: validly signed", "x5c", x5c, &ec, Some("ec-1")),
        ("x5t: attacker", "x5t", json!("dGh1bWJwcmludA"), &attacker, Some("ec-1")),
        ("x5t#S256: attacker", "x5t#S256", json!("dGh1bWJwcmludA"), &attacker, Some("ec-1")),
    ] {
        let mut header = json!({ "alg": "ES256", "typ": "JWT" });
        header[field] = value;
        if let Some(kid) = kid {
            header["kid"] = json!(kid);
        }
        add(format!("embedded {label}"), jws(&header, &claims, signer));
    }

    // Claims that are wrong, each token correctly signed by ec-1.
    let issuer = world.provider.issuer.clone();
    let port = world.provider.address.port();
    let now = unix_now();
    let claim_cases: Vec<(&str, &str, Option<Value>)> = vec![
        ("aud other", "aud", Some(json!("other-client"))),
        ("aud empty", "aud", Some(json!(""))),
        ("aud prefix", "aud", Some(json!("toolgate"))),
        ("aud longer", "aud", Some(json!("toolgate-test-x"))),
        ("aud upper case", "aud", Some(json!("TOOLGATE-TEST"))),
        ("aud trailing space", "aud", Some(json!("toolgate-test "))),
        ("aud trailing NUL", "aud", Some(json!("toolgate-test\u{0}"))),
        ("aud array without ours", "aud", Some(json!(["other", "toolgate"]))),
        ("aud empty array", "aud", Some(json!([]))),
        ("aud number", "aud", Some(json!(7))),
        ("aud null", "aud", Some(json!(null))),
        ("aud true", "aud", Some(json!(true))),
        ("aud object", "aud", Some(json!({ "aud": CLIENT_ID }))),
        ("aud nested array", "aud", Some(json!([[CLIENT_ID]]))),
        ("aud missing", "aud", None),
        ("iss other", "iss", Some(json!("https://evil.example"))),
        ("iss trailing slash", "iss", Some(json!(format!("{issuer}/")))),
        ("iss other port", "iss", Some(json!(format!("http://127.0.0.1:{}", port.wrapping_add(1))))),
        ("iss https", "iss", Some(json!(format!("https://127.0.0.1:{port}")))),
        ("iss localhost", "iss", Some(json!(format!("http://localhost:{port}")))),
        ("iss upper-case scheme", "iss", Some(json!(format!("HTTP://127.0.0.1:{port}")))),
        ("iss with path", "iss", Some(json!(format!("{issuer}/.well-known/openid-configuration")))),
        ("iss trailing space", "iss", Some(json!(format!("{issuer} ")))),
        ("iss empty", "iss", Some(json!(""))),
        ("iss null", "iss", Some(json!(null))),
        ("iss number", "iss", Some(json!(1))),
        ("iss missing", "iss", None),
        ("exp 40 s ago", "exp", Some(json!(now - 40))),
        ("exp 61 s ago", "exp", Some(json!(now - 61))),
        ("exp an hour ago", "exp", Some(json!(now - 3600))),
        ("exp a year ago", "exp", Some(json!(now - 365 * 86400))),
        ("exp 0", "exp", Some(json!(0))),
        ("exp 1", "exp", Some(json!(1))),
        ("exp -1", "exp", Some(json!(-1))),
        ("exp string number", "exp", Some(json!("123"))),
        ("exp string future", "exp", Some(json!((now + 300).to_string()))),
        ("exp string", "exp", Some(json!("abc"))),
        ("exp true", "exp", Some(json!(true))),
        ("exp array", "exp", Some(json!([]))),
        ("exp object", "exp", Some(json!({}))),
        ("exp null", "exp", Some(json!(null))),
        ("exp missing", "exp", None),
        ("nbf in 40 s", "nbf", Some(json!(now + 40))),
        ("nbf in a minute", "nbf", Some(json!(now + 60))),
        ("nbf in an hour", "nbf", Some(json!(now + 3600))),
        ("nbf in 30 years", "nbf", Some(json!(now + 1_000_000_000))),
        ("nbf u64 max", "nbf", Some(json!(u64::MAX))),
        ("nbf string", "nbf", Some(json!("abc"))),
        ("nbf string number", "nbf", Some(json!("123"))),
        ("nbf true", "nbf", Some(json!(true))),
        ("nbf array", "nbf", Some(json!([]))),
        ("nbf object", "nbf", Some(json!({}))),
        ("sub missing", "sub", None),
        ("sub empty", "sub", Some(json!(""))),
        ("sub number", "sub", Some(json!(123))),
        ("sub null", "sub", Some(json!(null))),
        ("sub array", "sub", Some(json!(["alice"]))),
        ("sub with NUL", "sub", Some(json!("ali\u{0}ce"))),
        ("sub with CRLF", "sub", Some(json!("alice\r\nx-forwarded-user: admin"))),
        ("sub 300 characters", "sub", Some(json!("a".repeat(300)))),
    ];
    for (label, claim, value) in claim_cases {
        let mut changed = claims.clone();
        match value {
            Some(value) => changed[claim] = value,
            None => {
                changed.as_object_mut().map(|object| object.remove(claim));
            }
        }
        add(format!("claim {label}"), jws(&world.header("ES256", "ec-1"), &changed, &ec));
    }
    // Numbers serde cannot hold, written as raw JSON text.
    for (label, claim, number) in [
        ("exp 1e400", "exp", "1e400"),
        ("nbf 1e400", "nbf", "1e400"),
        ("exp -1e400", "exp", "-1e400"),
        ("exp 2^64", "exp", "18446744073709551616"),
    ] {
        let text =
            claims.to_string().replacen(&format!("\"{claim}\":"), &format!("\"{claim}\":{number},\"x\":"), 1);
        add(format!("claim {label}"), jws_text(&world.header("ES256", "ec-1").to_string(), &text, &ec));
    }

    // A valid token changed after signing.
    let [header, payload, signature]: [&str; 3] =
        valid.split('.').collect::<Vec<_>>().try_into().expect("three segments");
    let reencoded = |field: &str, value: Value| {
        let mut changed = claims.clone();
        changed[field] = value;
        format!("{header}.{}.{signature}", b64(changed.to_string()))
    };
    add("payload re-encoded: sub admin".into(), reencoded("sub", json!("admin")));
    add("payload re-encoded: groups admin".into(), reencoded("groups", json!(["admin"])));
    add("payload re-encoded: exp extended".into(), reencoded("exp", json!(now + 86400)));
    add("payload re-encoded: aud other".into(), reencoded("aud", json!("other")));
    for (label, changed) in [
        ("kid rsa-1", world.header("ES256", "rsa-1")),
        ("kid ec-2", world.header("ES256", "ec-2")),
        ("alg RS256", world.header("RS256", "ec-1")),
        ("alg none", json!({ "alg": "none", "kid": "ec-1" })),
        ("key order changed", json!({ "kid": "ec-1", "typ": "JWT", "alg": "ES256" })),
    ] {
        add(
            format!("header swapped: {label}"),
            format!("{}.{payload}.{signature}", b64(changed.to_string())),
        );
    }
    let signature_bytes = URL_SAFE_NO_PAD.decode(signature).expect("signature is base64url");
    for index in 0..signature_bytes.len() {
        let mut flipped = signature_bytes.clone();
        flipped[index] ^= 1 << (index % 8);
        add(
            format!("signature bit {} of byte {index} flipped", index % 8),
            format!("{header}.{payload}.{}", b64(&flipped)),
        );
    }
    let (r, s) = signature_bytes.split_at(32);
    for (label, bytes) in [
        ("zero signature", vec![0u8; 64]),
        ("all-ones signature", vec![0xFF; 64]),
        ("r and s swapped", [s, r].concat()),
        ("63-byte signature", signature_bytes[..63].to_vec()),
        ("65-byte signature", [&signature_bytes[..], &[0]].concat()),
        ("signature twice", [&signature_bytes[..], &signature_bytes[..]].concat()),
        ("DER-wrapped signature", der_signature(r, s)),
    ] {
        add(label.into(), format!("{header}.{payload}.{}", b64(&bytes)));
    }

    // Every truncation of the valid token, from either end.
    for length in 0..valid.len() {
        add(format!("prefix of {length} characters"), valid[..length].to_owned());
    }
    for start in (1..valid.len()).step_by(7) {
        add(format!("suffix from character {start}"), valid[start..].to_owned());
    }

    // Wrong structure and encoding.
    for (label, token) in [
        ("one segment", "abc".to_owned()),
        ("two segments", format!("{header}.{payload}")),
        ("four segments", format!("{valid}.{signature}")),
        ("trailing dot", format!("{valid}.")),
        ("leading dot", format!(".{valid}")),
        ("JWE-shaped", format!("{header}.{payload}.{payload}.{payload}.{signature}")),
        ("only dots", "..".to_owned()),
        ("many dots", ".....".to_owned()),
        ("empty header", format!(".{payload}.{signature}")),
        ("empty payload", format!("{header}..{signature}")),
        ("empty signature", format!("{header}.{payload}.")),
        ("token twice", format!("{valid}{valid}")),
        ("token twice with dot", format!("{valid}.{valid}")),
        ("header not base64", format!("{header}*.{payload}.{signature}")),
        ("payload not base64", format!("{header}.{payload}!.{signature}")),
        ("signature not base64", format!("{header}.{payload}.{signature}$")),
        ("percent-encoded dots", format!("{header}%2E{payload}%2E{signature}")),
        ("standard alphabet +", format!("{header}.{payload}.+{}", &signature[1..])),
        ("standard alphabet /", format!("{header}.{payload}.{}/", &signature[..signature.len() - 1])),
        ("non-ASCII", format!("{header}.{payload}.{signature}é")),
    ] {
        add(label.into(), token);
    }
    for padding in ["=", "==", "%3D"] {
        add(format!("header padded {padding}"), format!("{header}{padding}.{payload}.{signature}"));
        add(format!("payload padded {padding}"), format!("{header}.{payload}{padding}.{signature}"));
        add(format!("signature padded {padding}"), format!("{header}.{payload}.{signature}{padding}"));
    }
    let header_end = header.len();
    for position in [1, header_end, header_end + 1, header_end + payload.len() / 2, valid.len() - 10] {
        for whitespace in [" ", "\t", "  "] {
            let mut spaced = valid.to_owned();
            spaced.insert_str(position, whitespace);
            add(format!("{whitespace:?} inside at {position}"), spaced);
        }
    }

    // Payloads that are not a claims object, correctly signed.
    let header_text = world.header("ES256", "ec-1").to_string();
    for (label, payload) in [
        ("payload not JSON", "not json".to_owned()),
        ("payload array", "[1,2]".to_owned()),
        ("payload null", "null".to_owned()),
        ("payload string", "\"alice\"".to_owned()),
        ("payload empty", String::new()),
        ("payload with BOM", format!("\u{feff}{claims}")),
        ("payload truncated JSON", claims.to_string()[..20].to_owned()),
        ("header not JSON", String::new()),
    ] {
        if label == "header not JSON" {
            add(label.into(), jws_text("{alg:ES256}", &claims.to_string(), &ec));
        } else {
            add(label.into(), jws_text(&header_text, &payload, &ec));
        }
    }
    add("header array".into(), jws_text("[\"ES256\"]", &claims.to_string(), &ec));
    add(
        "header with duplicate alg".into(),
        jws_text("{\"alg\":\"none\",\"alg\":\"ES256\",\"kid\":\"ec-1\"}", &claims.to_string(), &ec),
    );

    // Too large: validly signed, but far beyond any real token.
    for (label, size) in [("20 KB claim", 20 * 1024), ("1 MB claim", 1024 * 1024)] {
        let mut large = claims.clone();
        large["padding"] = json!("p".repeat(size));
        add(format!("oversized: {label}"), jws(&world.header("ES256", "ec-1"), &large, &ec));
    }
    add("oversized: 17 KB of A".into(), "A".repeat(17 * 1024));

    // The right token under the wrong scheme.
    tokens.push(("scheme Basic".into(), format!("Basic {valid}")));
    tokens.push(("scheme Token".into(), format!("Token {valid}")));
    tokens.push(("scheme without token".into(), "Bearer".into()));
    tokens.push(("scheme twice".into(), format!("Bearer Bearer {valid}")));
    tokens
}

// ---------------------------------------------------------------------------------------------
// The cookie corpus.

/// What a real sign-in left behind.
struct SignedIn {
    /// The site host's session cookie value.
    session: String,
    /// The gateway host's login cookie (sealed for another purpose).
    login: String,
    /// The site host's pending cookie (sealed for another purpose).
    pending: String,
}

fn forged_cookies(flow: &SignedIn, ring: &KeyRing, session_id: &[u8]) -> Vec<(String, String)> {
    let mut cookies: Vec<(String, String)> = Vec::new();
    let real = &flow.session;
    let bytes = URL_SAFE_NO_PAD.decode(real).expect("sealed cookies are base64url");
    // Layout: 4-byte key id, 12-byte nonce, ciphertext, 16-byte tag.
    for index in
        [0, 1, 3, 4, 9, 15, 16, 30, bytes.len() - 17, bytes.len() - 16, bytes.len() - 8, bytes.len() - 1]
    {
        for bit in [0, 7] {
            let mut flipped = bytes.clone();
            flipped[index] ^= 1 << bit;
            cookies.push((format!("bit {bit} of byte {index} flipped"), URL_SAFE_NO_PAD.encode(&flipped)));
        }
    }
    for position in [0, real.len() / 3, real.len() / 2, real.len() - 1] {
        let mut changed = real.clone().into_bytes();
        changed[position] = if changed[position] == b'A' { b'B' } else { b'A' };
        cookies.push((
            format!("character {position} replaced"),
            String::from_utf8(changed).expect("base64 is ASCII"),
        ));
    }
    for length in [0, 1, 10, 21, 22, 42, real.len() - 22, real.len() - 2, real.len() - 1] {
        cookies.push((format!("truncated to {length}"), real[..length].to_owned()));
    }
    for (label, value) in [
        ("extra character", format!("{real}A")),
        ("padded", format!("{}=", STANDARD.encode(&bytes))),
        ("leading character", format!("A{real}")),
        ("quoted", format!("\"{real}\"")),
        ("twice", format!("{real}{real}")),
    ] {
        cookies.push((label.into(), value));
    }
    let foreign_ring = key_ring(OTHER_SESSION_KEY);
    let mut unknown_id = session_id.to_vec();
    unknown_id[0] ^= 0xFF;
    for (label, value) in [
        ("real session id sealed for Login", ring.seal(CookieKind::Login.purpose(), session_id)),
        ("real session id sealed for Pending", ring.seal(CookieKind::Pending.purpose(), session_id)),
        (
            "real session id sealed by another key ring",
            foreign_ring.seal(CookieKind::Session.purpose(), session_id),
        ),
        ("unknown session id, correctly sealed", ring.seal(CookieKind::Session.purpose(), &unknown_id)),
        (
            "session id hex, correctly sealed",
            ring.seal(CookieKind::Session.purpose(), hex(session_id).as_bytes()),
        ),
        ("31-byte session id, correctly sealed", ring.seal(CookieKind::Session.purpose(), &session_id[..31])),
        ("empty plaintext, correctly sealed", ring.seal(CookieKind::Session.purpose(), b"")),
        ("the login cookie", flow.login.clone()),
        ("the pending cookie", flow.pending.clone()),
        ("empty", String::new()),
        ("deleted", "deleted".into()),
        ("8 KB", random_base64(6 * 1024)),
        ("just over 4 KB", random_base64(3073)),
    ] {
        cookies.push((label.into(), value));
    }
    for length in [8, 43, 64, 86, 200, 3000] {
        cookies.push((format!("random {length} bytes"), random_base64(length)));
    }
    cookies
}

// ---------------------------------------------------------------------------------------------
// Signing.

struct EcKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
}

/// The provider's keys, and one the attacker holds.
struct Keys {
    ec: EcKey,
    rsa: RsaKeyPair,
    attacker: EcKey,
}

impl Keys {
    fn generate() -> Self {
        let rsa = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("RSA key");
        Self { ec: ec_key(), rsa, attacker: ec_key() }
    }
}

fn ec_key() -> EcKey {
    let algorithm = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(algorithm, &SystemRandom::new()).expect("EC key");
    let pair = EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref()).expect("EC key parses");
    EcKey { pair, pkcs8: pkcs8.as_ref().to_vec() }
}

fn ec_jwk(pair: &EcdsaKeyPair, kid: &str, alg: Option<&str>) -> Value {
    // The uncompressed point: 0x04, then x and y, 32 bytes each.
    let point = pair.public_key().as_ref();
    let mut jwk = json!({
        "kty": "EC", "crv": "P-256", "use": "sig", "kid": kid,
        "x": b64(&point[1..33]), "y": b64(&point[33..65]),
    });
    if let Some(alg) = alg {
        jwk["alg"] = json!(alg);
    }
    jwk
}

fn rsa_jwk(pair: &RsaKeyPair, kid: &str) -> Value {
    let (modulus, exponent) = rsa_components(pair.public_key().as_ref());
    json!({ "kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid, "n": b64(&modulus), "e": b64(&exponent) })
}

/// `n` and `e` from a PKCS#1 `RSAPublicKey` (DER: a sequence of two integers).
fn rsa_components(der: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (_, body, _) = der_item(der);
    let (_, modulus, rest) = der_item(body);
    let (_, exponent, _) = der_item(rest);
    let strip = |integer: &[u8]| integer.iter().skip_while(|byte| **byte == 0).copied().collect();
    (strip(modulus), strip(exponent))
}

/// One DER item: (tag, contents, what follows).
fn der_item(input: &[u8]) -> (u8, &[u8], &[u8]) {
    let tag = input[0];
    let (length, header) = match input[1] {
        short if short < 0x80 => (usize::from(short), 2),
        long => {
            let count = usize::from(long & 0x7F);
            let length = input[2..2 + count].iter().fold(0usize, |acc, byte| acc << 8 | usize::from(*byte));
            (length, 2 + count)
        }
    };
    (tag, &input[header..header + length], &input[header + length..])
}

/// An ECDSA signature in ASN.1 DER, the form JWS forbids.
fn der_signature(r: &[u8], s: &[u8]) -> Vec<u8> {
    let integer = |value: &[u8]| {
        let mut bytes = vec![0x02];
        let padded = if value[0] & 0x80 != 0 { [&[0][..], value].concat() } else { value.to_vec() };
        bytes.push(u8::try_from(padded.len()).expect("short integer"));
        bytes.extend(padded);
        bytes
    };
    let body = [integer(r), integer(s)].concat();
    [vec![0x30, u8::try_from(body.len()).expect("short sequence")], body].concat()
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let lines: Vec<&str> =
        body.as_bytes().chunks(64).map(|line| std::str::from_utf8(line).unwrap_or("")).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

enum Signer<'a> {
    Ec(&'a EcdsaKeyPair),
    Rsa(&'a RsaKeyPair),
    Hmac(hmac::Algorithm, &'a [u8]),
    /// A fixed "signature".
    Bytes(Vec<u8>),
}

impl Signer<'_> {
    fn sign(&self, input: &[u8]) -> Vec<u8> {
        match self {
            Self::Ec(pair) => pair.sign(&SystemRandom::new(), input).expect("EC signs").as_ref().to_vec(),
            Self::Rsa(pair) => {
                let mut signature = vec![0; pair.public_modulus_len()];
                pair.sign(&signature::RSA_PKCS1_SHA256, &SystemRandom::new(), input, &mut signature)
                    .expect("RSA signs");
                signature
            }
            Self::Hmac(algorithm, secret) => {
                hmac::sign(&hmac::Key::new(*algorithm, secret), input).as_ref().to_vec()
            }
            Self::Bytes(bytes) => bytes.clone(),
        }
    }
}

fn jws(header: &Value, claims: &Value, signer: &Signer<'_>) -> String {
    jws_text(&header.to_string(), &claims.to_string(), signer)
}

/// A compact JWS from raw header and payload text.
fn jws_text(header: &str, payload: &str, signer: &Signer<'_>) -> String {
    let input = format!("{}.{}", b64(header), b64(payload));
    let signature = signer.sign(input.as_bytes());
    format!("{input}.{}", b64(signature))
}

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn random_base64(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("random bytes");
    URL_SAFE_NO_PAD.encode(buffer)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
}

fn key_ring(secret: &str) -> KeyRing {
    KeyRing::from_secrets(&[SecretRef::Generated(secret.to_owned())]).expect("key ring")
}

fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

// ---------------------------------------------------------------------------------------------
// The world: provider, upstream, gateway.

struct World {
    keys: Keys,
    provider: Provider,
    upstream: Upstream,
    gateway: Running,
    /// `app.localhost:PORT`, as a browser would address the site.
    site: String,
    _secrets: tempfile::TempDir,
}

impl World {
    async fn start() -> Self {
        let keys = Keys::generate();
        let provider =
            Provider::start(vec![ec_jwk(&keys.ec.pair, "ec-1", Some("ES256")), rsa_jwk(&keys.rsa, "rsa-1")])
                .await;
        let upstream = recording_upstream().await;
        let (gateway, secrets) = start_gateway(&provider.issuer, upstream.address).await;
        let site = format!("app.localhost:{}", gateway.address.port());
        Self { keys, provider, upstream, gateway, site, _secrets: secrets }
    }

    fn claims(&self) -> Value {
        let now = unix_now();
        json!({
            "iss": self.provider.issuer, "aud": CLIENT_ID, "sub": "alice",
            "exp": now + 300, "nbf": now, "iat": now, "groups": ["eng"],
        })
    }

    fn header(&self, alg: &str, kid: &str) -> Value {
        json!({ "alg": alg, "typ": "JWT", "kid": kid })
    }

    /// A good token, signed through jsonwebtoken as a real provider library would.
    fn valid_token(&self) -> String {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some("ec-1".into());
        let key = jsonwebtoken::EncodingKey::from_ec_der(&self.keys.ec.pkcs8);
        jsonwebtoken::encode(&header, &self.claims(), &key).expect("jsonwebtoken signs")
    }

    fn token_with(&self, key: &EcKey, kid: &str, claims: &Value) -> String {
        jws(&self.header("ES256", kid), claims, &Signer::Ec(&key.pair))
    }

    async fn whoami(&self, client: &mut Client, authorization: &str) -> Answer {
        client.get(&self.site, "/.toolgate/whoami", &[("authorization", authorization)]).await
    }

    async fn whoami_cookie(&self, client: &mut Client, cookie: &str) -> Answer {
        client.get(&self.site, "/.toolgate/whoami", &[("cookie", cookie)]).await
    }
}

fn control_auth(world: &World) -> String {
    format!("Bearer {}", world.valid_token())
}

async fn recording_upstream() -> Upstream {
    harness::upstream(|_| harness::reply("text/html", "<html><body>site page</body></html>")).await
}

/// A gateway with single sign-on against `issuer`, one site in front of `upstream`.
async fn start_gateway(issuer: &str, upstream: SocketAddr) -> (Running, tempfile::TempDir) {
    let secrets = tempfile::tempdir().expect("secrets directory");
    let client_secret = secrets.path().join("client-secret");
    std::fs::write(&client_secret, "s3cret\n").expect("write client secret");
    let session_key = secrets.path().join("session-key");
    std::fs::write(&session_key, SESSION_KEY).expect("write session key");
    let text = format!(
        "public_url = \"http://localhost:1\"\n\
         [server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
         [store]\npath = \":memory:\"\n\
         [limits]\nmax_header_bytes = 4194304\n\
         [sso]\nissuer = \"{issuer}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"file:{}\"\n\
         algorithms = [\"ES256\", \"RS256\"]\nkey_refetch_interval = \"1s\"\nsession_keys = [\"file:{}\"]\n\
         [sites.app]\nhost = \"app.localhost\"\nupstream = \"http://{upstream}\"\n",
        client_secret.display(),
        session_key.display(),
    );
    let config = Config::parse(&text, "sso-tokens.toml").expect("test config is valid");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind gateway");
    let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
    (app::start(config, listener, admin, Shutdown::new()).expect("gateway starts"), secrets)
}

/// Signs in through the whole redirect dance, the way a browser would.
async fn sign_in(world: &World, client: &mut Client) -> SignedIn {
    let start = client.get(&world.site, "/reports", &[("accept", "text/html")]).await;
    assert_eq!(start.status, StatusCode::FOUND, "{}", start.text());
    let location = start.header("location").expect("redirect to login").to_owned();
    let pending = set_cookie(&start, "toolgate-pending");
    let login_path = location.strip_prefix("http://localhost:1").expect("login on the gateway host");
    let login = client.get(GATEWAY_HOST, login_path, &[("accept", "text/html")]).await;
    assert_eq!(login.status, StatusCode::FOUND, "{}", login.text());
    let login_cookie = set_cookie(&login, "toolgate-login");
    let authorize = url::Url::parse(login.header("location").expect("redirect to provider")).expect("URL");
    let param = |name: &str| {
        authorize.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
    };
    let (state, nonce) = (param("state").expect("state"), param("nonce").expect("nonce"));
    let mut claims = world.claims();
    claims["nonce"] = json!(nonce);
    world.provider.set_id_token(world.token_with(&world.keys.ec, "ec-1", &claims));
    let callback = client
        .get(
            GATEWAY_HOST,
            &format!("/.toolgate/callback?state={}&code=code-1", form_encode(&state)),
            &[("accept", "text/html"), ("cookie", &format!("toolgate-login={login_cookie}"))],
        )
        .await;
    assert_eq!(callback.status, StatusCode::FOUND, "{}", callback.text());
    let handoff = callback.header("location").expect("redirect to the site").to_owned();
    let handoff_path = handoff.strip_prefix(&format!("http://{}", world.site)).expect("back to the site");
    let landed = client
        .get(
            &world.site,
            handoff_path,
            &[("accept", "text/html"), ("cookie", &format!("toolgate-pending={pending}"))],
        )
        .await;
    assert_eq!(landed.status, StatusCode::FOUND, "{}", landed.text());
    SignedIn { session: set_cookie(&landed, "toolgate"), login: login_cookie, pending }
}

/// The value a response sets for cookie `name`.
fn set_cookie(answer: &Answer, name: &str) -> String {
    answer
        .headers
        .get_all(http::header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find_map(|value| value.strip_prefix(&format!("{name}=")))
        .and_then(|value| value.split(';').next())
        .unwrap_or_else(|| panic!("no {name} cookie set"))
        .to_owned()
}

fn assert_refused_or_unavailable(answer: &Answer, label: &str) {
    assert!(
        matches!(answer.status, StatusCode::UNAUTHORIZED | StatusCode::SERVICE_UNAVAILABLE),
        "{label}: {} {}",
        answer.status,
        answer.text()
    );
}

/// A navigation to the site only ever redirects to login; returns the redirect.
async fn assert_redirects_to_login(client: &mut Client, site: &str) -> String {
    let answer = client.get(site, "/reports", &[("accept", "text/html")]).await;
    let location = answer.header("location").unwrap_or_default().to_owned();
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.text());
    assert!(location.starts_with(LOGIN_PREFIX), "{location}");
    location
}

// ---------------------------------------------------------------------------------------------
// The fake OpenID provider.

#[derive(Default)]
struct ProviderState {
    keys: Vec<Value>,
    jwks_failing: bool,
    jwks_hits: usize,
    id_token: Option<String>,
}

struct Provider {
    issuer: String,
    address: SocketAddr,
    state: Arc<Mutex<ProviderState>>,
    stop: watch::Sender<bool>,
}

impl Provider {
    async fn start(keys: Vec<Value>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind provider");
        let address = listener.local_addr().expect("provider address");
        let issuer = format!("http://{address}");
        let state = Arc::new(Mutex::new(ProviderState { keys, ..ProviderState::default() }));
        let (stop, stopped) = watch::channel(false);
        let (served, base) = (state.clone(), issuer.clone());
        tokio::spawn(async move {
            let mut accept_stopped = stopped.clone();
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => return,
                    },
                    _ = accept_stopped.changed() => return,
                };
                let (state, base, mut connection_stopped) = (served.clone(), base.clone(), stopped.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let answer = provider_answer(&base, &state, request.uri().path());
                        async move { Ok::<_, Infallible>(answer) }
                    });
                    let connection = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    // Dropping the connection closes its socket: a stopped provider answers nothing.
                    tokio::select! {
                        _ = connection => {}
                        _ = connection_stopped.changed() => {}
                    }
                });
            }
        });
        Self { issuer, address, state, stop }
    }

    fn with_state<T>(&self, change: impl FnOnce(&mut ProviderState) -> T) -> T {
        change(&mut self.state.lock().expect("provider state"))
    }

    fn publish(&self, keys: Vec<Value>) {
        self.with_state(|state| state.keys = keys);
    }

    fn set_jwks_failing(&self, failing: bool) {
        self.with_state(|state| state.jwks_failing = failing);
    }

    fn set_id_token(&self, token: String) {
        self.with_state(|state| state.id_token = Some(token));
    }

    fn jwks_hits(&self) -> usize {
        self.with_state(|state| state.jwks_hits)
    }

    fn stop(&self) {
        self.stop.send_replace(true);
    }
}

fn provider_answer(issuer: &str, state: &Mutex<ProviderState>, path: &str) -> Response<Full<Bytes>> {
    let mut state = state.lock().expect("provider state");
    let (status, body) = match path {
        "/.well-known/openid-configuration" => (
            StatusCode::OK,
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "jwks_uri": format!("{issuer}/jwks"),
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["ES256", "RS256"],
            }),
        ),
        "/jwks" => {
            state.jwks_hits += 1;
            if state.jwks_failing {
                (StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": "down" }))
            } else {
                (StatusCode::OK, json!({ "keys": state.keys }))
            }
        }
        "/token" => (
            StatusCode::OK,
            json!({
                "access_token": "opaque-access-token", "token_type": "Bearer", "expires_in": 300,
                "id_token": state.id_token,
            }),
        ),
        _ => (StatusCode::NOT_FOUND, json!({ "error": "not found" })),
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

// ---------------------------------------------------------------------------------------------
// A keep-alive HTTP/1.1 client, reconnecting when the gateway closes the connection.

struct Client {
    address: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Client {
    fn new(address: SocketAddr) -> Self {
        Self { address, sender: None }
    }

    async fn get(&mut self, host: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
        for attempt in 0..3 {
            let mut sender = match self.sender.take() {
                Some(sender) if !sender.is_closed() => sender,
                _ => connect(self.address).await,
            };
            if sender.ready().await.is_err() {
                continue;
            }
            let mut request = Request::get(path).header("host", host);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let request = request.body(Full::new(Bytes::new())).expect("request is well-formed");
            match sender.send_request(request).await {
                Ok(response) => {
                    let (parts, body) = response.into_parts();
                    let body = body.collect().await.expect("body completes").to_bytes();
                    self.sender = Some(sender);
                    return Answer { status: parts.status, headers: parts.headers, body };
                }
                // The gateway may close a kept-alive connection between requests; a GET is safe
                // to send again.
                Err(error) if attempt < 2 => note_retry(&error),
                Err(error) => panic!("GET {path} on {host}: {error}"),
            }
        }
        panic!("GET {path} on {host}: no connection")
    }
}

fn note_retry(error: &hyper::Error) {
    eprintln!("retrying after a closed connection: {error}");
}

async fn connect(address: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(address).await.expect("connect to gateway");
    let (sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    sender
}
