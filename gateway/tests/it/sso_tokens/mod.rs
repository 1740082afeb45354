//! Hostile tokens and cookies against a gateway with single sign-on. A fake OpenID provider on
//! port 0 publishes an EC key (`ec-1`) and an RSA key (`rsa-1`); positive controls prove the
//! setup accepts what it should, then hundreds of forged, malformed and mis-claimed bearer tokens
//! and session cookies must each get exactly 401 without ever reaching the site. Also: failing
//! closed while the provider is down, and key rotation at the provider.

mod corpus;
mod provider;
mod replica_kill;
mod replicas;
mod sign_out;
mod signing;

use corpus::*;
use provider::*;
use signing::*;

use crate::harness::{self, Answer, Upstream};
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::hmac;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use gateway::app::shutdown::Shutdown;
use gateway::app::{self, Running};
use gateway::config::Config;
use gateway::config::secrets::SecretRef;
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
    let login = start_login(&mut second_client, &site).await;
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
        Self::start_with_issuer_suffix("").await
    }

    async fn start_with_issuer_suffix(suffix: &str) -> Self {
        let keys = Keys::generate();
        let keys_published = vec![ec_jwk(&keys.ec.pair, "ec-1", Some("ES256")), rsa_jwk(&keys.rsa, "rsa-1")];
        let provider = Provider::start_with_issuer_suffix(keys_published, suffix).await;
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

/// An issuer that ends in `/` (Auth0, Authentik) is compared exactly as configured: discovery,
/// sign-in and bearer tokens work, where trimming the slash locked everyone out with 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_with_a_trailing_slash_signs_in() {
    let world = World::start_with_issuer_suffix("/").await;
    assert!(world.provider.issuer.ends_with('/'));
    let mut client = Client::new(world.gateway.address);
    let signed_in = sign_in(&world, &mut client).await;
    let me = world.whoami_cookie(&mut client, &format!("toolgate={}", signed_in.session)).await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text());
    let bearer = world.whoami(&mut client, &format!("Bearer {}", world.valid_token())).await;
    assert_eq!(bearer.status, StatusCode::OK, "{}", bearer.text());
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
    (app::start(config, listener, admin, Shutdown::new()).await.expect("gateway starts"), secrets)
}

/// Signs in through the whole redirect dance, the way a browser would.
async fn sign_in(world: &World, client: &mut Client) -> SignedIn {
    sign_in_with(world, client, json!({})).await
}

/// Signs in with an ID token carrying `extra` claims too (a provider session id, say).
async fn sign_in_with(world: &World, client: &mut Client, extra: Value) -> SignedIn {
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
    for (name, value) in extra.as_object().into_iter().flatten() {
        claims[name] = value.clone();
    }
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
    // The handoff names the site's configured origin (public_url's scheme and port), whatever
    // port the test reaches the gateway on.
    let handoff_path =
        handoff.strip_prefix("http://app.localhost:1").expect("back to the site's configured origin");
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

/// Asks the gateway host to start a sign-in returning to `site`.
async fn start_login(client: &mut Client, site: &str) -> Answer {
    let return_url = format!("http://{site}/");
    client
        .get(
            GATEWAY_HOST,
            &format!("/.toolgate/login?return={}&bind=x", form_encode(&return_url)),
            &[("accept", "text/html")],
        )
        .await
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
