//! The word for a password in more languages (`languages`): single words, phrases and the words
//! that also mean something else.

use super::*;

#[test]
fn single_words_in_each_case_and_as_json_keys() {
    let secret = "Leto2024!x";
    for name in [
        "heslo",
        "Heslo",
        "HESLO",
        "db_heslo",
        "lozinka",
        "Lozinka",
        "Лозинка",
        "geslo",
        "Parolă",
        "Парола",
        "Slaptažodis",
        "Parool",
        "Wagwoord",
        "Lykilorð",
        "Fjalëkalimi",
        "Συνθηματικό",
        "პაროლი",
        "գաղտնաբառ",
        "Nenosiri",
        "पासवर्ड",
        "পাসওয়ার্ড",
        // Catalan, read from the key word `contrase`.
        "contrasenya",
        "Contrasenya",
    ] {
        assert_secret(&format!("{name}: {secret}"), secret);
        assert_secret(&format!("{name}={secret}"), secret);
        assert_secret(&format!("{{\"{name}\": \"{secret}\"}}"), secret);
    }
}

#[test]
fn phrases_are_read_whole() {
    let secret = "Leto2024!x";
    for name in [
        "mật khẩu",
        "Mật khẩu",
        "MẬT KHẨU",
        "kata sandi",
        "Kata sandi",
        "Kata Sandi",
        "kata laluan",
        "كلمة المرور",
        "كلمة السر",
        "رمز عبور",
        "codice di accesso",
        "Codice di accesso",
        "parola d'ordine",
        "Parola d’ordine",
        "Κωδικός πρόσβασης",
        "Құпия сөз",
    ] {
        assert_secret(&format!("{name}: {secret}"), secret);
        assert_secret(&format!("{{\"{name}\": \"{secret}\"}}"), secret);
    }
    // A JSON document's keys are read as names, in any spelling of the words.
    assert!(crate::redact::credentials::secret_under_key("kata_sandi", "Leto2024!x"));
    assert!(!crate::redact::credentials::secret_under_key("sandi", "Leto2024!x"));
    // One word of a phrase names nothing alone.
    for text in ["sandi: Leto2024!x", "kata: Leto2024!x", "codice: AB-1234-XY", "accesso: Leto2024!x"] {
        assert_clean(text);
    }
}

#[test]
fn words_that_also_mean_something_else_need_a_secret_looking_value() {
    // Italian and Turkish `parola`, Latvian `parole`, Greek `κωδικός` (any code).
    assert_secret("Parola: Xk9mQ2vL7pzR4", "Xk9mQ2vL7pzR4");
    assert_secret("parole = Xk9mQ2vL7pzR4", "Xk9mQ2vL7pzR4");
    assert_secret("Κωδικός: Xk9mQ2vL7pzR4", "Xk9mQ2vL7pzR4");
    for text in [
        "parola: casa",
        "Parola chiave: marketing",
        "la parola: ciao",
        "Κωδικός: 4821",
        "Κωδικός προϊόντος: AB-12",
        "la parole: libre",
    ] {
        assert_clean(text);
    }
}

#[test]
fn abbreviations_and_the_words_for_credentials() {
    for name in ["pswd", "PSWD", "psw", "Psw", "pword", "passwrd", "db_pswd"] {
        assert_secret(&format!("{name}: Xk9mQ2vL7pz"), "Xk9mQ2vL7pz");
    }
    for name in [
        "Zugangsdaten",
        "Anmeldedaten",
        "Credenciales",
        "credenciais",
        "Credenziali",
        "Identifiants",
        "Inloggegevens",
    ] {
        assert_secret(&format!("{name}: bob / Xk9mQ2vL7pz"), "bob / Xk9mQ2vL7pz");
    }
    // A personal access token, named by its abbreviation in capitals.
    let token = "62gf6nja3aahfnhi6brp4ldxjfs75qdcadafyttk7dux46kjhxk2";
    assert_secret(&format!("Azure DevOps PAT: {token}"), token);
    assert_secret(&format!("GH_PAT={token}"), token);
    assert!(crate::redact::credentials::secret_under_key("ado_pat", token));
    for text in [
        "pswd: required",
        "Zugangsdaten: siehe Wiki",
        "upsw: 12",
        "pswdx: Xk9mQ2vL7pz",
        "PATH=/usr/local/bin:/usr/bin",
        "PATCH /api/v1/users/42",
        "PAT: enabled on the edge router",
        "Contact: Pat / Facilities",
    ] {
        assert_clean(text);
    }
}
