//! What must be left intact: placeholders, masks, references, prose, hashes and ids.

use super::*;

#[test]
fn masked_and_placeholder_values() {
    for value in [
        "***",
        "********",
        "<redacted>",
        "[REDACTED]",
        "xxxx",
        "XXXXXXXX",
        "...",
        "${DB_PASSWORD}",
        "$DB_PASSWORD",
        "{{ password }}",
        "{{password}}",
        "%s",
        "<password>",
        "null",
        "none",
        "None",
        "NULL",
        "\"\"",
        "''",
        "changeme",
        "[credential 1]",
        "[credential 12]",
        "<your-password>",
        "your_password_here",
        "YOUR_API_KEY",
        "${{ secrets.TOKEN }}",
        "%(password)s",
        "true",
        "false",
        "••••••",
        "…",
        "example",
        "<secret>",
        "$(cat /run/secrets/db)",
        "#{password}",
        "%DB_PASSWORD%",
        "${env:DB_PASSWORD}",
        "undefined",
        "/run/secrets/db_password",
        "~/.config/app/token",
    ] {
        for syntax in [
            "password={}",
            "password: {}",
            "\"password\": \"{}\"",
            "PASSWORD=\"{}\"",
            "token={}",
            "api_key: {}",
        ] {
            assert_clean(&syntax.replace("{}", value));
        }
    }
    assert_clean(r#"{"password": null, "token": ""}"#);
    assert_clean("password=\n");
    assert_clean("password:\n  - required\n");
}

#[test]
fn code_references_are_not_values() {
    for text in [
        "conn = connect(user=user, password=password)",
        "password = os.environ[\"DB_PASSWORD\"]",
        "token = os.getenv(\"GITHUB_TOKEN\")",
        "password: process.env.DB_PASSWORD",
        "api_key=settings.API_KEY",
        "client(api_key=api_key, timeout=3)",
        "password = self.password",
        "password=getpass()",
        "$password = $_POST['password'];",
        "if password == user_password:",
        "export PASSWORD=$(vault read -field=pw secret/db)",
        "password: ${{ secrets.DB_PASSWORD }}",
    ] {
        assert_clean(text);
    }
}

#[test]
fn prose_about_passwords() {
    for text in [
        "Forgot your password? Reset it here.",
        "Password: at least 12 characters, one digit and one symbol.",
        "password: must contain a number",
        "The secret: keep it simple and ship often.",
        "Your API key: see the dashboard for details.",
        "Token: a short string that identifies a session.",
        "Use the --password option to pass it on the command line.",
        "Set the token = the value you copied earlier.",
        "Password:\nType it twice.",
        "Passwords, tokens and keys are secrets; store them in a vault.",
        "The key: value pairs are separated by commas.",
        "max_tokens: 1024\ntoken_type: bearer\nprompt_tokens=12",
        "Password reset tokens expire after 15 minutes (see token_ttl=900).",
        "The author passed the keyboard to the monkey.",
        "password_min_length = 12\npassword_policy: strict",
        "PWD=/home/ada/project\nOLDPWD=/home/ada",
        "secret: true\npassword: false\ntoken: null",
        "page_token=CAUQAA&max_results=10",
        "next_token: eyJvZmZzZXQiOjEwfQ",
        "pass: 3\nfail: 0",
    ] {
        assert_clean(text);
    }
}

#[test]
fn hashes_ids_and_blobs_without_context() {
    let sha1 = chars(1, 40, HEX);
    let sha256 = chars(2, 64, HEX);
    let blob = chars(3, 120, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
    for text in [
        format!("commit {sha1}\nAuthor: Ada <ada@example.com>"),
        format!("sha256:{sha256}"),
        format!("Checksum {sha256} verified."),
        "request id 123e4567-e89b-12d3-a456-426614174000 failed".to_owned(),
        format!("data: {blob}"),
        format!("{{\"etag\": \"{sha1}\", \"id\": \"{}\"}}", chars(4, 40, BASE62)),
        "pk_live_ is the prefix of publishable keys".to_owned(),
        "Visit https://docs.example.com/auth/tokens?lang=en to learn more.".to_owned(),
        "key=value pairs like color=blue".to_owned(),
    ] {
        assert_clean(&text);
    }
}

#[test]
fn credentials_inside_findings_are_not_split() {
    // A cleaned text run through again stays clean.
    assert_clean("password=[credential 1] and Authorization: Bearer [credential 2]");
    assert_clean("https://ada:[credential 1]@db/app");
}

#[test]
fn status_words_and_numbers_in_prose() {
    for text in [
        "Password: expired",
        "password: reset",
        "Password: unchanged",
        "password: 8-64 characters long",
        "Password: 12 characters minimum",
        "token: Bearer",
        "secret: (hidden)",
        "password: [hidden]",
        "Password: N/A",
        "password: default",
        "POSTGRES_PASSWORD: example",
        "Password=myPassword;",
        "Server=db;Database=app;User Id=myUsername;Password=myPassword;",
    ] {
        assert_clean(text);
    }
    assert_secret("password: hunter2 was leaked yesterday", "hunter2");
    assert_secret("\"API Key\": \"8f3a9c2e71b4d605\"", "8f3a9c2e71b4d605");
}

#[test]
fn pem_bodies_that_are_placeholders() {
    for body in
        ["REDACTED", "[REDACTED]", "MIIEvQIBADANBg...", &"x".repeat(64), &"A".repeat(64), "<private key>"]
    {
        let block = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----");
        assert_look_alike(&block, &block);
    }
    // A body of base64 characters one short of a full group still counts.
    let key = pem("PRIVATE KEY", "\n").replacen("\n-----END", "A\n-----END", 1);
    assert_secret(&key, &key);
}

proptest::proptest! {
    #[test]
    fn never_panics_and_keeps_char_boundaries(
        parts in proptest::collection::vec(proptest::sample::select(FRAGMENTS.to_vec()), 0..24),
        noise in "\\PC{0,40}",
    ) {
        let text = format!("{}{noise}{}", parts.concat(), parts.iter().rev().copied().collect::<String>());
        let _ = findings(&text);
        let _ = findings(&noise);
    }
}

/// Pieces that steer the recognizers into their edge cases.
const FRAGMENTS: [&str; 40] = [
    "password",
    "=",
    ":",
    " ",
    "\"",
    "'",
    "\\",
    "\\n",
    "\\\"",
    "<",
    ">",
    "</password>",
    "://",
    "@",
    "-----BEGIN ",
    "PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "eyJ",
    ".",
    "AKIA",
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "sk_live_",
    "AIza",
    "Authorization",
    "Bearer ",
    "token",
    "é",
    "€",
    "ключ",
    "[",
    "]",
    "{{",
    "$",
    "--",
    "curl -u ",
    "login a password ",
    "name: ",
];

#[test]
fn messages_and_code_are_not_values() {
    for text in [
        "{\"password\": \"This field is required.\"}",
        "{\"password\": [\"Ensure this field has at least 8 characters.\"]}",
        "{\"token\": \"Token is invalid or expired\"}",
        "token = tokens[i]",
        "password = get_password(user)",
        "secret = secrets.token_hex(16)",
    ] {
        assert_clean(text);
    }
    assert_secret("{\"passphrase\": \"correct horse battery staple\"}", "correct horse battery staple");
    assert_secret("password=\"abc(123)\"", "abc(123)");
}

#[test]
fn near_placeholders_that_are_secrets() {
    for value in ["gothere42", "Pa55word)", "wherethere", "example-less-9x", "abc(123"] {
        let text = format!("password=\"{value}\"");
        let expected: Vec<&str> = if value.contains("example") { vec![] } else { vec![value] };
        assert_eq!(redacted(&text), expected, "{text}");
    }
}
