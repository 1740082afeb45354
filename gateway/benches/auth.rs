//! Per-request cost of authentication: opening a session cookie and loading its record from the
//! store, and verifying a bearer JWT (ES256) once its key is known. Budget: ≤ 20 µs each.

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use gateway::config::Config;
use gateway::config::secrets::SecretRef;
use gateway::sso::identity::Identity;
use gateway::sso::{Sso, bearer, oidc};
use gateway::store::{SledStore, StoreHandle};
use std::hint::black_box;
use std::sync::Arc;

fn session_cookie(criterion: &mut Criterion) {
    let text = "public_url = \"http://localhost:1\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
                [sso]\nissuer = \"http://127.0.0.1:9\"\nclient_id = \"bench\"\nclient_secret = \"env:UNUSED\"\n\
                [sites.app]\nhost = \"app.localhost\"\nupstream = \"http://127.0.0.1:9\"\n";
    let mut config = Config::parse(text, "bench.toml").expect("config");
    let mut settings = config.sso.take().expect("sso");
    settings.client_secret = SecretRef::Generated("secret".into());
    let store = Arc::new(SledStore::temporary().expect("store"));
    let metrics = gateway::metrics::Metrics::new();
    let audit_key = gateway::audit::digest::DigestKey::new(b"bench");
    let store = StoreHandle::Embedded(store);
    let audit = Arc::new(gateway::audit::AuditLog::start(&store, audit_key, metrics.clone()).expect("audit"));
    let sso = Sso::new(&config, &settings, store, audit, metrics).expect("sso");
    let identity = Identity {
        user: "alice".into(),
        email: Some("alice@corp.example".into()),
        groups: vec!["eng".into(), "ops".into()],
        name: None,
    };
    let tokens = oidc::Tokens {
        claims: None,
        id_token: None,
        refresh_token: None,
        expires_at: gateway::support::clock::unix_now() + 3600,
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let id = runtime.block_on(sso.create_session(identity, &tokens)).expect("session");
    let cookie = format!("theme=dark; toolgate={}", sso.keys.seal("toolgate", &id));
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::COOKIE, cookie.parse().expect("header"));
    criterion.bench_function("session cookie: open, load and parse the record", |bench| {
        bench.iter(|| {
            runtime
                .block_on(sso.session(black_box(&headers), false))
                .map(|session| session.record.expires_at)
                .ok()
        })
    });
}

fn bearer_token(criterion: &mut Criterion) {
    let rng = aws_lc_rs::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("key");
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).expect("pair");
    let point = pair.public_key().as_ref();
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(serde_json::json!({
        "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    }))
    .expect("jwk");
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some("k1".into());
    let now = gateway::support::clock::unix_now();
    let claims = serde_json::json!({"iss": "https://idp.example", "aud": "toolgate", "sub": "alice", "exp": now + 3600, "nbf": now, "groups": ["eng"]});
    let token =
        jsonwebtoken::encode(&header, &claims, &jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_ref()))
            .expect("token");
    let audiences = vec!["toolgate".to_owned()];
    criterion.bench_function("bearer JWT, first use: header, ES256 signature and claims", |bench| {
        bench.iter(|| {
            let header = jsonwebtoken::decode_header(black_box(&token)).expect("header");
            bearer::verify_with_key(&token, &header, &jwk, "https://idp.example", &audiences).is_ok()
        })
    });
    let remembered = bearer::VerifiedTokens::default();
    let identity = Identity { user: "alice".into(), email: None, groups: vec!["eng".into()], name: None };
    remembered.insert(&token, identity, now + 3600, now);
    criterion.bench_function("bearer JWT, reused: verified-token lookup", |bench| {
        bench.iter(|| remembered.get(black_box(&token), now).is_some())
    });
}

criterion_group!(benches, session_cookie, bearer_token);
criterion_main!(benches);
