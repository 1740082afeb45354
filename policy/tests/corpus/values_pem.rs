//! PEM and OpenSSH key blocks with structurally real DER bodies.
//!
//! A recognizer may decode a PEM body to tell a private key from a public key or a certificate,
//! so the bodies are real encodings with random key material: SEC1 and PKCS#8 EC P-256 keys,
//! PKCS#8 Ed25519, PKCS#1 and PKCS#8 RSA-2048, and `openssh-key-v1` Ed25519 keys. The planted
//! value is the base64 body; the BEGIN/END lines are its mandatory context. Look-alikes are
//! SubjectPublicKeyInfo public keys, certificates and OpenSSH public key lines.

use policy::RedactionKind;

use super::Planted;
use super::checks::base64;
use super::rng::Rng;

const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];

/// One DER TLV.
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else if len < 0x100 {
        out.extend_from_slice(&[0x81, len as u8]);
    } else {
        out.extend_from_slice(&[0x82, (len >> 8) as u8, len as u8]);
    }
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

/// A positive INTEGER of `bytes` random bytes (top bit set, so a leading zero is added).
fn big_int(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let mut value = rng.bytes(bytes);
    value[0] |= 0x80;
    value.insert(0, 0);
    tlv(0x02, &value)
}

fn small_int(value: u8) -> Vec<u8> {
    tlv(0x02, &[value])
}

fn ec_point(rng: &mut Rng) -> Vec<u8> {
    let mut point = vec![0x00, 0x04];
    point.extend(rng.bytes(64));
    tlv(0x03, &point)
}

fn ec_params() -> Vec<u8> {
    seq(&[tlv(0x06, OID_EC), tlv(0x06, OID_P256)])
}

fn sec1_ec(rng: &mut Rng, with_params: bool) -> Vec<u8> {
    let mut parts = vec![small_int(1), tlv(0x04, &rng.bytes(32))];
    if with_params {
        parts.push(tlv(0xa0, &tlv(0x06, OID_P256)));
    }
    parts.push(tlv(0xa1, &ec_point(rng)));
    seq(&parts)
}

fn pkcs1_rsa(rng: &mut Rng) -> Vec<u8> {
    seq(&[
        small_int(0),
        big_int(rng, 256),
        tlv(0x02, &[0x01, 0x00, 0x01]),
        big_int(rng, 255),
        big_int(rng, 128),
        big_int(rng, 128),
        big_int(rng, 127),
        big_int(rng, 127),
        big_int(rng, 127),
    ])
}

fn pkcs8(algorithm: Vec<u8>, key: Vec<u8>) -> Vec<u8> {
    seq(&[small_int(0), algorithm, tlv(0x04, &key)])
}

/// An SSH wire-format string.
fn ssh_string(data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(data);
    out
}

fn ed25519_public_blob(public: &[u8]) -> Vec<u8> {
    [ssh_string(b"ssh-ed25519"), ssh_string(public)].concat()
}

fn openssh_ed25519(rng: &mut Rng, comment: &str) -> Vec<u8> {
    let public = rng.bytes(32);
    let check = rng.bytes(4);
    let mut private = [check.clone(), check].concat();
    private.extend(ssh_string(b"ssh-ed25519"));
    private.extend(ssh_string(&public));
    private.extend(ssh_string(&[rng.bytes(32), public.clone()].concat()));
    private.extend(ssh_string(comment.as_bytes()));
    let mut pad = 1u8;
    while private.len() % 8 != 0 {
        private.push(pad);
        pad += 1;
    }
    let mut out = b"openssh-key-v1\0".to_vec();
    out.extend(ssh_string(b"none"));
    out.extend(ssh_string(b"none"));
    out.extend(ssh_string(b""));
    out.extend_from_slice(&1u32.to_be_bytes());
    out.extend(ssh_string(&ed25519_public_blob(&public)));
    out.extend(ssh_string(&private));
    out
}

/// Base64 in lines of `width`.
fn wrap(data: &[u8], width: usize) -> String {
    let encoded = base64(data);
    encoded
        .as_bytes()
        .chunks(width)
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn block(label: &str, body: String, valid: bool, form: &str) -> Planted {
    Planted::new(RedactionKind::Credentials, valid, body, format!("pem {form}"))
        .key("private_key")
        .around(format!("-----BEGIN {label}-----\n"), format!("\n-----END {label}-----"))
}

/// A private key block.
pub fn private_key(rng: &mut Rng) -> Planted {
    match rng.below(6) {
        0 => block("EC PRIVATE KEY", wrap(&sec1_ec(rng, true), 64), true, "sec1 ec"),
        1 => block("PRIVATE KEY", wrap(&pkcs8(ec_params(), sec1_ec(rng, false)), 64), true, "pkcs8 ec"),
        2 => {
            let key = tlv(0x04, &rng.bytes(32));
            block("PRIVATE KEY", wrap(&pkcs8(seq(&[tlv(0x06, OID_ED25519)]), key), 64), true, "pkcs8 ed25519")
        }
        3 => block("RSA PRIVATE KEY", wrap(&pkcs1_rsa(rng), 64), true, "pkcs1 rsa"),
        4 => {
            let algorithm = seq(&[tlv(0x06, OID_RSA), vec![0x05, 0x00]]);
            block("PRIVATE KEY", wrap(&pkcs8(algorithm, pkcs1_rsa(rng)), 64), true, "pkcs8 rsa")
        }
        _ => {
            let comment = format!(
                "{}@{}",
                rng.pick(&["deploy", "jane", "ci"]),
                rng.pick(&["laptop", "build-01", "bastion"])
            );
            block("OPENSSH PRIVATE KEY", wrap(&openssh_ed25519(rng, &comment), 70), true, "openssh ed25519")
        }
    }
}

/// A public key or certificate: same shape, nothing secret.
pub fn public_key(rng: &mut Rng) -> Planted {
    match rng.below(4) {
        0 => {
            let spki = seq(&[ec_params(), ec_point(rng)]);
            block("PUBLIC KEY", wrap(&spki, 64), false, "spki ec public key").key("public_key")
        }
        1 => {
            let rsa = seq(&[big_int(rng, 256), tlv(0x02, &[0x01, 0x00, 0x01])]);
            let mut bits = vec![0x00];
            bits.extend(rsa);
            let spki = seq(&[seq(&[tlv(0x06, OID_RSA), vec![0x05, 0x00]]), tlv(0x03, &bits)]);
            block("PUBLIC KEY", wrap(&spki, 64), false, "spki rsa public key").key("public_key")
        }
        2 => {
            // A certificate-shaped body: version, serial, then opaque TBS content and a signature.
            let tbs = seq(&[tlv(0xa0, &small_int(2)), big_int(rng, 16), tlv(0x04, &rng.bytes(300))]);
            let cert = seq(&[tbs, seq(&[tlv(0x06, OID_EC)]), tlv(0x03, &[vec![0], rng.bytes(70)].concat())]);
            block("CERTIFICATE", wrap(&cert, 64), false, "certificate").key("certificate")
        }
        _ => {
            let line = base64(&ed25519_public_blob(&rng.bytes(32)));
            let comment =
                format!("{}@{}", rng.pick(&["deploy", "jane", "ci"]), rng.pick(&["laptop", "build-01"]));
            Planted::new(RedactionKind::Credentials, false, line, "ssh public key")
                .key("ssh_public_key")
                .around("ssh-ed25519 ", format!(" {comment}"))
        }
    }
}
