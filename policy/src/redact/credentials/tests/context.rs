//! Authorization headers and URLs with credentials.

use super::*;

#[test]
fn authorization_headers_in_every_carrier() {
    let token = "mF_9.B5f-4.1JqM";
    let basic = "YWRhOmh1bnRlcjI=";
    let cases = [
        format!("Authorization: Bearer {token}"),
        format!("authorization: bearer {token}"),
        format!(
            "GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer {token}\r\nAccept: */*\r\n"
        ),
        format!("curl -H 'Authorization: Bearer {token}' https://api.example.com/v1/me"),
        format!("curl -H \"Authorization: Bearer {token}\" -H \"Accept: application/json\""),
        format!("{{\"headers\": {{\"Authorization\": \"Bearer {token}\", \"Accept\": \"*/*\"}}}}"),
        format!(r#"{{"output":"> GET / HTTP/1.1\n> Authorization: Bearer {token}\n> Host: x\n"}}"#),
        format!("headers:\n  Authorization: \"Bearer {token}\"\n"),
        format!("2024-05-01 INFO request headers={{Authorization=Bearer {token}, Accept=*/*}}"),
        format!("Proxy-Authorization: Bearer {token}"),
        format!("X-Authorization: Token {token}"),
        format!("Authorization: Bearer {token} was rejected"),
    ];
    for text in &cases {
        assert_secret(text, token);
    }
    assert_secret(&format!("Authorization: Basic {basic}"), basic);
    assert_secret(&format!("Proxy-Authorization: Basic {basic}\r\n"), basic);
    assert_secret("Authorization: token 0123456789abcdef0123", "0123456789abcdef0123");
    assert_secret(
        "Authorization: Bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    );
    let digest = r#"username="ada", realm="api", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", response="6629fae49393a05397450978507c4ef1""#;
    assert_secret(&format!("Authorization: Digest {digest}\n"), digest);
    assert_secret("Authorization: 8c6f2e1d9b7a4c3e", "8c6f2e1d9b7a4c3e");
}

#[test]
fn lone_bearer_tokens() {
    assert_secret("use Bearer a1b2c3d4e5f6g7h8i9j0 for the call", "a1b2c3d4e5f6g7h8i9j0");
    assert_clean("A bearer token is sent in the Authorization header.");
    assert_clean("Bearer tokens expire after an hour.");
}

#[test]
fn header_placeholders() {
    for value in [
        "Bearer <token>",
        "Bearer $TOKEN",
        "Bearer ${API_TOKEN}",
        "Bearer YOUR_TOKEN",
        "Bearer ***",
        "Basic [credential 1]",
        "Bearer",
        "required",
        "Bearer {{ token }}",
    ] {
        assert_clean(&format!("Authorization: {value}"));
    }
    assert_clean("The Authorization header carries the credentials.");
    assert_clean("Send an Authorization: header with each request.");
}

#[test]
fn url_passwords() {
    let cases = [
        ("https://ada:s3cr%40t@host.example.com/x", "s3cr%40t"),
        ("postgres://app:Xy7pQ2m@db.internal:5432/orders", "Xy7pQ2m"),
        ("mongodb+srv://admin:p@ss:w0rd@cluster0.mongodb.net/?retryWrites=true", "p@ss:w0rd"),
        ("redis://:Xy7pQ2m@cache:6379/0", "Xy7pQ2m"),
        ("DATABASE_URL=mysql://root:Xy7pQ2m@127.0.0.1/app", "Xy7pQ2m"),
        ("{\"url\": \"amqp://guest:Xy7pQ2m@rabbit/\"}", "Xy7pQ2m"),
        ("Cloning https://oauth2:glpat-abc123@gitlab.example.com/group/repo.git failed", "glpat-abc123"),
        ("ftp://user:hunter2@[2001:db8::1]/file", "hunter2"),
    ];
    for (text, secret) in cases {
        assert_secret(text, secret);
    }
    let token = github_token("ghs", 5);
    assert_secret(
        &format!("git remote set-url origin https://x-access-token:{token}@github.com/org/repo.git"),
        &token,
    );
}

#[test]
fn urls_without_passwords() {
    for text in [
        "https://ci-bot@host.example.com/repo.git",
        "git@github.com:org/repo.git",
        "ssh://git@github.com:22/org/repo.git",
        "https://example.com/path?user=ada:x@y",
        "https://user:${DB_PASSWORD}@db/app",
        "https://user:****@db/app",
        "https://user:password@host/",
        "postgres://user:@db/app",
        "See https://en.wikipedia.org/wiki/Password for the history of passwords.",
        "http://localhost:8080/login",
        "mailto:ada@example.com",
    ] {
        assert_clean(text);
    }
}

#[test]
fn discord_webhooks() {
    let token = chars(80, 68, BASE64URL);
    let url = format!("https://discord.com/api/webhooks/123456789012345678/{token}");
    assert_secret(&format!("DISCORD_WEBHOOK={url}"), &token);
}

/// A GUID of pseudo-random hex.
fn guid(seed: u32) -> String {
    let hex = chars(seed, 32, HEX);
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

#[test]
fn teams_incoming_webhooks() {
    let route = format!("{}@{}", guid(81), guid(82));
    let secret = format!("{}/{}", chars(83, 32, HEX), guid(84));
    let url = format!("https://contoso.webhook.office.com/webhookb2/{route}/IncomingWebhook/{secret}");
    assert_secret(&format!("TEAMS_WEBHOOK={url}"), &secret);
    assert_secret(&format!("POST {url} returned 200"), &secret);
    // Newer URLs carry a signature part, the older host writes `webhook`.
    let signed = format!("{secret}/V2{}", chars(85, 44, BASE64URL));
    let url = format!("https://contoso.webhook.office.com/webhookb2/{route}/IncomingWebhook/{signed}");
    assert_secret(&format!("\"webhook\": \"{url}\""), &signed);
    let url = format!("https://outlook.office.com/webhook/{route}/IncomingWebhook/{secret}");
    assert_secret(&url, &secret);
    // Documentation's zeros, and other hosts and paths.
    let zeros = "00000000-0000-0000-0000-000000000000";
    let doc = format!(
        "https://contoso.webhook.office.com/webhookb2/{zeros}@{zeros}/IncomingWebhook/{}/{zeros}",
        "0".repeat(32)
    );
    assert_clean(&doc);
    assert_clean(&format!("https://example.com/webhookb2/{route}/IncomingWebhook/{secret}"));
    assert_clean("https://contoso.webhook.office.com/webhookb2/");
    assert_clean(&format!("https://contoso.webhook.office.com/webhookb2/IncomingWebhook/{secret}"));
    assert_clean("see https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/");
}

#[test]
fn curl_users_and_netrc() {
    assert_secret("curl -u ada:Xy7pQ2m https://api.example.com/v1/me", "Xy7pQ2m");
    assert_secret("curl -s --user 'ci-bot:p4ss w0rd' -X POST https://x", "p4ss w0rd");
    assert_secret("$ curl --user=ada:hunter2 https://x", "hunter2");
    assert_clean("curl -u ada https://x");
    assert_clean("curl -u ada:$PASSWORD https://x");
    assert_clean("git push -u origin main:main");
    assert_secret(
        "machine api.heroku.com\n  login ada@example.com\n  password 8f3a9c2e-71b4\n",
        "8f3a9c2e-71b4",
    );
    assert_secret("machine github.com login ada password Xy7pQ2m", "Xy7pQ2m");
    assert_clean("Enter your login name and password below.");
}

#[test]
fn header_prose() {
    assert_clean("Authorization: Bearer tokens must be sent over TLS.");
    assert_clean("Authorization: see the section on tokens.");
    assert_clean("The \"Authorization\": header is required.");
}

#[test]
fn vendor_tokens_as_url_user_names() {
    let token = github_token("ghp", 9);
    assert_secret(&format!("git clone https://{token}@github.com/org/repo.git"), &token);
    let gitlab = join(&["gl", "pat-", &chars(3, 20, BASE62)]);
    assert_secret(&format!("https://{gitlab}@gitlab.com/group/repo.git"), &gitlab);
}

#[test]
fn hand_written_connection_strings() {
    assert_secret("DATABASE_URL=postgres://app:s!mS0te4#9Sn?x@db-7.internal:5432/app", "s!mS0te4#9Sn?x");
    assert_clean("https://example.com/?email=a:b@c.example.com");
    assert_clean("https://example.com/#section:x@y");
}

#[test]
fn signed_urls_lose_their_signature() {
    // Whoever holds a signed URL holds its access until it expires.
    let sas = "Zk3%2BqR8sT2vW5xY9zA4bC6dE7fG8hI9jK0lM1nO2pQ3%3D";
    let blob = format!(
        "download: https://acct.blob.core.windows.net/c/report.pdf?sv=2022-11-02&sp=r&se=2026-12-01T00:00:00Z&spr=https&sig={sas}#page=2 (expires Monday)"
    );
    assert_secret(&blob, sas);
    let signature = chars(81, 64, HEX);
    let s3 = format!(
        "GET https://bucket.s3.amazonaws.com/k.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261127T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={signature} 200"
    );
    assert_secret(&s3, &signature);
    let google =
        format!("<a href=\"https://storage.googleapis.com/b/o?x-goog-signature={signature}\">file</a>");
    assert_secret(&google, &signature);
    let cloudfront = chars(82, 40, BASE64URL);
    assert_secret(
        &format!(
            "https://d111.cloudfront.net/v.mp4?Expires=1767225600;Signature={cloudfront};Key-Pair-Id=K2"
        ),
        &cloudfront,
    );
    // A short or templated value, a parameter that only ends in `sig`, and a fragment are not
    // signatures.
    for text in [
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=abc",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={signature}",
        "https://example.com/search?nosig=0123456789abcdef0123",
        "https://example.com/page#sig=0123456789abcdef0123",
    ] {
        assert_clean(text);
    }
}

#[test]
fn session_cookies_in_every_header_form() {
    let session = chars(83, 32, HEX);
    let signed = join(&["s%3A", &chars(84, 24, BASE64URL), ".", &chars(85, 27, BASE62)]);
    assert_eq!(
        redacted(&format!("Cookie: theme=dark; sessionid={session}; lang=en-US\r\nAccept: */*")),
        [session.as_str()]
    );
    assert_secret(&format!("curl -H 'Cookie: connect.sid={signed}' https://intranet/x"), &signed);
    assert_secret(&format!("Set-Cookie: JSESSIONID={session}; Path=/; HttpOnly; Max-Age=3600"), &session);
    assert_secret(&format!("{{\"Cookie\": \"PHPSESSID={session}\"}}"), &session);
    assert_secret(&format!(r#"{{"log": "headers: {{\"cookie\": \"remember_me={session}\"}}"}}"#), &session);
    // Any long random value counts, whatever its name; short session ids do too.
    let random = chars(86, 20, BASE62);
    assert_secret(&format!("cookie: prefs_v2={random}; theme=dark"), &random);
    assert_secret("Cookie: sid=Zx9Qw8Er", "Zx9Qw8Er");
    // Preferences, consent, placeholders and prose stay.
    for text in [
        "Cookie: theme=dark; lang=en-US; consent=true; tz=UTC",
        "Cookie: sessionid=<your session id>",
        "Set-Cookie: sessionid=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
        "Fortune cookie: you will be happy",
        "The cookie: it lasts a year.",
    ] {
        assert_clean(text);
    }
}

#[test]
fn prefilled_password_fields_of_html() {
    let cases = [
        ("<input type=\"password\" name=\"pw\" value=\"Sup3rS3cret!\">", "Sup3rS3cret!"),
        ("<input name='pin' type=password value='Zx9!kk2Lm'>", "Zx9!kk2Lm"),
        ("<INPUT VALUE=\"hunter22\" TYPE=\"PASSWORD\" NAME=\"j_password\">", "hunter22"),
        ("<input autocomplete=\"current-password\" value=\"Kq8zT2mLx9\" id=\"p\">", "Kq8zT2mLx9"),
        ("{\"html\": \"<input type=\\\"password\\\" value=\\\"S3cr3tV4l\\\">\"}", "S3cr3tV4l"),
    ];
    for (text, password) in cases {
        assert_secret(text, password);
    }
    for text in [
        "<input type=\"password\" name=\"pw\" value=\"\">",
        "<input type=\"password\" name=\"pw\" placeholder=\"Password\">",
        "<input type=\"text\" name=\"user\" value=\"ada\"> <input type=\"password\" name=\"pw\">",
        "<label>Password</label> <input type=\"password\" value=\"{{ pw }}\">",
        "Set type=password on the field.",
    ] {
        assert_clean(text);
    }
}

#[test]
fn session_ids_in_urls() {
    assert_secret(
        "https://intranet.corp/app;jsessionid=8F3A2B1C9D7E6F5A4B3C2D1E0F9A8B7C?page=2",
        "8F3A2B1C9D7E6F5A4B3C2D1E0F9A8B7C",
    );
    assert_secret(
        "https://shop.corp/cart?PHPSESSID=k9s8d7f6g5h4j3k2l1m0n9b8v7",
        "k9s8d7f6g5h4j3k2l1m0n9b8v7",
    );
    assert_secret("see https://a.corp/x?ASPSESSIONIDQASDT=KJHGFDSAQWERTYUI&y=1", "KJHGFDSAQWERTYUI");
    assert_clean("https://x.corp/a?side=leftcolumn&sid=abc");
    assert_clean("https://x.corp/a;v=1/b?q=1");
}

#[test]
fn parameters_inside_a_urls_authority_and_placeholders_already_there() {
    assert_secret("jdbc:sqlserver://sql01:1433;databaseName=prod;user=sa;password=Qw3rty!9z;", "Qw3rty!9z");
    assert_clean("the [credential 1] and [credential 2] are in the vault");
    assert_clean("https://ada:[credential 1]@db/app");
}
