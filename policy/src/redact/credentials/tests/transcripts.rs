//! Mail session transcripts (`smtp`) and wallet seed phrases (`mnemonic`).

use super::*;

#[test]
fn mail_sessions_authenticating_in_base64() {
    let plain = STANDARD.encode("\0ada@corp.example\0Xk8mQ2pLz");
    assert_secret(&format!("C: AUTH PLAIN {plain}\nS: 235 2.7.0 Authentication successful"), &plain);
    let with_authzid = STANDARD.encode("admin\0ada\0Xk8mQ2pLz");
    assert_secret(&format!("> AUTH PLAIN {with_authzid}"), &with_authzid);
    let password = STANDARD.encode("Xk8mQ2pLz");
    let user = STANDARD.encode("ada@corp.example");
    let login = format!(
        "C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: {user}\nS: 334 UGFzc3dvcmQ6\nC: {password}\nS: 235 ok"
    );
    assert_secret(&login, &password);
    assert_secret(&format!("334 UGFzc3dvcmQ6\r\n{password}\r\n"), &password);
    for text in [
        "AUTH PLAIN is described in RFC 4616",
        "C: AUTH PLAIN\nS: 334 ",
        // Base64 that is not `authzid NUL user NUL password`.
        "AUTH PLAIN SGVsbG8gd29ybGQ=",
        "S: 334 UGFzc3dvcmQ6\nC: *",
    ] {
        assert_clean(text);
    }
}

#[test]
fn seed_phrases_of_twelve_to_twenty_four_words() {
    let twelve = "ribbon velvet tiger absorb access yellow umbrella wrist zoo about abandon able";
    let twenty_four = format!("{twelve} {twelve}");
    assert_secret(&format!("Seed phrase: {twelve}"), twelve);
    assert_secret(&format!("MNEMONIC=\"{twenty_four}\""), &twenty_four);
    assert_secret(&format!("my recovery phrase is {twelve}."), twelve);
    assert_secret(&format!("{{\"mnemonic\": \"{twelve}\"}}"), twelve);
    assert!(crate::redact::credentials::secret_under_key("seed_phrase", twelve));
    assert!(crate::redact::credentials::secret_under_key("wallet_mnemonic", twelve));
    for text in [
        // An assembler's mnemonic, and phrases of other lengths or words.
        "mnemonic: MOV",
        "The mnemonic is a memory aid.",
        "seed phrase: ribbon velvet tiger absorb access yellow umbrella wrist zoo about abandon",
        &format!("seed words: {twelve} extra"),
        "Recovery phrase: write it down and keep it offline",
    ] {
        assert_clean(text);
    }
    assert!(!crate::redact::credentials::secret_under_key("mnemonic", "MOV"));
    // A long run of words after the name is prose, read no further than one word past 24.
    let long = format!("mnemonic: {}", "word ".repeat(10_000));
    assert_clean(&long);
    assert!(!crate::redact::credentials::secret_under_key("description", twelve));
}
