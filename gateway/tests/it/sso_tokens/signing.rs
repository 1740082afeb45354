//! Keys and signing for forged tokens: EC and RSA keys, JWKs, compact JWS built from raw text.

use super::*;

// Signing.

pub(super) struct EcKey {
    pub(super) pair: EcdsaKeyPair,
    pub(super) pkcs8: Vec<u8>,
}

/// The provider's keys, and one the attacker holds.
pub(super) struct Keys {
    pub(super) ec: EcKey,
    pub(super) rsa: RsaKeyPair,
    pub(super) attacker: EcKey,
}

impl Keys {
    pub(super) fn generate() -> Self {
        let rsa = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("RSA key");
        Self { ec: ec_key(), rsa, attacker: ec_key() }
    }
}

pub(super) fn ec_key() -> EcKey {
    let algorithm = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(algorithm, &SystemRandom::new()).expect("EC key");
    let pair = EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref()).expect("EC key parses");
    EcKey { pair, pkcs8: pkcs8.as_ref().to_vec() }
}

pub(super) fn ec_jwk(pair: &EcdsaKeyPair, kid: &str, alg: Option<&str>) -> Value {
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

pub(super) fn rsa_jwk(pair: &RsaKeyPair, kid: &str) -> Value {
    let (modulus, exponent) = rsa_components(pair.public_key().as_ref());
    json!({ "kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid, "n": b64(&modulus), "e": b64(&exponent) })
}

/// `n` and `e` from a PKCS#1 `RSAPublicKey` (DER: a sequence of two integers).
pub(super) fn rsa_components(der: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (_, body, _) = der_item(der);
    let (_, modulus, rest) = der_item(body);
    let (_, exponent, _) = der_item(rest);
    let strip = |integer: &[u8]| integer.iter().skip_while(|byte| **byte == 0).copied().collect();
    (strip(modulus), strip(exponent))
}

/// One DER item: (tag, contents, what follows).
pub(super) fn der_item(input: &[u8]) -> (u8, &[u8], &[u8]) {
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
pub(super) fn der_signature(r: &[u8], s: &[u8]) -> Vec<u8> {
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

pub(super) fn pem(label: &str, der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let lines: Vec<&str> =
        body.as_bytes().chunks(64).map(|line| std::str::from_utf8(line).unwrap_or("")).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

pub(super) enum Signer<'a> {
    Ec(&'a EcdsaKeyPair),
    Rsa(&'a RsaKeyPair),
    Hmac(hmac::Algorithm, &'a [u8]),
    /// A fixed "signature".
    Bytes(Vec<u8>),
}

impl Signer<'_> {
    pub(super) fn sign(&self, input: &[u8]) -> Vec<u8> {
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

pub(super) fn jws(header: &Value, claims: &Value, signer: &Signer<'_>) -> String {
    jws_text(&header.to_string(), &claims.to_string(), signer)
}

/// A compact JWS from raw header and payload text.
pub(super) fn jws_text(header: &str, payload: &str, signer: &Signer<'_>) -> String {
    let input = format!("{}.{}", b64(header), b64(payload));
    let signature = signer.sign(input.as_bytes());
    format!("{input}.{}", b64(signature))
}

pub(super) fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub(super) fn random_base64(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("random bytes");
    URL_SAFE_NO_PAD.encode(buffer)
}

pub(super) fn hex(bytes: &[u8]) -> String {
    gateway::http::hex(bytes)
}

pub(super) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
}

pub(super) fn key_ring(secret: &str) -> KeyRing {
    KeyRing::from_secrets(&[SecretRef::Generated(secret.to_owned())]).expect("key ring")
}

pub(super) fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}
