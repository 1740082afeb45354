//! The hostile inputs: forged, malformed and mis-claimed bearer tokens and session cookies, each
//! labelled so a failure names it.

use super::*;

// The token corpus.

/// Every forged or malformed token, labelled, as the full `Authorization` value.
pub(super) fn forged_tokens(world: &World, valid: &str) -> Vec<(String, String)> {
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

// The cookie corpus.

/// What a real sign-in left behind.
pub(super) struct SignedIn {
    /// The site host's session cookie value.
    pub(super) session: String,
    /// The gateway host's login cookie (sealed for another purpose).
    pub(super) login: String,
    /// The site host's pending cookie (sealed for another purpose).
    pub(super) pending: String,
}

pub(super) fn forged_cookies(flow: &SignedIn, ring: &KeyRing, session_id: &[u8]) -> Vec<(String, String)> {
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
