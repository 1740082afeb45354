//! Password hashes (`hash`) and the LDIF values that carry them.

use super::*;

const CRYPT: &[u8] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

#[test]
fn password_hashes_in_every_format() {
    let sha512 = join(&["$6$", "rounds=5000$", &chars(140, 16, CRYPT), "$", &chars(141, 86, CRYPT)]);
    assert_secret(&format!("root:{sha512}:19000:0:99999:7:::"), &sha512);
    let bcrypt = join(&["$2b$", "12$", &chars(142, 53, CRYPT)]);
    assert_secret(&format!("hash: {bcrypt}"), &bcrypt);
    assert_secret(&format!("{{\"password_hash\": \"{bcrypt}\"}}"), &bcrypt);
    let apr1 = join(&["$apr1$", &chars(143, 8, CRYPT), "$", &chars(144, 22, CRYPT)]);
    assert_secret(&format!("admin:{apr1}"), &apr1);
    let argon2 =
        join(&["$argon2id$", "v=19$m=65536,t=3,p=4$", &chars(145, 22, BASE62), "$", &chars(146, 43, BASE62)]);
    assert_secret(&format!("stored {argon2} for ada"), &argon2);
    let django =
        join(&["pbkdf2_sha256$", "600000$", &chars(147, 22, BASE62), "$", &chars(148, 43, BASE62), "="]);
    assert_secret(&format!("password = {django}"), &django);
    let werkzeug = join(&["pbkdf2:sha256:", "600000$", &chars(149, 16, BASE62), "$", &chars(150, 64, HEX)]);
    assert_secret(&format!("hash={werkzeug}"), &werkzeug);
    let yescrypt = join(&["$y$", "j9T$", &chars(151, 22, CRYPT), "$", &chars(152, 43, CRYPT)]);
    assert_secret(&format!("bob:{yescrypt}:19500::::::"), &yescrypt);
}

#[test]
fn nt_hashes_as_pwdump_lists_them() {
    let (lm, nt) = (chars(154, 32, HEX), chars(155, 32, HEX));
    let hashes = format!("{lm}:{nt}");
    assert_secret(&format!("Administrator:500:{hashes}:::"), &hashes);
    assert_secret(&format!("CORP\\svc_sql:1107:{hashes}:::\n"), &hashes);
    for text in [
        "a:::b",
        "std::vector<int>:::",
        &format!("Administrator:500:{lm}:::"),
        &format!("Administrator:{lm}:{nt}:::"),
    ] {
        assert_clean(text);
    }
}

#[test]
fn dollar_signs_that_hold_no_hash() {
    for text in [
        "sed -e 's/$1$/x/'",
        "echo $1$2",
        "price: $5$ or more",
        "$6$ is the id of SHA-512 crypt",
        "root:*:19000:0:99999:7:::",
        "root:!:19000::::::",
    ] {
        assert_clean(text);
    }
}

#[test]
fn ldif_base64_values() {
    let value = join(&["e1NTSEF9", &chars(153, 32, BASE62)]);
    assert_secret(&format!("dn: uid=ada,ou=people,dc=corp\nuserPassword:: {value}\n"), &value);
    assert_clean("std::string password_hint;");
}
