//! The world the OpenAI-compatible endpoint is tested in: a fake OpenID provider publishing one
//! EC key (bearer tokens are signed with it), the stand-in model, a site upstream, and a gateway
//! with SSO, all on loopback port 0. The gateway's own host is `127.0.0.1` (its `public_url`),
//! so SDK clients reach it at `http://127.0.0.1:PORT/v1`.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use gateway::app::shutdown::Shutdown;
use gateway::app::{self, Running};
use gateway::config::Config;
use gateway::demo::model::{StandIn, StandInOptions};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;

pub const CLIENT_ID: &str = "toolgate-openai-test";

pub const POLICY: &str = r#"
groups = ["treasury"]

[[rule]]
id = "tasks"
sites = ["tasks"]
tools.allow = ["add_task"]
tools.deny = ["delete_*"]
tools.approve = ["transfer_funds"]
redact = ["email"]

[[rule]]
id = "big-payments"
sites = ["tasks"]
tools.approve_by = { tools = ["pay_invoice"], group = "treasury", when = "args.amount > 1000" }
tools.allow = ["pay_invoice"]

[[rule]]
id = "no-launch-codes"
sites = ["tasks"]
when = "args.title == 'Launch codes'"
tools.deny = ["add_task"]
"#;

pub struct World {
    pub gateway: Running,
    pub model: Arc<StandIn>,
    /// The provider's signing key (PKCS#8).
    pkcs8: Vec<u8>,
    issuer: String,
    _directory: tempfile::TempDir,
}

impl World {
    /// A world whose model is the well-behaved stand-in.
    pub async fn start() -> Self {
        Self::with_model(StandInOptions::default()).await
    }

    /// A world whose model is the stand-in with `options`.
    pub async fn with_model(options: StandInOptions) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind model");
        let address = listener.local_addr().expect("model address");
        let model = Arc::new(StandIn::new(options));
        let serving = Arc::clone(&model);
        tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
        Self::with_llm(model, &format!("http://{address}/v1")).await
    }

    /// A world whose `[llm] base_url` is `base_url` (the stand-in may not be listening there).
    pub async fn with_llm(model: Arc<StandIn>, base_url: &str) -> Self {
        let algorithm = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(algorithm, &SystemRandom::new()).expect("EC key");
        let key = EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref()).expect("EC key parses");
        let issuer = provider(jwk(&key)).await;
        let upstream = crate::harness::upstream(|_| crate::harness::reply("text/plain", "site")).await;
        let directory = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, text: &str| {
            let path = directory.path().join(name);
            std::fs::write(&path, text).expect("write test file");
            path.display().to_string()
        };
        let secret = write("client-secret", "s3cret");
        let session_key = write("session-key", &STANDARD.encode([7u8; 32]));
        let policy = write("policy.toml", POLICY);
        let text = format!(
            "public_url = \"http://127.0.0.1:1\"\n\
             [server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
             [store]\npath = \":memory:\"\n\
             [sso]\nissuer = \"{issuer}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"file:{secret}\"\n\
             algorithms = [\"ES256\"]\nsession_keys = [\"file:{session_key}\"]\n\
             [llm]\nbase_url = \"{base_url}\"\nmodel = \"toolgate-demo-stand-in\"\nmax_retries = 0\n\
             model_aliases = [\"gpt-4o\", \"gpt-4\"]\n\
             connect_timeout = \"1s\"\nfirst_token_timeout = \"1s\"\n\
             [policy]\nfile = {policy:?}\n\
             [audit]\nreader_groups = [\"auditors\"]\n\
             [agent]\nmax_concurrent_turns = 1\n\
             [sites.tasks]\nhost = \"tasks.localhost\"\nupstream = \"http://{upstream}\"\n\
             [sites.finance]\nhost = \"finance.localhost\"\nupstream = \"http://{upstream}\"\n\
             allow_groups = [\"finance\"]\n",
            upstream = upstream.address,
        );
        let config = Config::parse(&text, "openai-test.toml").expect("test config is valid");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind gateway");
        let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
        let gateway = app::start(config, listener, admin, Shutdown::new()).await.expect("gateway starts");
        Self { gateway, model, pkcs8: pkcs8.as_ref().to_vec(), issuer, _directory: directory }
    }

    /// A bearer token for `user` in `groups`, signed as the provider would.
    pub fn token(&self, user: &str, groups: &[&str]) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let claims = json!({
            "iss": self.issuer, "aud": CLIENT_ID, "sub": user, "email": format!("{user}@corp.example"),
            "exp": now + 300, "nbf": now, "iat": now, "groups": groups,
        });
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some("ec-1".into());
        let key = jsonwebtoken::EncodingKey::from_ec_der(&self.pkcs8);
        jsonwebtoken::encode(&header, &claims, &key).expect("jsonwebtoken signs")
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.gateway.address.port())
    }

    /// The Host header of the gateway's own host.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.gateway.address.port())
    }
}

fn jwk(key: &EcdsaKeyPair) -> Value {
    // The uncompressed point: 0x04, then x and y, 32 bytes each.
    let point = key.public_key().as_ref();
    json!({
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": "ec-1",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    })
}

/// Serves discovery and the key set; returns the issuer.
async fn provider(jwk: Value) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind provider");
    let issuer = format!("http://{}", listener.local_addr().expect("provider address"));
    let base = issuer.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (base, jwk) = (base.clone(), jwk.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let answer = provider_answer(&base, &jwk, request.uri().path());
                    async move { Ok::<_, Infallible>(answer) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    issuer
}

fn provider_answer(issuer: &str, jwk: &Value, path: &str) -> Response<Full<Bytes>> {
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
                "id_token_signing_alg_values_supported": ["ES256"],
            }),
        ),
        "/jwks" => (StatusCode::OK, json!({ "keys": [jwk] })),
        _ => (StatusCode::NOT_FOUND, json!({ "error": "not found" })),
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}
