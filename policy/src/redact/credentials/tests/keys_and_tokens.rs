//! Private keys, JWTs and vendor tokens, each in every carrier, with their look-alikes.

use super::*;

#[test]
fn pem_private_keys_in_every_form() {
    for label in [
        "PRIVATE KEY",
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "DSA PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
    ] {
        for newline in ["\n", "\r\n", "\\n", "\\r\\n", "\\\\n"] {
            let key = pem(label, newline);
            let wiki = format!("Here is the key I used:{newline}{key}{newline}Please keep it safe.");
            assert_secret(&wiki, &key);
            let json = format!("{{\"type\": \"service_account\", \"private_key\": \"{key}\\n\", \"id\": 1}}");
            assert_secret(&json, &key);
        }
    }
}

#[test]
fn pem_legacy_encrypted_headers_and_pgp() {
    let key = pem("RSA PRIVATE KEY", "\n").replacen(
        "-----\n",
        "-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,9F2E1A63B5C0D7E4\n\n",
        1,
    );
    assert_secret(&format!("key.pem:\n{key}\n"), &key);
    let pgp = pem("PGP PRIVATE KEY BLOCK", "\n").replacen("-----\n", "-----\nVersion: GnuPG v2\n\n", 1);
    assert_secret(&format!("backup: {pgp}"), &pgp);
}

#[test]
fn pem_cut_off_key_is_redacted_to_the_end_of_its_body() {
    let key = pem("PRIVATE KEY", "\n");
    let cut = &key[..key.find("-----END").unwrap_or(key.len()) - 1];
    assert_secret(&format!("{cut}\n[truncated]"), cut);
}

#[test]
fn pem_placeholders_public_keys_and_certificates() {
    let placeholder = "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----";
    assert_look_alike(&format!("Paste it like this:\n{placeholder}\n"), placeholder);
    let yours = "-----BEGIN RSA PRIVATE KEY-----\n<your key here>\n-----END RSA PRIVATE KEY-----";
    assert_look_alike(yours, yours);
    for label in ["PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE", "CERTIFICATE REQUEST"] {
        let block = pem(label, "\n");
        assert_look_alike(&format!("server.crt:\n{block}\n"), &block);
    }
    assert_clean("-----BEGIN PRIVATE KEY----- is how the file starts");
    let ssh = format!("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{} ada@laptop", chars(3, 300, BASE62));
    assert_clean(&ssh);
}

#[test]
fn jwts() {
    let token = sample_jwt();
    assert_token_everywhere(&token);
    assert_secret(&format!("Authorization: Bearer {token}"), &token);
    assert_secret(&format!("https://app.example.com/cb#id_token={token}&state=x"), &token);
    let unsigned = format!(
        "{}.",
        &jwt(r#"{"alg":"none"}"#, r#"{"sub":"1"}"#).rsplit_once('.').map_or("", |(head, _)| head)
    );
    assert_secret(&format!("token {unsigned} sent"), &unsigned);
}

#[test]
fn not_jwts() {
    let no_alg = jwt(r#"{"typ":"JWT"}"#, r#"{"sub":"1"}"#);
    assert_clean(&format!("value {no_alg} here"));
    let not_object = jwt(r#"{"alg":"HS256"}"#, r#"[1,2]"#);
    assert_clean(&format!("value {not_object} here"));
    assert_clean("eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln is not one");
    assert_clean("prefix eyJub3QganNvbg.eyJ4IjoxfQ.c2ln");
    let jwe = format!("{}.{}.{}.{}", sample_jwt(), "aXY", "Y2lwaGVy", "dGFn");
    assert_clean(&format!("jwe {jwe} end"));
    let two_segments = sample_jwt().rsplit_once('.').map_or(String::new(), |(head, _)| head.to_owned());
    assert_clean(&format!("{two_segments}."));
}

#[test]
fn aws_access_key_ids_and_nearby_secrets() {
    for prefix in ["AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"] {
        assert_token_everywhere(&join(&[prefix, &chars(11, 16, UPPER32)]));
    }
    let id = join(&["AKIA", &chars(5, 16, UPPER32)]);
    let secret = chars(9, 40, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+");
    let csv = format!("User name,Access key ID,Secret access key\nci-bot,{id},{secret}\n");
    assert_eq!(redacted(&csv), [id.as_str(), secret.as_str()]);
    let json =
        format!("{{\"AccessKeyId\": \"{id}\", \"SecretAccessKey\": \"{secret}\", \"Expiration\": \"2030\"}}");
    assert_eq!(redacted(&json), [id.as_str(), secret.as_str()]);
    let ini = format!("[default]\naws_access_key_id = {id}\naws_secret_access_key = {secret}\n");
    assert_eq!(redacted(&ini), [id.as_str(), secret.as_str()]);
    assert_secret(&format!("export AWS_SECRET_ACCESS_KEY={secret}"), &secret);
    assert_secret(&format!("secret_key: \"{secret}\""), &secret);
}

#[test]
fn aws_examples_and_shas_are_left_alone() {
    let example_id = join(&["AKIA", "IOSFODNN7", "EXAMPLE"]);
    let example_secret = join(&["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCY", "EXAMPLEKEY"]);
    assert_look_alike_everywhere(&example_id);
    let ini = format!("aws_access_key_id = {example_id}\naws_secret_access_key = {example_secret}\n");
    assert_clean(&ini);
    assert_eq!(look_alikes(&ini), [example_id.as_str(), example_secret.as_str(), example_secret.as_str()]);
    assert_look_alike(&format!("AWS_SECRET_ACCESS_KEY={example_secret}"), &example_secret);
    let id = join(&["AKIA", &chars(5, 16, UPPER32)]);
    let sha = chars(4, 40, HEX);
    assert_secret(&format!("{id} deployed at commit {sha}"), &id);
    assert_clean(&format!("AKIA{} is too short", &chars(5, 12, UPPER32)));
    assert_clean(&format!("XAKIA{} inside a word", chars(5, 16, UPPER32)));
}

#[test]
fn github_tokens() {
    for prefix in ["ghp", "gho", "ghu", "ghs", "ghr"] {
        assert_token_everywhere(&github_token(prefix, 17));
    }
    let fine_grained = join(&["github", "_pat_", &chars(1, 22, BASE62), "_", &chars(2, 59, BASE62)]);
    assert_token_everywhere(&fine_grained);
    let installation = join(&["gh", "s_", "123456_", &sample_jwt()]);
    assert_token_everywhere(&installation);
    let refresh = join(&["gh", "r_", &chars(3, 76, BASE62)]);
    assert_token_everywhere(&refresh);
}

#[test]
fn github_look_alikes() {
    let good = github_token("ghp", 23);
    let mut bad = good.clone().into_bytes();
    let last = bad.len() - 1;
    bad[last] = if bad[last] == b'A' { b'B' } else { b'A' };
    let bad = String::from_utf8(bad).unwrap_or_default();
    assert_look_alike_everywhere(&bad);
    assert_look_alike_everywhere(&join(&["gh", "p_", &"x".repeat(36)]));
    assert_look_alike(&format!("GITHUB_TOKEN={bad}"), &bad);
    assert_look_alike_everywhere(&join(&["github", "_pat_", "EXAMPLE", &"A".repeat(15), "_", "EXAMPLE"]));
    assert_clean("ghp_short and gho_ are prefixes");
}

#[test]
fn gitlab_tokens() {
    for prefix in [
        "glpat-", "gloas-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "glsoat-",
        "glffct-",
    ] {
        assert_token_everywhere(&join(&[prefix, &chars(31, 20, BASE64URL).replace('-', "k")]));
    }
    let routable = join(&[
        "gl",
        "pat-",
        &chars(8, 37, BASE62),
        ".01.",
        &chars(9, 9, b"0123456789abcdefghijklmnopqrstuvwxyz"),
    ]);
    assert_token_everywhere(&routable);
    assert_token_everywhere(&join(&["glrt-", "t1_", &chars(12, 24, BASE62)]));
    assert_token_everywhere(&join(&["GR1348941", &chars(13, 20, BASE62)]));
    assert_look_alike_everywhere(&join(&["gl", "pat-", &"x".repeat(20)]));
    assert_clean("glpat-short");
}

#[test]
fn slack_tokens_and_webhooks() {
    let digits = b"0123456789";
    for prefix in ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"] {
        let token =
            join(&[prefix, &chars(1, 12, digits), "-", &chars(2, 13, digits), "-", &chars(3, 24, BASE62)]);
        assert_token_everywhere(&token);
    }
    assert_token_everywhere(&join(&["xoxe", ".xoxp-1-", &chars(4, 140, BASE62)]));
    assert_token_everywhere(&join(&[
        "xapp",
        "-1-A",
        &chars(5, 10, digits),
        "-",
        &chars(6, 13, digits),
        "-",
        &chars(7, 64, HEX),
    ]));
    assert_look_alike_everywhere(&join(&["xox", "b-not-a-real-token-this-will-not-work"]));
    let path =
        join(&["T", &chars(8, 10, UPPER32), "/B", &chars(9, 10, UPPER32), "/", &chars(10, 24, BASE62)]);
    let hook = format!("https://hooks.slack.com/services/{path}");
    assert_secret(&format!("SLACK_WEBHOOK_URL={hook}"), &path);
    assert_secret(&format!("{{\"webhook\": \"{hook}\"}}"), &path);
    let doc = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX";
    assert_look_alike(doc, "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX");
}

#[test]
fn stripe_keys() {
    for prefix in ["sk_live_", "sk_test_", "rk_live_", "rk_test_"] {
        assert_token_everywhere(&join(&[&prefix[..3], &prefix[3..], &chars(40, 24, BASE62)]));
        assert_token_everywhere(&join(&[&prefix[..3], &prefix[3..], &chars(41, 99, BASE62)]));
    }
    assert_token_everywhere(&join(&["wh", "sec_", &chars(42, 32, BASE62)]));
    assert_look_alike_everywhere(&join(&["pk", "_live_", &chars(43, 24, BASE62)]));
    for doc in ["4eC39HqLyjWDarjtT1zdp7dc", "BQokikJOvBiI2HlWgH4olfQ2"] {
        assert_look_alike_everywhere(&join(&["sk", "_test_", doc]));
    }
    assert_look_alike_everywhere(&join(&["sk", "_live_", &"x".repeat(24)]));
    assert_clean("sk_live_**** and sk_test_…1234 are masked");
}

#[test]
fn google_keys() {
    assert_token_everywhere(&join(&["AI", "za", &chars(50, 35, BASE64URL)]));
    assert_token_everywhere(&join(&["GOC", "SPX-", &chars(51, 28, BASE64URL)]));
    assert_token_everywhere(&join(&["ya", "29.", &chars(52, 120, BASE64URL)]));
    assert_token_everywhere(&join(&["1//0", &chars(53, 60, BASE64URL)]));
    assert_clean(&format!("AIza{} is too short", chars(50, 30, BASE62)));
}

#[test]
fn other_vendors() {
    assert_token_everywhere(&join(&["np", "m_", &chars(60, 36, BASE62)]));
    assert_token_everywhere(&join(&["py", "pi-AgEIcHlwaS5vcmc", &chars(61, 120, BASE64URL)]));
    assert_token_everywhere(&join(&["S", "G.", &chars(62, 22, BASE64URL), ".", &chars(63, 43, BASE64URL)]));
    assert_token_everywhere(&join(&["sk-", "proj-", &chars(64, 100, BASE64URL)]));
    assert_token_everywhere(&join(&["sk-", "ant-api03-", &chars(65, 90, BASE64URL)]));
    assert_token_everywhere(&join(&["sk-", &chars(66, 20, BASE62), "T3Blbk", "FJ", &chars(67, 20, BASE62)]));
    assert_token_everywhere(&join(&["h", "f_", &chars(68, 34, BASE62)]));
    assert_token_everywhere(&join(&["dop", "_v1_", &chars(69, 64, HEX)]));
    assert_token_everywhere(&join(&["shp", "at_", &chars(70, 32, HEX)]));
}

#[test]
fn aws_secret_keys_shaped_like_paths_or_shas() {
    let secret = join(&["/D5bGGW0ElXO6HxPOU7A8w", "/t/19/2zJYhnDz88v5"]);
    assert_secret(&format!("aws_secret_access_key = {secret}"), &secret);
    assert_clean(&format!("aws_secret_access_key = {}", chars(6, 40, HEX)));
    assert_secret(&format!("token = {}", chars(6, 40, HEX)), &chars(6, 40, HEX));
}

#[test]
fn a_cut_off_block_does_not_shield_what_follows() {
    let certificate = pem("CERTIFICATE", "\n");
    let cut = &certificate[..80];
    let text = format!("{cut}\n\nDB_PASSWORD=Xy7pQ2m\n\n{certificate}\n");
    assert_eq!(redacted(&text), ["Xy7pQ2m"]);
    let prose =
        "-----BEGIN CERTIFICATE----- marks the start; then password=Xy7pQ2m; -----END CERTIFICATE-----";
    assert_eq!(redacted(prose), ["Xy7pQ2m"]);
    let elided = pem("RSA PRIVATE KEY", "\n").replacen("\n", "\n...\n", 3);
    assert_secret(&elided, &elided);
}

#[test]
fn a_run_inside_a_random_token_does_not_make_it_a_placeholder() {
    // Slack's team and user ids are digits, where six in a row that count up or repeat turn up
    // in a few tokens in ten thousand; a long key may hold `xxxx` or `abcdef`. Each of these is
    // a live token, and each is redacted.
    let slack = join(&["xox", "b-", "2345678901", "-", "1000000456789", "-", &chars(3, 24, BASE62)]);
    assert_token_everywhere(&slack);
    let openai = join(&["sk-", "proj-", &chars(20, 60, BASE64URL), "xxxx", &chars(21, 60, BASE64URL)]);
    assert_token_everywhere(&openai);
    assert_token_everywhere(&join(&[
        "sk_",
        "live_",
        &chars(22, 10, BASE62),
        "abcdef",
        &chars(23, 10, BASE62),
    ]));
    // A body that is mostly such runs is still a placeholder.
    for placeholder in [
        join(&["xox", "b-", "1234567890", "-", "1234567890123", "-", "abcdefghijklmnopqrstuvwx"]),
        join(&["sk_", "live_", "1234567890abcdefghijklmn"]),
        join(&["sk-", "proj-", &"x".repeat(48)]),
        join(&["hf_", "xxxxxxxxxx", &chars(24, 6, BASE62), "XXXXXXXXXXXXXXXXXX"]),
        join(&["npm_", "9876543210", "zyxwvutsrq", &chars(25, 16, BASE62)]),
    ] {
        assert_look_alike_everywhere(&placeholder);
    }
}

#[test]
fn age_identities() {
    let key = join(&["AGE-SECRET-", "KEY-1", &chars(26, 58, b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")]);
    assert_token_everywhere(&key);
    assert_look_alike_everywhere(&join(&["AGE-SECRET-", "KEY-1", &"Q".repeat(58)]));
    // Another length is no age identity.
    assert_clean(&join(&["AGE-SECRET-", "KEY-1", &chars(27, 20, b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")]));
}
