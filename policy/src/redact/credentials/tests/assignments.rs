//! Secrets assigned to key names, in every syntax, with offsets covering only the value.

use super::*;

/// Assignment syntaxes: `{k}` is the key name, `{v}` the value.
const SYNTAXES: [&str; 22] = [
    "{k}={v}",
    "{k}: {v}",
    "{k} = {v}",
    "{k} = \"{v}\"",
    "{k}='{v}'",
    "\"{k}\": \"{v}\"",
    "\"{k}\":\"{v}\"",
    "'{k}' => '{v}'",
    "{k} => \"{v}\"",
    "{k} := \"{v}\"",
    "export {K}={v}",
    "export {K}=\"{v}\"",
    "https://api.example.com/v1/items?{k}={v}&page=2",
    "GET /login?user=ada&{k}={v} HTTP/1.1",
    "cli --{k} {v} --verbose",
    "cli --{k}={v}",
    "<{k}>{v}</{k}>",
    "{\\\"{k}\\\":\\\"{v}\\\",\\\"user\\\":\\\"ada\\\"}",
    "{k}: \"{v}\"",
    "  {k}: '{v}'",
    "{k}={v};Timeout=30",
    "user={{ user }}, {k}={v}, port=5432",
];

const KEYS: [&str; 20] = [
    "password",
    "Password",
    "PASSWORD",
    "passwd",
    "pwd",
    "pass",
    "secret",
    "client_secret",
    "api_key",
    "apikey",
    "api-key",
    "access_token",
    "auth_token",
    "token",
    "private_key",
    "db_password",
    "smtp_pass",
    "github_token",
    "secret_key",
    "refresh_token",
];

const VALUES: [&str; 6] =
    ["hunter2", "S3cr3t!Pass", "tr0ub4dor3", "9f8e7d6c5b4a", "Zx81-Qw_7#yz", "correcthorse9"];

#[test]
fn every_syntax_every_key() {
    for syntax in SYNTAXES {
        for key in KEYS {
            for value in VALUES {
                let text = syntax
                    .replace("{k}", key)
                    .replace("{K}", &key.to_ascii_uppercase())
                    .replace("{v}", value);
                assert_secret(&text, value);
            }
        }
    }
}

#[test]
fn quoted_values_may_hold_spaces_and_escapes() {
    assert_secret(r#"password = "correct horse battery""#, "correct horse battery");
    assert_secret(r#"{"password": "pa\"ss w0rd", "user": "ada"}"#, r#"pa\"ss w0rd"#);
    assert_secret(r#"{"output": "{\"password\": \"p@ss w0rd\"}"}"#, "p@ss w0rd");
    // Two single quotes are one inside the value (YAML, SQL); in a shell, two strings side by side.
    assert_secret("PASSWORD='it''s'", "it''s");
    assert_secret("secret: \"Tr0ub4dor&3\"", "Tr0ub4dor&3");
}

#[test]
fn bare_values_end_where_the_carrier_says() {
    assert_secret("password=hunter2&next=/home", "hunter2");
    assert_secret("password=hunter2, user=ada", "hunter2");
    assert_secret("password=hunter2; path=/", "hunter2");
    assert_secret("<td>password=hunter2</td>", "hunter2");
    assert_secret(r#"{"log": "login password=hunter2\nnext line"}"#, "hunter2");
    assert_secret(r#"{"log": "login password=hunter2\\nnext"}"#, "hunter2");
    assert_secret("User{name=ada, password=hunter2}", "hunter2");
    assert_secret("(password=hunter2)", "hunter2");
    assert_secret("Set password=hunter2. Then log in.", "hunter2");
    assert_secret("password=pässwörd1 ok", "pässwörd1");
    assert_secret("`DB_PASSWORD=hunter2`", "hunter2");
}

#[test]
fn prefixed_and_compound_key_names() {
    for key in [
        "DB_PASSWORD",
        "SMTP_PASS",
        "MYSQL_ROOT_PASSWORD",
        "PGPASSWORD",
        "REDIS_AUTH_TOKEN",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "SecretAccessKey",
        "spring.datasource.password",
        "X-API-Key",
        "apiKey",
        "clientSecret",
        "AccountKey",
        "SharedAccessKey",
        "secret_key_base",
        "jwt_secret",
        "WEBHOOK_SECRET",
        "Private-Token",
        "x-auth-token",
        "OPENAI_API_KEY",
    ] {
        assert_secret(&format!("{key}=Qm9vbTEyMzQ1"), "Qm9vbTEyMzQ1");
        assert_secret(&format!("{key}: Qm9vbTEyMzQ1"), "Qm9vbTEyMzQ1");
    }
    let azure = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0a2V5MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net";
    assert_secret(azure, "c2VjcmV0a2V5MTIzNDU2Nzg5MA==");
    assert_secret("API key: 8f3a9c2e71b4d605", "8f3a9c2e71b4d605");
    assert_secret("docker: {\"auths\": {\"ghcr.io\": {\"auth\": \"YWRhOnMzY3IzdA==\"}}}", "YWRhOnMzY3IzdA==");
}

#[test]
fn pairs_of_name_and_value() {
    let yaml = "env:\n  - name: DB_PASSWORD\n    value: hunter2\n  - name: PORT\n    value: \"5432\"\n";
    assert_secret(yaml, "hunter2");
    assert_secret(r#"[{"name": "API_KEY", "value": "k-93jd8s7a6"}]"#, "k-93jd8s7a6");
    assert_secret(r#"<add key="DbPassword" value="hunter2" />"#, "hunter2");
}

#[test]
fn carriers_of_assignments() {
    let cases = [
        (
            "wiki",
            "To connect, use the service account with password=Xy7#pQ2m and the default port.",
            "Xy7#pQ2m",
        ),
        ("log", "2024-05-01 12:00:01 DEBUG db: connecting user=app password=Xy7pQ2m host=db:5432", "Xy7pQ2m"),
        ("yaml", "database:\n  user: app\n  password: Xy7pQ2m\n  host: db\n", "Xy7pQ2m"),
        ("yaml word", "database:\n  user: app\n  password: hunter\n", "hunter"),
        ("env", "DB_HOST=db\nDB_PASSWORD=Xy7pQ2m\nDB_PORT=5432\n", "Xy7pQ2m"),
        ("ini", "[database]\nuser = app\npassword = Xy7pQ2m\n", "Xy7pQ2m"),
        ("ini word", "[database]\npassword = hunter\n", "hunter"),
        ("toml", "[database]\npassword = \"Xy7 pQ2m\"\n", "Xy7 pQ2m"),
        ("json", "{\"user\": \"app\", \"password\": \"Xy7pQ2m\", \"port\": 5432}", "Xy7pQ2m"),
        ("json text", r#"{"content":"[database]\npassword = Xy7pQ2m\nport = 5432\n"}"#, "Xy7pQ2m"),
        ("json text yaml", r#"{"content":"db:\n  password: Xy7pQ2m\n"}"#, "Xy7pQ2m"),
        ("php", "$config['password'] = 'Xy7pQ2m';", "Xy7pQ2m"),
        ("python", "conn = connect(user=\"app\", password=\"Xy7pQ2m\")", "Xy7pQ2m"),
        ("docker", "docker run -e POSTGRES_PASSWORD=Xy7pQ2m postgres:16", "Xy7pQ2m"),
        ("java", "-Dspring.datasource.password=Xy7pQ2m -jar app.jar", "Xy7pQ2m"),
        ("powershell", "$env:API_KEY = \"Xy7pQ2m\"", "Xy7pQ2m"),
        ("numeric json", "{\"pin_password\": 482913}", "482913"),
    ];
    for (carrier, text, secret) in cases {
        assert_eq!(redacted(text), [secret], "{carrier}: {text:?}");
    }
}

#[test]
fn the_word_for_a_password_in_more_languages() {
    // Russian and Ukrainian, Japanese, Chinese (both scripts), Korean, Polish, Swedish, Danish,
    // Norwegian, Finnish, Turkish, Hungarian, Hebrew, Thai: in key-value form, in the cases each
    // script has, and as a JSON key.
    let secret = "Leto2024!x";
    for name in [
        "пароль",
        "Пароль",
        "ПАРОЛЬ",
        "DB_ПАРОЛЬ",
        "パスワード",
        "密码",
        "密碼",
        "비밀번호",
        "hasło",
        "Hasło",
        "HASŁO",
        "lösenord",
        "Lösenord",
        "adgangskode",
        "passord",
        "Salasana",
        "şifre",
        "Şifre",
        "jelszó",
        "JELSZÓ",
        "סיסמה",
        "รหัสผ่าน",
        // Latin American Spanish's everyday word, beside `contraseña`.
        "clave",
        "Clave",
        "CLAVE",
    ] {
        assert_secret(&format!("{name}: {secret}"), secret);
        assert_secret(&format!("{name}={secret}"), secret);
        assert_secret(&format!("{{\"{name}\": \"{secret}\"}}"), secret);
    }
    // The words in a sentence, with no value after them, name nothing.
    for text in ["Введите пароль ниже.", "パスワードを忘れた場合はこちら", "Zapomniałeś hasła? Podaj hasło."]
    {
        assert_clean(text);
    }
    assert_secret("Usuario: jperez / Clave: Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("tu clave es Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    // A keyword (`palabra clave`) and words that end in `clave` name no password.
    for text in ["palabra clave: marketing", "enclave: 10.0.0.0/8", "Olvidé mi clave", "autoclave: 121 °C"]
    {
        assert_clean(text);
    }
}

#[test]
fn a_tab_after_the_name_and_a_pair_named_with_a_slash() {
    // A table pasted as text: one tab between the cells, a value that looks like a secret.
    assert_secret("Password\tXk9mQ2vL7pzR", "Xk9mQ2vL7pzR");
    assert_secret("Host\tdb01\nAPI token\tZq7Wn3Lp9xT2", "Zq7Wn3Lp9xT2");
    for text in ["password\tstring\tThe user's password", "Password\tRequired", "password\t12"] {
        assert_clean(text);
    }
    assert_secret("Username/Password: admin / Xk9mQ2vL7pzR", "admin / Xk9mQ2vL7pzR");
    assert_secret("user/pass: svc | Xk9mQ2vL7pzR", "svc | Xk9mQ2vL7pzR");
    assert_clean("Username/Password: see the vault");
}

#[test]
fn yaml_block_scalars_hold_their_secret_on_the_lines_below() {
    assert_secret("db:\n  password: |\n    S3cr3tPw9!\n  host: db\n", "S3cr3tPw9!");
    assert_secret("db:\n  password: >-\n    S3cr3tPw9!\r\n  host: db\r\n", "S3cr3tPw9!");
    assert_secret(
        "signing:\n  passphrase: |2 # rotated monthly\n\n    correct horse\n    battery staple\nnext: 1",
        "correct horse\n    battery staple",
    );
    for text in [
        "password: |\nnext: value\n",
        "  password: |\n  host: db\n",
        "password: |\n  ${DB_PASSWORD}\n",
        "description: |\n  Your password must have 12 characters.\n",
        "password: | and more\n",
    ] {
        assert_clean(text);
    }
}

#[test]
fn short_names_and_passphrases_of_words() {
    assert_secret("pw: Kq8!zT2m", "Kq8!zT2m");
    assert_secret("DB_PW=Zq7Wn3Lp9", "Zq7Wn3Lp9");
    assert_secret("smtpPw = \"Hx8mQ2vL\"", "Hx8mQ2vL");
    assert_secret("passphrase: correct horse battery staple", "correct horse battery staple");
    assert_secret("gpg_passphrase: purple monkey dishwasher # rotated", "purple monkey dishwasher");
    // The name in two words.
    assert_secret("pass phrase: correct horse battery staple", "correct horse battery staple");
    assert_secret("Key pass-phrase: purple monkey dishwasher", "purple monkey dishwasher");
    for text in [
        "pass phrase: must be at least twelve characters",
        "upward: trend",
        "PWA: enabled",
        "the pw field is required",
        "passphrase: must be at least twelve characters",
        "The passphrase is required.",
    ] {
        assert_clean(text);
    }
}

#[test]
fn wifi_pre_shared_keys() {
    assert_secret("network={\n  ssid=\"Office\"\n  psk=\"blue heron sunrise\"\n}", "blue heron sunrise");
    assert_secret("wpa_psk=9f0c7d5e2b1a48c6d3e7f8a9b0c1d2e3", "9f0c7d5e2b1a48c6d3e7f8a9b0c1d2e3");
    assert_clean("the psk is configured per site");
    // In capitals, as router pages and Wi-Fi QR labels write it.
    assert_secret("PSK = Xk9mQ2vL7pzR", "Xk9mQ2vL7pzR");
    assert_secret("WPA2 PSK: Xk9mQ2vL7pzR", "Xk9mQ2vL7pzR");
    assert_clean("Security: WPA2-PSK (AES)");
    assert_clean("PSK: required for WPA2-Personal networks");
    // A bare `key` after the network's SSID on its line is the network's password.
    assert_secret("SSID: Office, key: Xk9mQ2vL7pzR", "Xk9mQ2vL7pzR");
    assert_secret("Guest Wi-Fi SSID CorpGuest / Key: blue-heron-42", "blue-heron-42");
    assert_clean("SSID: Office, key: see the label on the router");
    assert_clean("SSID: Office\nkey: value");
    assert_clean("key: Xk9mQ2vL7pzR");
}

#[test]
fn an_ampersand_inside_a_password_and_credentials_as_a_pair() {
    assert_secret("here's the admin password: Tr0ub4dor&3", "Tr0ub4dor&3");
    assert_eq!(redacted("?password=p4ss&w0rd&user=ada"), ["p4ss&w0rd"]);
    assert_secret("credentials: admin:Sup3rS3cret", "admin:Sup3rS3cret");
    assert_secret("Credentials: admin / P4ssw0rd!2024", "admin / P4ssw0rd!2024");
    assert_secret("creds=svc_app:Zq7Wn3Lp9", "svc_app:Zq7Wn3Lp9");
    assert_clean("Enter your credentials below.");
    assert_clean("credentials: see the vault");
}

#[test]
fn a_password_of_words_on_a_config_line_is_taken_to_the_lines_end() {
    assert_secret("db.password=my secret pass 1", "my secret pass 1");
    assert_secret("Password=Blue Whale 42!", "Blue Whale 42!");
    assert_secret("[db]\npassword = Kaffee und Kuchen 42\nport = 5432", "Kaffee und Kuchen 42");
    assert_secret("password = correct horse battery ; rotated monthly", "correct horse battery");
    assert_secret("password=Xk8mQ2pLz user=admin", "Xk8mQ2pLz");
    assert_secret("password=pässwörd1 ok", "pässwörd1");
}

#[test]
fn java_xml_properties() {
    assert_secret("<entry key=\"db.password\">Xk9mQ2vL7pz</entry>", "Xk9mQ2vL7pz");
    assert_secret("<entry key='api.token'>Xk9mQ2vL7pzAbCdEf</entry>", "Xk9mQ2vL7pzAbCdEf");
    assert_clean("<entry key=\"db.password\"></entry>");
    assert_clean("<entry key=\"db.password\">${DB_PASSWORD}</entry>");
}

#[test]
fn key_material_under_its_name() {
    let hex = chars(41, 32, HEX);
    let base64 = STANDARD.encode(chars(42, 24, BASE62));
    for (text, secret) in [
        (format!("KEK={hex}"), hex.as_str()),
        (format!("export MASTER_KEK=\"{base64}\""), base64.as_str()),
        (format!("kms:\n  kek: {base64}\n"), base64.as_str()),
        (format!("DEK_BASE64={base64}"), base64.as_str()),
        (format!("APP_SALT={hex}"), hex.as_str()),
        (format!("SALT={hex}"), hex.as_str()),
        (format!("password_salt: {hex}"), hex.as_str()),
        ("password_salt: Xk9mQ2vL7pz".to_owned(), "Xk9mQ2vL7pz"),
        (format!("{{\"passwordSalt\": \"{hex}\"}}"), hex.as_str()),
        (format!("PASSWORD_PEPPER={hex}"), hex.as_str()),
        ("define('AUTH_SALT', 'q]3{Lx<7$kP!9vZ');".to_owned(), "q]3{Lx<7$kP!9vZ"),
        // In a sentence, as a secret's value is.
        (format!("the KEK is {base64}"), base64.as_str()),
        (format!("Our password salt is now {hex}."), hex.as_str()),
    ] {
        assert_secret(&text, secret);
    }
}

#[test]
fn key_material_words_in_prose_and_recipes() {
    for text in [
        "salt and pepper",
        "Add salt=2 tablespoons and pepper to taste",
        "Salt: 1 tsp, Pepper: a pinch",
        "salt: kosher-flaked",
        "Salt Lake City: 40.76",
        "salt_rounds = 12",
        "SALT_LENGTH=16",
        "Kekse: 12 Stück",
        "the kek of the week",
        "DEK-Info: AES-128-CBC",
        "dek: A short summary under the headline",
        "basalt: 3.0 g/cm3",
        "SALT=${APP_SALT}",
        "kek: <generated>",
        "BYPASS=true",
        "compass: north",
        "PGPASSFILE=/home/ada/.pgpass",
        "The salt is kosher and the pepper is fresh.",
        "salt is 2 tablespoons",
        "Pepper is optional for 4 servings",
        "The DEK is rotated every 90 days.",
        "the salt for db01 is unique per user",
    ] {
        assert_clean(text);
    }
}

#[test]
fn a_pass_glued_to_what_it_opens() {
    for (text, secret) in [
        ("PGPASS=Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("PGPASS=hunter2", "hunter2"),
        ("export PGPASS='s3cr3t pw'", "s3cr3t pw"),
        ("DBPASS: Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("mysqlpass=Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
    ] {
        assert_secret(text, secret);
    }
    let keystore = "signing:\n  storepass: Xk9mQ2vL7pz\n  keypass: Qz7vLm2pX9\n";
    assert_eq!(redacted(keystore), ["Xk9mQ2vL7pz", "Qz7vLm2pX9"]);
}
