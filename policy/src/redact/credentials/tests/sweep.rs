//! A sweep: thousands of generated secrets in generated carriers must each be redacted over
//! exactly their span, and masked values and vendor look-alikes in the same carriers never.

use super::*;

/// Characters of generated passwords: letters, digits and the symbols a bare value may hold.
const PASSWORD: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!@#$%^*_+-=~?/:";

/// Makes a token from a seed.
type MakeToken = Box<dyn Fn(u32) -> String>;

/// Makes a line and the secret in it from a seed.
type MakeLine = Box<dyn Fn(u32) -> (String, String)>;

fn password(seed: u32) -> String {
    let length = 8 + (seed % 17) as usize;
    let mut value = chars(seed, length, PASSWORD);
    // A generated password has a letter and a digit, as password rules require.
    value.push_str(&chars(seed + 1, 1, b"0123456789"));
    value.insert_str(0, &chars(seed + 2, 1, b"abcdefghijklmnopqrstuvwxyz"));
    value
}

fn carriers(seed: u32, line: &str) -> String {
    let json_line = line.replace('\\', "\\\\").replace('"', "\\\"");
    match seed % 6 {
        0 => format!("During the migration the team noted {line} in the runbook, then moved on."),
        1 => format!("2024-05-01T12:00:0{}Z INFO worker: {line} status=ok", seed % 10),
        2 => format!("# settings\nhost: db\n{line}\nport: 5432\n"),
        3 => format!("[section]\nname = app\n{line}\n"),
        4 => format!("{{\"stdout\": \"starting\\n{json_line}\\ndone\\n\", \"code\": 0}}"),
        _ => format!("APP_ENV=prod\n{line}\nLOG=info\n"),
    }
}

#[test]
fn sweep() {
    let syntaxes = [
        "{k}={v}",
        "{k}: {v}",
        "{k} = \"{v}\"",
        "\"{k}\": \"{v}\"",
        "{K}='{v}'",
        "--{k} {v}",
        "<{k}>{v}</{k}>",
    ];
    let keys = [
        "password",
        "db_password",
        "API_KEY",
        "client_secret",
        "access_token",
        "secret",
        "SMTP_PASS",
        "apiKey",
    ];
    let mut misses: Vec<String> = Vec::new();
    let mut total = 0;
    for seed in 0..4000u32 {
        let value = password(seed);
        let key = keys[(seed as usize / 7) % keys.len()];
        let syntax = syntaxes[seed as usize % syntaxes.len()];
        let line =
            syntax.replace("{k}", key).replace("{K}", &key.to_ascii_uppercase()).replace("{v}", &value);
        let text = carriers(seed / 3, &line);
        let secret = if text.starts_with("{\"stdout") && syntax.contains('"') {
            value.replace('\\', "\\\\")
        } else {
            value.clone()
        };
        total += 1;
        if redacted(&text) != [secret.as_str()] {
            misses.push(format!("{:?} in {text:?}", redacted(&text)));
        }
    }
    let tokens: Vec<(&str, MakeToken)> = vec![
        (
            "github",
            Box::new(|seed| github_token(["ghp", "gho", "ghu", "ghs", "ghr"][seed as usize % 5], seed)),
        ),
        ("aws", Box::new(|seed| join(&["AKIA", &chars(seed, 16, UPPER32)]))),
        ("gitlab", Box::new(|seed| join(&["gl", "pat-", &chars(seed, 20, BASE64URL)]))),
        (
            "slack",
            Box::new(|seed| {
                join(&[
                    "xox",
                    "b-",
                    &chars(seed, 11, b"0123456789"),
                    "-",
                    &chars(seed + 1, 13, b"0123456789"),
                    "-",
                    &chars(seed + 2, 24, BASE62),
                ])
            }),
        ),
        ("stripe", Box::new(|seed| join(&["sk", "_live_", &chars(seed, 24 + (seed % 80) as usize, BASE62)]))),
        ("google", Box::new(|seed| join(&["AI", "za", &chars(seed, 35, BASE64URL)]))),
        (
            "jwt",
            Box::new(|seed| {
                jwt(
                    r#"{"alg":"RS256","typ":"JWT"}"#,
                    &format!(r#"{{"sub":"{seed}","exp":{}}}"#, 1_700_000_000 + seed),
                )
            }),
        ),
    ];
    for (kind, make) in &tokens {
        for seed in 0..2000u32 {
            let token = make(seed);
            let text = carriers(seed, &format!("credential {token}"));
            total += 1;
            if redacted(&text) != [token.as_str()] {
                misses.push(format!("{kind}: {:?} in {text:?}", redacted(&text)));
            }
        }
    }
    let contexts: Vec<(&str, MakeLine)> = vec![
        (
            "pem",
            Box::new(|seed| {
                let key = pem(
                    ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]
                        [seed as usize % 4],
                    "\n",
                );
                (format!("private_key: {key}"), key)
            }),
        ),
        (
            "url",
            Box::new(|seed| {
                let secret = password(seed).replace(['/', '?', '@', ':'], "x");
                (format!("url=postgres://app:{secret}@db-{seed}.internal:5432/app"), secret)
            }),
        ),
        (
            "header",
            Box::new(|seed| {
                let token = chars(seed, 20 + (seed % 40) as usize, BASE64URL);
                let scheme = ["Bearer", "Basic", "Token", "token", "bearer"][seed as usize % 5];
                (format!("Authorization: {scheme} {token}"), token)
            }),
        ),
        (
            "aws secret",
            Box::new(|seed| {
                let secret =
                    chars(seed, 40, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+");
                (format!("aws_secret_access_key = {secret}"), secret)
            }),
        ),
    ];
    for (kind, make) in &contexts {
        for seed in 0..1000u32 {
            let (line, secret) = make(seed);
            let text = carriers(seed, &line);
            total += 1;
            let expected = if text.starts_with("{\"stdout") { secret.replace('\\', "\\\\") } else { secret };
            if redacted(&text) != [expected.as_str()] {
                misses.push(format!("{kind}: {:?} in {text:?}", redacted(&text)));
            }
        }
    }
    for miss in misses.iter().take(30) {
        println!("MISS {miss}");
    }
    assert!(misses.is_empty(), "{} misses of {total}", misses.len());
}

#[test]
fn sweep_look_alikes() {
    let values = [
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
        "%s",
        "<password>",
        "null",
        "none",
        "changeme",
        "[credential 1]",
        "your-password-here",
        "<YOUR_TOKEN>",
        "${{ secrets.API_KEY }}",
        "****1234",
        "REPLACE_ME",
        "example",
        "N/A",
        "true",
    ];
    let syntaxes = ["{k}={v}", "{k}: {v}", "{k} = \"{v}\"", "\"{k}\": \"{v}\"", "{K}='{v}'", "--{k} {v}"];
    let keys = ["password", "db_password", "API_KEY", "client_secret", "access_token", "secret", "token"];
    let mut leaks: Vec<String> = Vec::new();
    let mut total = 0;
    for (index, value) in values.iter().enumerate() {
        for (s, syntax) in syntaxes.iter().enumerate() {
            for (k, key) in keys.iter().enumerate() {
                let line = syntax
                    .replace("{k}", key)
                    .replace("{K}", &key.to_ascii_uppercase())
                    .replace("{v}", value);
                let text = carriers((index + s + k) as u32, &line);
                total += 1;
                if !redacted(&text).is_empty() {
                    leaks.push(format!("{:?} in {text:?}", redacted(&text)));
                }
            }
        }
    }
    let prose = [
        "Forgot your password? Reset it here.",
        "Password: at least 12 characters, including a digit.",
        "The token expires after one hour; request a new one with your refresh token.",
        "Keep the secret key out of version control.",
        "The key: value format is used throughout.",
        "Authorization: required for all endpoints.",
        "Use a password manager to store passwords.",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "request 123e4567-e89b-12d3-a456-426614174000 took 12ms",
        "The auth service passed all checks; tokens were rotated by the key management team.",
        "token_type: bearer",
        "max_tokens: 4096",
        "password_reset_url: https://example.com/reset",
        "AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQC7 user@host",
        "pk_live_51H8fGJK2eZvKYlo2C8fGJK2eZvKYlo2C",
    ];
    for (index, line) in prose.iter().enumerate() {
        for seed in 0..6u32 {
            let text = carriers(seed + index as u32 * 6, line);
            total += 1;
            if !redacted(&text).is_empty() {
                leaks.push(format!("{:?} in {text:?}", redacted(&text)));
            }
        }
    }
    for leak in leaks.iter().take(40) {
        println!("FALSE POSITIVE {leak}");
    }
    assert!(leaks.is_empty(), "{} false positives of {total}", leaks.len());
}
