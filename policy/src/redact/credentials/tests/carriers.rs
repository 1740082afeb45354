//! Whole documents holding several credentials: every secret found, nothing else touched.

use super::*;

#[test]
fn env_file() {
    let github = github_token("ghp", 1);
    let stripe = join(&["sk", "_live_", &chars(2, 24, BASE62)]);
    let text = format!(
        "# production\nAPP_ENV=production\nDATABASE_URL=postgres://app:Xy7pQ2m@db:5432/app\n\
         GITHUB_TOKEN={github}\nSTRIPE_SECRET_KEY={stripe}\nSTRIPE_PUBLISHABLE_KEY=pk_live_{}\n\
         SMTP_PASS='m41l p4ss'\nLOG_LEVEL=info\nSESSION_SECRET=\n",
        chars(3, 24, BASE62)
    );
    assert_eq!(redacted(&text), ["Xy7pQ2m", github.as_str(), stripe.as_str(), "m41l p4ss"]);
}

#[test]
fn yaml_config() {
    let slack = join(&[
        "xox",
        "b-",
        &chars(4, 12, b"0123456789"),
        "-",
        &chars(5, 13, b"0123456789"),
        "-",
        &chars(6, 24, BASE62),
    ]);
    let text = format!(
        "server:\n  port: 8080\n  tls: true\ndatabase:\n  user: app\n  password: \"p4ss word\"\n\
         slack:\n  token: {slack}\n  channel: \"#ops\"\nauth:\n  enabled: true\n  jwt_secret: 'Zm9vYmFyYmF6'\n"
    );
    assert_eq!(redacted(&text), ["p4ss word", slack.as_str(), "Zm9vYmFyYmF6"]);
}

#[test]
fn json_tool_result() {
    let jwt = sample_jwt();
    let key = pem("RSA PRIVATE KEY", "\\n");
    let inner = format!(
        "HTTP/1.1 200 OK\\nContent-Type: application/json\\n\\n{{\\\"access_token\\\":\\\"{jwt}\\\",\\\"token_type\\\":\\\"Bearer\\\",\\\"expires_in\\\":3600}}"
    );
    let text = format!("{{\"tool\": \"http\", \"status\": 200, \"body\": \"{inner}\", \"key\": \"{key}\"}}");
    assert_eq!(redacted(&text), [jwt.as_str(), key.as_str()]);
}

#[test]
fn log_lines() {
    let aws = join(&["AKIA", &chars(7, 16, UPPER32)]);
    let text = format!(
        "2024-05-01T12:00:00Z INFO  http: GET /v1/items?api_key=9d8c7b6a5f4e&page=2 200 12ms\n\
         2024-05-01T12:00:01Z DEBUG auth: user=ada password=Xy7pQ2m result=ok\n\
         2024-05-01T12:00:02Z WARN  aws: using key {aws} for bucket logs\n\
         2024-05-01T12:00:03Z INFO  author=ada tokens=1024 passed=true\n"
    );
    assert_eq!(redacted(&text), ["9d8c7b6a5f4e", "Xy7pQ2m", aws.as_str()]);
}

#[test]
fn wiki_paragraph() {
    let google = join(&["AI", "za", &chars(8, 35, BASE64URL)]);
    let text = format!(
        "## Setup\n\nAsk the platform team for the staging credentials. The Maps key is {google} and the \
         admin console uses password=\"St4ging!2024\". Never paste the production password: ask for it in person. \
         The password must be at least 12 characters long."
    );
    assert_eq!(redacted(&text), [google.as_str(), "St4ging!2024"]);
}

#[test]
fn ini_and_toml() {
    let ini = "[client]\nuser = backup\npassword = Xy7pQ2m\nhost = db\n\n[mysqldump]\nquick\n";
    assert_eq!(redacted(ini), ["Xy7pQ2m"]);
    let toml = "[auth]\nclient_id = \"toolgate\"\nclient_secret = \"c2VjcmV0LXZhbHVl\"\nissuer = \"https://id.example.com\"\n";
    assert_eq!(redacted(toml), ["c2VjcmV0LXZhbHVl"]);
}

#[test]
fn offsets_survive_non_ascii_text() {
    let text = "Grüße — das Passwort ist password=Sü߀pass1 und der Schlüssel api_key=ключ12345.";
    assert_eq!(redacted(text), ["Sü߀pass1", "ключ12345"]);
}
