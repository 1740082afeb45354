//! Tests of the development provider over real loopback sockets, driven by a plain hyper client
//! the way a relying party drives it; plus a few unit tests of the pieces with edge cases.

use super::form::{Parameters, decode_component};
use super::grants::GrantStore;
use super::*;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::HeaderMap;
use http::header::{self, HeaderValue};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;
use url::Url;

const CLIENT_ID: &str = "toolgate-demo";
const CLIENT_SECRET: &str = "demo-secret: with spaces & symbols";
const REDIRECT_URI: &str = "http://localhost:4180/.toolgate/callback";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const NONCE: &str = "nonce-123";

struct Fixture {
    idp: DevIdp,
    http: Client<HttpConnector, Full<Bytes>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.body))
    }

    fn location(&self) -> Url {
        let location =
            self.headers.get(header::LOCATION).expect("a Location header").to_str().expect("ASCII");
        Url::parse(location).expect("an absolute Location")
    }
}

async fn start_provider() -> Fixture {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let client = DevClient {
        client_id: CLIENT_ID.to_owned(),
        client_secret: CLIENT_SECRET.to_owned(),
        redirect_uris: vec![REDIRECT_URI.to_owned()],
    };
    let idp = start(listener, client, async move {
        let _ = stopped.await;
    })
    .expect("the provider starts");
    let http = Client::builder(TokioExecutor::new()).build_http();
    Fixture { idp, http, stop: Some(stop) }
}

impl Fixture {
    async fn send(&self, request: Request<Full<Bytes>>) -> Reply {
        let response = self.http.request(request).await.expect("the provider answers");
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.expect("a body").to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    async fn get(&self, path_and_query: &str, bearer: Option<&str>) -> Reply {
        let mut request = Request::get(format!("{}{path_and_query}", self.idp.issuer));
        if let Some(token) = bearer {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        self.send(request.body(Full::default()).expect("a request")).await
    }

    async fn post_form(&self, path: &str, fields: &[(&str, &str)], basic: Option<(&str, &str)>) -> Reply {
        let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
        let mut request = Request::post(format!("{}{path}", self.idp.issuer))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some((user, password)) = basic {
            let encode = |text: &str| form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
            let credentials = STANDARD.encode(format!("{}:{}", encode(user), encode(password)));
            request = request.header(header::AUTHORIZATION, format!("Basic {credentials}"));
        }
        self.send(request.body(Full::new(Bytes::from(body))).expect("a request")).await
    }

    /// The query of a valid authorization request, with `overrides` replacing or adding fields.
    fn authorization_query(&self, overrides: &[(&str, &str)]) -> String {
        let challenge = challenge_for(VERIFIER);
        let mut fields = vec![
            ("client_id", CLIENT_ID),
            ("redirect_uri", REDIRECT_URI),
            ("response_type", "code"),
            ("scope", "openid email profile groups"),
            ("state", "state-abc"),
            ("nonce", NONCE),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
        ];
        for (name, value) in overrides {
            fields.retain(|(field, _)| field != name);
            fields.push((name, value));
        }
        form_urlencoded::Serializer::new(String::new()).extend_pairs(&fields).finish()
    }

    /// Signs `user` in through the page and its form, and returns the code from the redirect.
    async fn sign_in(&self, user: &str) -> String {
        let query = self.authorization_query(&[]);
        let page = self.get(&format!("/authorize?{query}"), None).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let mut fields: Vec<(String, String)> =
            form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        fields.push(("user".to_owned(), user.to_owned()));
        let fields: Vec<(&str, &str)> =
            fields.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
        let chosen = self.post_form("/authorize/choose", &fields, None).await;
        assert_eq!(chosen.status, StatusCode::FOUND, "{}", chosen.body);
        let location = chosen.location();
        assert_eq!(location.as_str().split('?').next(), Some(REDIRECT_URI));
        let query: HashMap<String, String> = location.query_pairs().into_owned().collect();
        assert_eq!(query.get("state").map(String::as_str), Some("state-abc"));
        query.get("code").expect("a code in the redirect").clone()
    }

    async fn redeem(&self, code: &str, verifier: &str) -> Reply {
        let fields = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", verifier),
        ];
        self.post_form("/token", &fields, Some((CLIENT_ID, CLIENT_SECRET))).await
    }

    /// A refresh grant, authenticated with `client_secret_post` to cover both methods.
    async fn refresh(&self, token: &str) -> Reply {
        let fields = [
            ("grant_type", "refresh_token"),
            ("refresh_token", token),
            ("client_id", CLIENT_ID),
            ("client_secret", CLIENT_SECRET),
        ];
        self.post_form("/token", &fields, None).await
    }

    /// Verifies `token` the way a relying party does: key from `/jwks` by `kid`, ES256 only.
    async fn verify(&self, token: &str, expected_type: &str) -> Value {
        let header = jsonwebtoken::decode_header(token).expect("a JWT header");
        assert_eq!(header.alg, Algorithm::ES256);
        assert_eq!(header.typ.as_deref(), Some(expected_type));
        let jwks: JwkSet = serde_json::from_str(&self.get("/jwks", None).await.body).expect("a JWK set");
        let jwk = jwks.find(header.kid.as_deref().expect("a kid")).expect("the kid is published");
        let key = DecodingKey::from_jwk(jwk).expect("a usable JWK");
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[&self.idp.issuer]);
        validation.set_audience(&[CLIENT_ID]);
        jsonwebtoken::decode::<Value>(token, &key, &validation).expect("the token verifies").claims
    }
}

fn challenge_for(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[tokio::test]
async fn discovery_document_lists_endpoints_and_capabilities() {
    let fixture = start_provider().await;
    let issuer = fixture.idp.issuer.clone();
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
    let reply = fixture.get("/.well-known/openid-configuration", None).await;
    assert_eq!(reply.status, StatusCode::OK);
    let document = reply.json();
    assert_eq!(document["issuer"], issuer.as_str());
    for (field, path) in [
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "/token"),
        ("jwks_uri", "/jwks"),
        ("userinfo_endpoint", "/userinfo"),
        ("end_session_endpoint", "/end_session"),
    ] {
        assert_eq!(document[field], format!("{issuer}{path}"), "{field}");
    }
    assert_eq!(document["response_types_supported"], serde_json::json!(["code"]));
    assert_eq!(document["subject_types_supported"], serde_json::json!(["public"]));
    assert_eq!(document["id_token_signing_alg_values_supported"], serde_json::json!(["ES256"]));
    assert_eq!(document["code_challenge_methods_supported"], serde_json::json!(["S256"]));
    assert_eq!(
        document["token_endpoint_auth_methods_supported"],
        serde_json::json!(["client_secret_basic", "client_secret_post"])
    );
    assert_eq!(document["grant_types_supported"], serde_json::json!(["authorization_code", "refresh_token"]));
    let scopes = document["scopes_supported"].as_array().expect("scopes");
    assert!(scopes.contains(&Value::from("openid")));
    let claims = document["claims_supported"].as_array().expect("claims");
    assert!(claims.contains(&Value::from("groups")) && claims.contains(&Value::from("email")));

    let jwks = fixture.get("/jwks", None).await.json();
    let key = &jwks["keys"][0];
    assert_eq!((key["kty"].as_str(), key["crv"].as_str()), (Some("EC"), Some("P-256")));
    assert_eq!((key["use"].as_str(), key["alg"].as_str()), (Some("sig"), Some("ES256")));
    for coordinate in ["x", "y"] {
        let bytes =
            URL_SAFE_NO_PAD.decode(key[coordinate].as_str().expect("a coordinate")).expect("base64url");
        assert_eq!(bytes.len(), 32, "{coordinate}");
    }
    assert!(key["kid"].as_str().is_some_and(|kid| !kid.is_empty()));
}

#[tokio::test]
async fn refuses_a_listener_that_is_not_loopback() {
    let listener = TcpListener::bind("0.0.0.0:0").await.expect("bind the wildcard address");
    let client = DevClient {
        client_id: CLIENT_ID.to_owned(),
        client_secret: CLIENT_SECRET.to_owned(),
        redirect_uris: vec![REDIRECT_URI.to_owned()],
    };
    let result = start(listener, client, std::future::pending());
    assert!(matches!(result, Err(DevIdpError::NotLoopback { .. })), "{result:?}");
}

#[tokio::test]
async fn refuses_a_client_with_an_unusable_redirect_uri() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let client = DevClient {
        client_id: CLIENT_ID.to_owned(),
        client_secret: CLIENT_SECRET.to_owned(),
        redirect_uris: vec!["/relative/callback".to_owned()],
    };
    let result = start(listener, client, std::future::pending());
    assert!(matches!(result, Err(DevIdpError::InvalidRedirectUri { .. })), "{result:?}");
}

#[tokio::test]
async fn authorize_page_lists_every_demo_user_and_escapes_state() {
    let fixture = start_provider().await;
    let query = fixture.authorization_query(&[("state", r#""><script>alert(1)</script>"#)]);
    let page = fixture.get(&format!("/authorize?{query}"), None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Development sign-in (not for production)"));
    for user in DEMO_USERS {
        assert!(page.body.contains(&format!(r#"name="user" value="{}""#, user.id)), "{}", user.id);
        assert!(page.body.contains(user.name) && page.body.contains(user.email), "{}", user.id);
        for group in user.groups {
            assert!(page.body.contains(group), "{group}");
        }
    }
    assert!(!page.body.contains("<script>"), "{}", page.body);
    assert!(page.body.contains("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), "{}", page.body);
    let policy = page.headers.get(header::CONTENT_SECURITY_POLICY).expect("a CSP");
    assert!(policy.to_str().is_ok_and(|policy| policy.contains("default-src 'none'")));
}

#[tokio::test]
async fn code_flow_with_pkce_issues_tokens_that_verify_against_the_jwks() {
    let mut fixture = start_provider().await;
    let code = fixture.sign_in("bob").await;
    let reply = fixture.redeem(&code, VERIFIER).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.headers.get(header::CACHE_CONTROL), Some(&HeaderValue::from_static("no-store")));
    let tokens = reply.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], TOKEN_LIFETIME.as_secs());
    assert_eq!(tokens["scope"], "openid email profile groups");
    assert!(tokens["refresh_token"].as_str().is_some_and(|token| token.len() >= 43));

    let id_token = fixture.verify(tokens["id_token"].as_str().expect("an id_token"), "JWT").await;
    assert_eq!(id_token["sub"], "bob");
    assert_eq!(id_token["aud"], CLIENT_ID);
    assert_eq!(id_token["nonce"], NONCE);
    assert_eq!(id_token["email"], "bob@demo.example");
    assert_eq!(id_token["email_verified"], true);
    assert_eq!(id_token["name"], "Bob Berg");
    assert_eq!(id_token["groups"], serde_json::json!(["finance", "finance-approvers"]));
    let lifetime = id_token["exp"].as_u64().zip(id_token["iat"].as_u64()).map(|(exp, iat)| exp - iat);
    assert_eq!(lifetime, Some(TOKEN_LIFETIME.as_secs()));
    assert!(id_token["auth_time"].as_u64().is_some());

    let access_token = tokens["access_token"].as_str().expect("an access_token");
    let expected_hash = URL_SAFE_NO_PAD.encode(&Sha256::digest(access_token.as_bytes())[..16]);
    assert_eq!(id_token["at_hash"], expected_hash);
    let access = fixture.verify(access_token, "at+jwt").await;
    assert_eq!(
        (access["sub"].as_str(), access["scope"].as_str()),
        (Some("bob"), Some("openid email profile groups"))
    );
    assert_eq!(access["groups"], serde_json::json!(["finance", "finance-approvers"]));

    let userinfo = fixture.get("/userinfo", Some(access_token)).await;
    assert_eq!(userinfo.status, StatusCode::OK, "{}", userinfo.body);
    assert_eq!(userinfo.json()["email"], "bob@demo.example");
    // An ID token is not an access token, even though both are signed by the same key.
    let refused = fixture.get("/userinfo", tokens["id_token"].as_str()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(fixture.get("/userinfo", None).await.status, StatusCode::UNAUTHORIZED);

    // Shutting down stops the server task.
    drop(fixture.stop.take());
    tokio::time::timeout(Duration::from_secs(10), fixture.idp.stopped()).await.expect("the provider stops");
}

#[tokio::test]
async fn wrong_code_verifier_is_invalid_grant() {
    let fixture = start_provider().await;
    let code = fixture.sign_in("alice").await;
    let reply = fixture.redeem(&code, "another-verifier-that-is-long-enough-to-be-valid-1234").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"], "invalid_grant");
}

#[tokio::test]
async fn reused_code_is_invalid_grant() {
    let fixture = start_provider().await;
    let code = fixture.sign_in("carol").await;
    assert_eq!(fixture.redeem(&code, VERIFIER).await.status, StatusCode::OK);
    let again = fixture.redeem(&code, VERIFIER).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST);
    assert_eq!(again.json()["error"], "invalid_grant");
}

#[tokio::test]
async fn unregistered_redirect_uri_gets_a_page_and_no_redirect() {
    let fixture = start_provider().await;
    for redirect_uri in ["http://attacker.example/callback", "http://localhost:4180/.toolgate/callback/extra"]
    {
        let query = fixture.authorization_query(&[("redirect_uri", redirect_uri)]);
        let page = fixture.get(&format!("/authorize?{query}"), None).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{redirect_uri}");
        assert!(page.headers.get(header::LOCATION).is_none(), "{redirect_uri}");
        assert!(page.body.contains("redirect_uri"), "{}", page.body);
    }
    // The same through the form, with a user chosen.
    let query = fixture.authorization_query(&[("redirect_uri", "http://attacker.example/")]);
    let mut fields: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    fields.push(("user".to_owned(), "alice".to_owned()));
    let fields: Vec<(&str, &str)> =
        fields.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    let chosen = fixture.post_form("/authorize/choose", &fields, None).await;
    assert_eq!(chosen.status, StatusCode::BAD_REQUEST);
    assert!(chosen.headers.get(header::LOCATION).is_none());
}

#[tokio::test]
async fn request_without_pkce_is_sent_back_as_invalid_request() {
    let fixture = start_provider().await;
    let query = fixture.authorization_query(&[("code_challenge_method", "plain")]);
    let reply = fixture.get(&format!("/authorize?{query}"), None).await;
    assert_eq!(reply.status, StatusCode::FOUND);
    let location = reply.location();
    assert_eq!(location.as_str().split('?').next(), Some(REDIRECT_URI));
    let query: HashMap<String, String> = location.query_pairs().into_owned().collect();
    assert_eq!(query.get("error").map(String::as_str), Some("invalid_request"));
    assert_eq!(query.get("state").map(String::as_str), Some("state-abc"));
    assert!(!query.contains_key("code"));

    let reply = fixture
        .get(&format!("/authorize?{}", fixture.authorization_query(&[("scope", "email")])), None)
        .await;
    let query: HashMap<String, String> = reply.location().query_pairs().into_owned().collect();
    assert_eq!(query.get("error").map(String::as_str), Some("invalid_scope"));
}

#[tokio::test]
async fn refresh_grant_rotates_the_refresh_token() {
    let fixture = start_provider().await;
    let code = fixture.sign_in("alice").await;
    let first = fixture.redeem(&code, VERIFIER).await.json();
    let first_refresh = first["refresh_token"].as_str().expect("a refresh token");
    let second = fixture.refresh(first_refresh).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    let second = second.json();
    let second_refresh = second["refresh_token"].as_str().expect("a new refresh token");
    assert_ne!(second_refresh, first_refresh);
    let id_token = fixture.verify(second["id_token"].as_str().expect("an id_token"), "JWT").await;
    assert_eq!(id_token["sub"], "alice");
    assert_eq!(id_token["groups"], serde_json::json!(["engineering"]));
    assert!(id_token.get("nonce").is_none(), "{id_token}");
    assert_eq!(
        id_token["auth_time"],
        fixture.verify(first["id_token"].as_str().expect("id"), "JWT").await["auth_time"]
    );

    let replayed = fixture.refresh(first_refresh).await;
    assert_eq!(replayed.status, StatusCode::BAD_REQUEST);
    assert_eq!(replayed.json()["error"], "invalid_grant");
    assert_eq!(fixture.refresh(second_refresh).await.status, StatusCode::OK);
}

#[tokio::test]
async fn wrong_client_secret_is_invalid_client() {
    let fixture = start_provider().await;
    let code = fixture.sign_in("dave").await;
    let fields = [
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
    ];
    let reply = fixture.post_form("/token", &fields, Some((CLIENT_ID, "not-the-secret"))).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply.json()["error"], "invalid_client");
    assert!(reply.headers.get(header::WWW_AUTHENTICATE).is_some());
    let anonymous = fixture.post_form("/token", &fields, None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn end_session_returns_only_to_a_registered_origin() {
    let fixture = start_provider().await;
    let allowed = fixture
        .get("/end_session?post_logout_redirect_uri=http%3A%2F%2Flocalhost%3A4180%2F&state=s1", None)
        .await;
    assert_eq!(allowed.status, StatusCode::FOUND);
    assert_eq!(allowed.location().as_str(), "http://localhost:4180/?state=s1");
    for foreign in ["http%3A%2F%2Fattacker.example%2F", "http%3A%2F%2Flocalhost%3A9999%2F", "%2Frelative"] {
        let page = fixture.get(&format!("/end_session?post_logout_redirect_uri={foreign}"), None).await;
        assert_eq!(page.status, StatusCode::OK, "{foreign}");
        assert!(page.headers.get(header::LOCATION).is_none(), "{foreign}");
        assert!(page.body.contains("signed out"), "{}", page.body);
    }
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let fixture = start_provider().await;
    let huge = "x".repeat(MAX_BODY_BYTES + 1);
    let reply = fixture.post_form("/token", &[("grant_type", &huge)], Some((CLIENT_ID, CLIENT_SECRET))).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[test]
fn grant_store_redeems_once_and_stays_bounded() {
    let store = GrantStore::new(Duration::from_secs(60), 2);
    let first = store.issue("first").expect("room");
    let second = store.issue("second").expect("room");
    assert!(matches!(store.issue("third"), Err(grants::StoreError::Full)));
    assert_eq!(store.redeem(&first), Some("first"));
    assert_eq!(store.redeem(&first), None);
    assert!(store.issue("third").is_ok());
    assert_eq!(store.redeem(&second), Some("second"));
    assert_eq!(store.redeem("never-issued"), None);

    let expired = GrantStore::new(Duration::ZERO, 1);
    let token = expired.issue(()).expect("room");
    assert_eq!(expired.redeem(&token), None);
    // Expired entries make room for new ones.
    assert!(expired.issue(()).is_ok() && expired.issue(()).is_ok());
}

#[test]
fn parameters_follow_oauth_rules() {
    let parameters = Parameters::parse(b"a=1&b=&c=x%20y&a=2");
    assert_eq!(parameters.get("a"), Some("1"));
    assert!(parameters.is_repeated("a") && parameters.has_repeated());
    assert_eq!(parameters.get("b"), None);
    assert_eq!(parameters.get("c"), Some("x y"));
    assert!(!Parameters::parse(b"a=1&b=2").has_repeated());

    assert_eq!(decode_component("a%3Ab+c%25").as_deref(), Some("a:b c%"));
    assert_eq!(decode_component("bad%2"), None);
    assert_eq!(decode_component("bad%zz"), None);
    assert_eq!(decode_component("%FF"), None);
}

#[test]
fn escape_html_escapes_markup_and_quotes() {
    assert_eq!(
        crate::http::pages::escape_html(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}
