//! Credentials that must be redacted, in the forms issuers publish and people write them.
//!
//! Each form follows its issuer's published format: PEM private keys (see `values_pem`), JWTs
//! whose header is JSON with `alg`, AWS access key ids (`AKIA`/`ASIA` + 16 base32) with their
//! 40-character secret, GitHub tokens (`ghp_` + 30 base62 + CRC-32 in 6 base62), GitLab `glpat-`,
//! Slack `xoxb-`/`xoxp-`, Stripe `sk_live_`/`rk_live_`, Google `AIza`, OpenAI `sk-proj-`,
//! SendGrid `SG.`, Azure storage `AccountKey=`, passwords in URLs, `Authorization: Bearer` and
//! `Basic` header values, and secrets assigned to `password`/`secret`/`api_key`-like keys (the
//! key is context, the planted value is the secret alone), passwords on command lines, one-time
//! codes, the private member of a JSON Web Key, and tokens of registries, secret stores,
//! observability and AI vendors, Telegram and Discord bots, Twilio, Meta's Graph API, Mailgun,
//! Brevo and Figma, string literals passed as passwords in source code and Go DSNs, network
//! devices' configuration lines, and passwords set apart by markup, a line break or a Wi-Fi QR
//! code.

use policy::RedactionKind;

use super::Planted;
use super::checks::{base64, base64url, github_checksum};
use super::rng::{BASE62, HEX, LOWER_DIGITS, Rng, UPPER};

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn secret(text: String, form: &str) -> Planted {
    Planted::new(RedactionKind::Credentials, true, text, form.to_owned())
}

/// A password a person or a generator would choose. `&` only ever ends one: `&lt`, `&not`…
/// inside would be HTML references to a decoder, and change what the reader sees.
pub fn password(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => format!(
            "{}{}{}",
            rng.pick(&["Sommer", "Winter", "Bonjour", "Primavera", "Zonnig", "Welcome", "Dragon"]),
            rng.range(2015, 2026),
            rng.pick(&["!", "#", "$", "?", "!!", "*"])
        ),
        1 => {
            let words =
                ["correct", "horse", "battery", "staple", "orange", "tiger", "maple", "river", "piano"];
            let n = rng.range(3, 4);
            (0..n).map(|_| *rng.pick(&words)).collect::<Vec<_>>().join(*rng.pick(&["-", "_", "."]))
        }
        2 => {
            rng.string_between(b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!%*+-=?@^_", 14, 32)
        }
        3 => {
            let length = *rng.pick(&[32, 40, 64]);
            rng.string(HEX, length)
        }
        _ => format!(
            "{}{}{}",
            rng.string(UPPER, 1),
            rng.string_between(LOWER_DIGITS, 7, 12),
            rng.pick(&["!", "@", "%", "&"])
        ),
    }
}

/// A JWT: a JSON header with `alg`, claims, and a signature of the algorithm's size.
pub fn jwt(rng: &mut Rng) -> String {
    let (alg, signature_bytes) = *rng.pick(&[("HS256", 32), ("RS256", 256), ("ES256", 64), ("HS512", 64)]);
    let header = if rng.chance(0.5) {
        format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#)
    } else {
        format!(r#"{{"alg":"{alg}","kid":"{}","typ":"JWT"}}"#, rng.string(LOWER_DIGITS, 16))
    };
    let iat = 1_700_000_000 + rng.below(60_000_000);
    let claims = format!(
        r#"{{"sub":"{}","name":"{}","email":"{}@example.com","iat":{iat},"exp":{}}}"#,
        rng.range(100_000, 999_999),
        rng.pick(&["Jane Doe", "Lukas Weber", "Chloé Martin"]),
        rng.pick(&["jane", "lukas", "chloe"]),
        iat + 3600
    );
    format!(
        "{}.{}.{}",
        base64url(header.as_bytes()),
        base64url(claims.as_bytes()),
        base64url(&rng.bytes(signature_bytes))
    )
}

/// A GitHub token with a correct checksum.
pub fn github_token(rng: &mut Rng) -> String {
    let random = rng.string(BASE62, 30);
    format!(
        "{}{random}{}",
        rng.pick(&["ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
        github_checksum(&random)
    )
}

/// One to two credential values (an AWS key id travels with its secret).
pub fn credential(rng: &mut Rng) -> Vec<Planted> {
    let one = match rng.below(31) {
        24 => command_line(rng),
        25 => one_time_code(rng),
        26 => {
            let (x, y, d) = (rng.string(URL_SAFE, 43), rng.string(URL_SAFE, 43), rng.string(URL_SAFE, 43));
            secret(d, "jwk private member")
                .key("jwk")
                .around(format!(r#"{{"kty":"EC","crv":"P-256","x":"{x}","y":"{y}","d":""#), r#""}"#)
        }
        27 => vendor_token(rng),
        28 => source_code(rng),
        29 => device_line(rng),
        30 => set_apart(rng),
        0..=2 => super::values_pem::private_key(rng),
        3 | 4 => secret(jwt(rng), "jwt").key(*rng.pick(&["access_token", "id_token", "token"])),
        5 | 6 => {
            let id = format!("{}{}", rng.pick(&["AKIA", "AKIA", "ASIA"]), rng.string(BASE32, 16));
            let key = rng.string(B64, 40);
            return vec![
                secret(id, "aws access key id").key("aws_access_key_id"),
                secret(key, "aws secret access key").key("aws_secret_access_key"),
            ];
        }
        7 | 8 => {
            secret(github_token(rng), "github token").key(*rng.pick(&["GITHUB_TOKEN", "token", "GH_TOKEN"]))
        }
        9 => secret(format!("glpat-{}", rng.string(URL_SAFE, 20)), "gitlab pat").key("GITLAB_TOKEN"),
        10 => {
            let prefix = *rng.pick(&["xoxb", "xoxp"]);
            let text = format!(
                "{prefix}-{}-{}-{}",
                rng.digits_between(10, 12),
                rng.digits(13),
                rng.string(BASE62, 24)
            );
            secret(text, "slack token").key("SLACK_BOT_TOKEN")
        }
        11 => {
            let length = *rng.pick(&[24, 99]);
            let text = format!("{}_live_{}", rng.pick(&["sk", "sk", "rk"]), rng.string(BASE62, length));
            secret(text, "stripe secret key").key("STRIPE_SECRET_KEY")
        }
        12 => secret(format!("AIza{}", rng.string(URL_SAFE, 35)), "google api key").key("GOOGLE_API_KEY"),
        13 => {
            let text = format!("sk-proj-{}T3BlbkFJ{}", rng.string(URL_SAFE, 64), rng.string(URL_SAFE, 64));
            secret(text, "openai key").key("OPENAI_API_KEY")
        }
        14 => {
            let text = format!("SG.{}.{}", rng.string(URL_SAFE, 22), rng.string(URL_SAFE, 43));
            secret(text, "sendgrid key").key("SENDGRID_API_KEY")
        }
        15 => {
            let account = format!(
                "{}{}",
                rng.pick(&["acme", "contoso", "nordwind"]),
                rng.pick(&["prod", "backup", "logs"])
            );
            secret(base64(&rng.bytes(64)), "azure storage key").key("AZURE_STORAGE_CONNECTION_STRING").around(
                format!("DefaultEndpointsProtocol=https;AccountName={account};AccountKey="),
                ";EndpointSuffix=core.windows.net",
            )
        }
        16 | 17 => {
            let (scheme, port, path) = *rng.pick(&[
                ("postgres", ":5432", "/app"),
                ("postgresql", "", "/orders?sslmode=require"),
                ("mysql", ":3306", "/shop"),
                ("mongodb+srv", "", "/?retryWrites=true"),
                ("redis", ":6379", "/0"),
                ("amqp", ":5672", "/vhost"),
                ("https", "", "/repo.git"),
                ("ftp", ":21", "/exports"),
            ]);
            let user = *rng.pick(&["app", "admin", "deploy", "svc_reporting", "jane.doe", "root"]);
            let host = *rng.pick(&[
                "db.internal",
                "pg-primary.acme-corp.com",
                "cluster0.x1y2z.mongodb.net",
                "git.acme-corp.com",
                "mq.prod.local",
            ]);
            // Percent-encoding keeps URL passwords free of `@`, `:` and `/`.
            let pass = password(rng)
                .replace('%', "%25")
                .replace('@', "%40")
                .replace('#', "%23")
                .replace('?', "%3F")
                .replace('/', "%2F");
            secret(pass, "url password")
                .key("DATABASE_URL")
                .around(format!("{scheme}://{user}:"), format!("@{host}{port}{path}"))
        }
        18 | 19 => {
            let token = match rng.below(3) {
                0 => jwt(rng),
                1 => rng.string_between(URL_SAFE, 32, 64),
                _ => format!("ya29.{}", rng.string(URL_SAFE, 120)),
            };
            secret(token, "bearer header").key("Authorization").around("Bearer ", "")
        }
        20 => {
            let user = *rng.pick(&["admin", "api", "jane", "ci-bot"]);
            let pair = format!("{user}:{}", password(rng));
            secret(base64(pair.as_bytes()), "basic auth header").key("Authorization").around("Basic ", "")
        }
        _ => {
            let key = *rng.pick(&[
                "pw",
                "password",
                "passwd",
                "pwd",
                "secret",
                "client_secret",
                "api_key",
                "apiKey",
                "db_password",
                "DB_PASSWORD",
                "SECRET_KEY",
                "JWT_SECRET",
                "SESSION_SECRET",
                "REDIS_PASSWORD",
                "smtp_password",
            ]);
            secret(password(rng), "assignment").key(key)
        }
    };
    vec![one]
}

/// A password handed to a command on its command line, quoted as a shell user would.
fn command_line(rng: &mut Rng) -> Planted {
    framed(
        rng,
        "command line",
        "command",
        &[
            ("mysql -u app -p'", "' shop"),
            ("sshpass -p '", "' ssh -l deploy db.internal"),
            ("redis-cli -h cache -a '", "' ping"),
            ("docker login -u ci -p '", "' registry.acme-corp.com"),
            ("curl -u 'svc:", "' https://api.internal/v1"),
            ("smbclient //fs/share -U 'bob%", "'"),
            ("openssl pkcs12 -export -passout 'pass:", "' -out c.p12"),
            ("keytool -list -storepass '", "' -keystore ks.jks"),
            ("htpasswd -b .htpasswd admin '", "'"),
            ("echo '", "' | sudo -S systemctl restart app"),
            ("http -a 'svc:", "' https://api.internal/v1"),
            ("psexec \\\\app01 -u CORP\\svc -p '", "' cmd"),
            ("rabbitmqctl add_user svc '", "'"),
            ("az keyvault secret set --vault-name kv --name db --value '", "'"),
        ],
    )
}

/// A password in source code: a string literal where a call or a pair puts one, or a Go DSN.
fn source_code(rng: &mut Rng) -> Planted {
    framed(
        rng,
        "source code",
        "code",
        &[
            ("server.login(\"ops@example.com\", \"", "\")"),
            ("var credential = new NetworkCredential(\"svc\", \"", "\", \"CORP\");"),
            ("define('DB_PASSWORD', '", "');"),
            ("r = requests.get(url, auth=(\"svc\", \"", "\"))"),
            ("conn = DriverManager.getConnection(url, \"app\", \"", "\");"),
            ("req.SetBasicAuth(\"svc\", \"", "\")"),
            ("dsn := \"app:", "@tcp(db:3306)/shop\""),
        ],
    )
}

/// A password in a network device's configuration line.
fn device_line(rng: &mut Rng) -> Planted {
    framed(
        rng,
        "device configuration",
        "config",
        &[
            ("enable secret 0 ", ""),
            ("username admin privilege 15 password 0 ", ""),
            ("snmp-server community ", " RO"),
            ("tacacs-server host 10.1.1.1 key ", ""),
            ("dot11 ssid corp\n wpa-psk ascii 0 ", ""),
        ],
    )
}

/// A password set apart from its name by markup or a line break, or in a Wi-Fi QR code.
fn set_apart(rng: &mut Rng) -> Planted {
    framed(
        rng,
        "set apart",
        "layout",
        &[
            ("<tr><th>Password</th><td>", "</td></tr>"),
            ("Password: <code>", "</code>"),
            ("Your new password:\n  ", "\n"),
            ("WIFI:T:WPA;S:Office;P:", ";;"),
        ],
    )
}

/// A password planted between one of `frames`' (before, after) pairs.
fn framed(rng: &mut Rng, form: &str, key: &str, frames: &[(&str, &str)]) -> Planted {
    let (before, after) = *rng.pick(frames);
    secret(password(rng), form).key(key).around(before, after)
}

/// A one-time code as a text message or a log writes it: six digits that are no filler run.
fn one_time_code(rng: &mut Rng) -> Planted {
    let code = loop {
        let code = rng.digits(6);
        let steps: Vec<i16> =
            code.as_bytes().windows(2).map(|pair| i16::from(pair[1]) - i16::from(pair[0])).collect();
        // Three equal steps of -1, 0 or +1 in a row make a filler run of four.
        if !steps.windows(3).any(|run| run[0] == run[1] && run[1] == run[2] && run[0].abs() <= 1) {
            break code;
        }
    };
    let (before, after) = *rng.pick(&[
        ("Your verification code is ", ""),
        ("", " is your Acme login code"),
        ("2FA code: ", ""),
        ("Use ", " as your one-time passcode."),
        ("OTP: ", ""),
    ]);
    secret(code, "one-time code").key("sms").around(before, after)
}

/// A token of a vendor format beyond the big clouds: registries, secret stores, observability,
/// AI providers, chat bots, messaging and e-mail delivery, design tools.
fn vendor_token(rng: &mut Rng) -> Planted {
    let text = match rng.below(12) {
        0 => format!("dckr_pat_{}", rng.string(URL_SAFE, 27)),
        1 => format!("hvs.{}", rng.string(URL_SAFE, 91)),
        2 => format!("glsa_{}_{}", rng.string(BASE62, 32), rng.string(HEX, 8)),
        3 => format!("gsk_{}", rng.string(BASE62, 52)),
        4 => format!("{}:AA{}", rng.digits_between(8, 10), rng.string(URL_SAFE, 33)),
        5 => format!("SK{}", rng.string(HEX, 32)),
        6 => {
            // A Discord bot token: the bot's id (a snowflake) in base64, a timestamp, an HMAC.
            let id = format!("1{}", rng.digits_between(16, 19));
            let hmac = *rng.pick(&[27, 38]);
            let id = base64(id.as_bytes());
            format!("{}.{}.{}", id.trim_end_matches('='), rng.string(URL_SAFE, 6), rng.string(URL_SAFE, hmac))
        }
        7 => {
            let length = rng.range(100, 200);
            format!("EAA{}", rng.string(BASE62, length))
        }
        8 => format!("key-{}", rng.string(LOWER_DIGITS, 32)),
        9 => {
            let prefix = rng.pick(&["xkeysib", "xsmtpsib"]);
            format!("{prefix}-{}-{}", rng.string(HEX, 64), rng.string(BASE62, 16))
        }
        10 => format!("figd_{}", rng.string(URL_SAFE, 40)),
        _ => format!("sk-{}", rng.string(HEX, 32)),
    };
    secret(text, "vendor token").key(*rng.pick(&["TOKEN", "api_token", "credential"]))
}
