//! Secrets named in sentences, lone `Basic` credentials, CSV columns and whole JSON strings.

use super::*;
use crate::redact::credentials::secret_under_key;

#[test]
fn secrets_after_their_name_in_prose() {
    for (text, secret) in [
        ("Please use DB PASSWORD Ma?5gG!bt-2gBv4gvJKGdWWQZ for this request.", "Ma?5gG!bt-2gBv4gvJKGdWWQZ"),
        ("hier ist JWT SECRET battery-maple-piano-maple (expires friday)", "battery-maple-piano-maple"),
        ("Bitte verwenden Sie für diesen Antrag Passwort C^!s5b99L8rjELzy2jE_wg.", "C^!s5b99L8rjELzy2jE_wg"),
        ("Il dato registrato (apiKey) è staple.maple.piano.river; aggiornalo.", "staple.maple.piano.river"),
        ("The DB PASSWORD on file is maple-orange-battery; update it.", "maple-orange-battery"),
        (
            "El dato registrado (aws secret access key) es XOxOyndiXk99ygDIZeSqnmaQXmvo5yWwhCFYambn; ok",
            "XOxOyndiXk99ygDIZeSqnmaQXmvo5yWwhCFYambn",
        ),
        (
            "Merci d'utiliser aws secret access key rO6eot0/eolEBf45fm9I+akYk8Q6Th3jve/BzV93 pour cela.",
            "rO6eot0/eolEBf45fm9I+akYk8Q6Th3jve/BzV93",
        ),
        ("JWT SECRET 3bbb6c9ec8f616faf373fd4d91ffa0def40cf273", "3bbb6c9ec8f616faf373fd4d91ffa0def40cf273"),
        ("voici le mot de passe Welcome2025! pour demain", "Welcome2025!"),
        ("Por favor, use contraseña Sommer2025* para esta solicitud.", "Sommer2025*"),
        ("Gebruik wachtwoord tiger_orange_correct voor deze aanvraag.", "tiger_orange_correct"),
        ("O dado cadastrado (senha) é Dp3fcrz7mh5%; atualize se mudou.", "Dp3fcrz7mh5%"),
        ("Das Kennwort lautet Xk9#mq2Lp!", "Xk9#mq2Lp!"),
        ("client secret - vowDXP@5-5dXa6fPZd?bCe8^-@7mstZs", "vowDXP@5-5dXa6fPZd?bCe8^-@7mstZs"),
        ("The API key is now \"hunter22\".", "hunter22"),
        (
            "The aws secret access key, e.g. 2OkN46Oy9rCWUAnsKg21nB3Y1EJtULLN5U1UgPNl.",
            "2OkN46Oy9rCWUAnsKg21nB3Y1EJtULLN5U1UgPNl",
        ),
        ("Can you check Winter2024!!? It is listed as the REDIS PASSWORD for Ingrid.", "Winter2024!!"),
        ("apiKey Cs7snim2& will be used from now on.", "Cs7snim2&"),
    ] {
        assert_secret(text, secret);
    }
}

#[test]
fn prose_about_secrets_is_left_alone() {
    for text in [
        "Password reset tokens expire after 15 minutes.",
        "The password is required.",
        "The password is too short (min 12 chars).",
        "The token expired at 14:05:36 UTC.",
        "The password for user admin42 is required.",
        "Your API key is shown only once; copy it now.",
        "The access token is valid for 3600 seconds.",
        "Password hashing uses Argon2id by default.",
        "The signing key is RS256-based.",
        "The token is OAuth2/OIDC compliant.",
        "The secret is stored in app.settings.json for now.",
        "Send the password to jane@example.com today.",
        "retry DB_PASSWORD=$SECRET_KEY status=400 duration_ms=2764",
        "The commit 3bbb6c9ec8f616faf373fd4d91ffa0def40cf273 fixed the token refresh.",
        "Never share your password, token, or key.",
        "Use the --password option to pass it on the command line.",
        "The key 2024-05-01T10:00Z is the rotation date.",
        "Das Passwort ist falsch.",
        "Le mot de passe est incorrect.",
        "Token type: Bearer, token lifetime 3600s",
        "The state-of-the-art secret manager",
    ] {
        assert_clean(text);
    }
}

#[test]
fn look_alikes_named_in_prose_stay() {
    assert_look_alike(
        "Please use aws secret access key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY here.",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    );
    assert_clean("The password on file is ${DB_PASSWORD}; update it.");
    assert_clean("(Authorization: Bearer $ACCESS_TOKEN) joined");
}

#[test]
fn lone_basic_credentials_decode_to_a_pair() {
    for text in [
        "Authorization - Basic Y2ktYm90OmhvcnNlX3N0YXBsZV9tYXBsZQ==",
        "Can you double-check Basic Y2ktYm90OmhvcnNlX3N0YXBsZV9tYXBsZQ==? It is listed.",
        "33838,Sanne Weber,\"Basic Y2ktYm90OmhvcnNlX3N0YXBsZV9tYXBsZQ==\",LT41",
    ] {
        assert_secret(text, "Y2ktYm90OmhvcnNlX3N0YXBsZV9tYXBsZQ==");
    }
    assert_clean("Basic training starts on Monday.");
    assert_clean("Basic dGhlIHF1aWNrIGJyb3du is not a pair.");
}

#[test]
fn csv_columns_under_a_secret_header() {
    let table = "id,name,password,created\n4589,Jane Martin,Bonjour2020*,13.08.2026\n\
                 4590,Ada Lovelace,${DB_PASSWORD},14.08.2026\n";
    assert_secret(table, "Bonjour2020*");
    let sloppy = "id,name,api_key,created\n22502,Marco Weber,tiger.piano.river.river,October 21, 2026\n";
    assert_secret(sloppy, "tiger.piano.river.river");
    assert_clean("id,name,password_policy,created\n1,Jane,strict,2024-01-01\n");
}

#[test]
fn whole_strings_under_secret_keys() {
    let aws = ["MPmQLyUqLOHwYjSr3", "/wIw0QbeID3IoY20zu7Sv+t"].concat();
    for (key, value) in [
        ("aws_secret_access_key", aws.as_str()),
        ("aws_secret_access_key_2", aws.as_str()),
        ("password", "horse-horse-maple"),
        ("apiKey", "qHJuHKNE5b?S2cp"),
        ("Authorization", "Basic YXBpOnRpZ2VyLnN0YXBsZS5zdGFwbGUuaG9yc2U="),
        ("passphrase", "correct horse battery staple"),
        ("contraseña", "Zonnig2025?"),
    ] {
        assert!(secret_under_key(key, value), "{key}: {value}");
    }
    for (key, value) in [
        ("password", "${DB_PASSWORD}"),
        ("password", "********"),
        ("password", "[credential 1]"),
        ("password", "This field is required."),
        ("password", "other (3)"),
        ("aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("GITHUB_TOKEN", &join(&["ghp_", &chars(9, 30, BASE62), "AAAAAA"])),
        ("Authorization", "Bearer ${TOKEN}"),
        ("token_type", "bearer"),
        ("password_policy", "strict"),
        ("key", "Zonnig2025?"),
        ("name", "Zonnig2025?"),
        ("token", "expired"),
        ("aws_secret_access_key", &chars(5, 40, HEX)),
    ] {
        assert!(!secret_under_key(key, value), "{key}: {value}");
    }
}

#[test]
fn what_a_secret_is_for_and_short_chosen_passwords() {
    assert_secret("the root password for db01 is hunter2", "hunter2");
    assert_secret("Password for wifi \"Office5G\" is BlueHorse42", "BlueHorse42");
    assert_secret("private key passphrase \"M00nl1ght!\"", "M00nl1ght!");
    assert_secret("key password \"M00nl1ght!\"", "M00nl1ght!");
    assert_secret("The Wi-Fi key is Xk9vB2mQ7zLp4RtY", "Xk9vB2mQ7zLp4RtY");
    for text in [
        "the password for user admin42 is required",
        "password policy v2beta applies",
        "the network key was rotated",
        "the password for db01 expired.",
    ] {
        assert_clean(text);
    }
}

#[test]
fn the_particles_of_chinese_japanese_and_korean() {
    assert_secret("密码是 abc123XYZ", "abc123XYZ");
    assert_secret("密码是abc123XYZ", "abc123XYZ");
    assert_secret("密码为：Zx9Qw8Er", "Zx9Qw8Er");
    assert_secret("パスワードは Kq8zT2mLx9 です", "Kq8zT2mLx9");
    assert_secret("비밀번호는 Hx8mQ2vL9 입니다", "Hx8mQ2vL9");
    assert_clean("パスワードはありません");
}

#[test]
fn adverbs_longer_phrases_tables_and_bold_labels() {
    assert_secret("the password for the Jenkins box is Sommer2024!", "Sommer2024!");
    assert_secret("password is currently Sommer2024!", "Sommer2024!");
    assert_secret("Le mot de passe est maintenant Sommer2024!", "Sommer2024!");
    assert_secret("| Password | Ts8!kQm2pZ |", "Ts8!kQm2pZ");
    assert_secret("**Password:** Xk8#mQ2p!Lz", "Xk8#mQ2p!Lz");
    assert_clean("| Password | required |");
    assert_clean("the password for the new hire expired.");
}

#[test]
fn a_user_and_password_pair_after_login() {
    assert_secret("login: alice / Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("Login = svc-backup | Xk9mQ2vL7pz.", "Xk9mQ2vL7pz");
    assert_secret("VPN LOGIN:  jdoe / Tr0ub4dor&3x", "Tr0ub4dor&3x");
    // After `login` the pair says what its second word is: a password a person chose is enough.
    assert_secret("login: alice / hunter2", "hunter2");
    assert_secret("Login: bob / s3cret.", "s3cret");
    assert_secret("LOGIN = svc-backup | pa55word", "pa55word");
    assert_secret("Test login: alice : hunter2 (expires Friday)", "hunter2");
    assert_secret("login alice / hunter2", "hunter2");
    assert_secret("Login: alice/hunter2", "hunter2");
    assert_secret("test login svc-ci / Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("Wi-Fi: Office/Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    // A network's name and key after Wi-Fi or WLAN.
    assert_secret("wifi: GuestNet / Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("Wi-Fi = Office-5G | Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("WLAN: Lab / Tr0ub4dor&3x", "Tr0ub4dor&3x");
    for text in [
        "login: alice",
        "Login: Settings / Profile",
        "login: alice / changeme",
        "login / register",
        "blogin: alice / Xk9mQ2vL7pz",
        "loginUrl: /auth / Xk9mQ2vL7pz",
        "Login: see the wiki / ask IT",
        "Wi-Fi: 2.4 GHz / 5 GHz",
        "wlan0: 10.0.0.5 / 24",
        "WiFi: Guest / Staff networks",
        "Login: SSO / OAuth",
        "login: alice / 123456",
        "login: alice / hunter",
        "Login: step 1 / step 2",
        "Wi-Fi: 2.4GHz / 5.0GHz",
        "WLAN: Guest / Lab42",
        "Login : 10:30 / 11:45",
        "login page / home",
        "Login: Settings/Profile",
        "Login: OAuth2/OIDC",
        "login with SSO / OIDC2",
        "wifi GuestNet / Xk9mQ2vL7pz",
        "docker login registry.corp.example/team2024",
        "login: https://sso.corp/realm2024",
    ] {
        assert_clean(text);
    }
}

#[test]
fn a_chosen_password_after_a_short_name_for_one() {
    assert_secret("pw hunter2", "hunter2");
    assert_secret("my pw is hunter2", "hunter2");
    assert_secret("user alice pw hunter2", "hunter2");
    assert_secret("the pwd for the NAS is Sommer24", "Sommer24");
    assert_secret("la contrasena es verano24", "verano24");
    assert_secret("la clave del wifi es verano24", "verano24");
    assert_clean("la palabra clave es verano24");
    assert_secret("mot de passe est soleil24", "soleil24");
    assert_clean("pw 2024");
    assert_clean("the PW team meets at 10");
    assert_clean("pw reset requested by alice");
    assert_clean("my pw is the usual one");
}
