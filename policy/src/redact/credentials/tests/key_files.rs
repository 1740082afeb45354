//! Private keys in the formats beside PEM: JSON Web Keys written as JSON text, and PuTTY's
//! `.ppk` files.

use super::*;

const BASE64: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";

#[test]
fn the_private_members_of_a_json_web_key() {
    let n = chars(1, 342, BASE64URL);
    let private: Vec<String> = (0..6).map(|seed| chars(10 + seed, 171, BASE64URL)).collect();
    let names = ["d", "p", "q", "dp", "dq", "qi"];
    let members: Vec<String> =
        names.iter().zip(&private).map(|(name, value)| format!("\"{name}\": \"{value}\"")).collect();
    let rsa = format!(
        "{{\"kty\": \"RSA\", \"kid\": \"2024-signing\", \"key_ops\": [\"sign\"], \"n\": \"{n}\", \"e\": \"AQAB\",\n  {}}}",
        members.join(",\n  ")
    );
    let mut found = redacted(&rsa);
    found.sort_unstable();
    let mut expected: Vec<&str> = private.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(found, expected, "the public modulus, exponent and kid stay");

    // A symmetric key, a key set, and JSON text inside JSON (escaped quotes and line breaks).
    let k = chars(20, 43, BASE64URL);
    assert_secret(&format!(r#"{{"alg":"HS256","kty":"oct","k":"{k}"}}"#), &k);
    assert_secret(&format!(r#"{{"keys": [{{"kty": "oct", "k": "{k}"}}]}}"#), &k);
    assert_secret(&format!(r#"{{"jwks": "{{\n  \"kty\": \"oct\",\n  \"k\": \"{k}\"\n}}"}}"#), &k);
    let d = chars(21, 43, BASE64URL);
    let x = chars(22, 43, BASE64URL);
    assert_secret(&format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","d":"{d}"}}"#), &d);
}

#[test]
fn public_json_web_keys_and_other_objects_stay() {
    let n = chars(1, 342, BASE64URL);
    assert_clean(&format!(r#"{{"keys":[{{"kty":"RSA","kid":"a1","use":"sig","n":"{n}","e":"AQAB"}}]}}"#));
    // `d` and `k` of an object that is no key.
    assert_clean(r#"{"d": "2024-05-01", "k": "value", "p": "page"}"#);
    assert_clean(r#"{"kty": "oct", "k": "********"}"#);
    assert_clean(r#"{"kty": "oct", "k": "<your key>"}"#);
}

/// A PuTTY key file whose lines end with `newline`.
fn ppk(newline: &str, private_lines: &[String]) -> String {
    let public = [chars(30, 64, BASE64), chars(31, 40, BASE64)];
    let mac = chars(32, 64, HEX);
    let lines = [
        "PuTTY-User-Key-File-3: ssh-ed25519".to_owned(),
        "Encryption: none".to_owned(),
        "Comment: ed25519-key-20240101".to_owned(),
        "Public-Lines: 2".to_owned(),
        public[0].clone(),
        public[1].clone(),
        format!("Private-Lines: {}", private_lines.len()),
    ];
    let mut all: Vec<String> = lines.into_iter().chain(private_lines.iter().cloned()).collect();
    all.push(format!("Private-MAC: {mac}"));
    all.join(newline)
}

#[test]
fn the_private_lines_of_a_putty_key_file() {
    let one = vec![chars(40, 48, BASE64)];
    for newline in ["\n", "\r\n", "\\n"] {
        assert_secret(&ppk(newline, &one), &one[0]);
    }
    assert_secret(&format!("{{\"key\": \"{}\"}}", ppk("\\n", &one)), &one[0]);
    let three = vec![chars(41, 64, BASE64), chars(42, 64, BASE64), chars(43, 20, BASE64)];
    let file = ppk("\n", &three);
    assert_secret(&file, &three.join("\n"));
    // Not key material: a look-alike, so nothing inside is read as another kind.
    let stand_in = vec!["<private key here>".to_owned()];
    assert_look_alike(&ppk("\n", &stand_in), "<private key here>");
}

#[test]
fn pem_blocks_in_base64() {
    use base64::Engine;
    let key = pem("RSA PRIVATE KEY", "\n");
    let encoded = base64::engine::general_purpose::STANDARD.encode(&key);
    // A Kubernetes secret and a kubeconfig: one line.
    assert_secret(&format!("data:\n  tls.key: {encoded}\n  tls.crt: x\n"), &encoded);
    assert_secret(&format!("users:\n- user:\n    client-key-data: {encoded}\n"), &encoded);
    assert_secret(&format!("{{\"data\": {{\"key.pem\": \"{encoded}\"}}}}"), &encoded);
    // `base64` wraps at 76 characters.
    let wrapped: Vec<&str> =
        encoded.as_bytes().chunks(76).map(|line| std::str::from_utf8(line).unwrap_or_default()).collect();
    let wrapped = wrapped.join("\n");
    assert_secret(&format!("$ base64 key.pem\n{wrapped}\n$ "), &wrapped);
    // A certificate in base64 is a look-alike.
    let certificate = base64::engine::general_purpose::STANDARD.encode(pem("CERTIFICATE", "\n"));
    assert_look_alike(&format!("ca.crt: {certificate}\n"), &certificate);
    // Mid-run, the marker is not aligned: not a block.
    assert_clean(&format!("blob: QUJD{}\n", &encoded[..40]));
}
