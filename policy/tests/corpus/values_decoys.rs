//! Look-alikes of secrets, and the everyday numbers (dates, times, prices, ISBNs) that share
//! shapes with personal data.
//!
//! Secret look-alikes are what real configs and logs are full of and what must survive
//! redaction: git SHAs, SHA-256 digests, UUIDs, public keys and certificates, AWS's documented
//! example keys, GitHub tokens whose checksum is wrong, masked or templated passwords
//! (`***`, `${DB_PASSWORD}`, `{{ vault_db_password }}`), Stripe publishable keys and object ids,
//! `https://ci-bot@host/` URLs without a password, bearer placeholders, npm integrity hashes,
//! base64 images, and single base64 JSON segments that are not JWTs.

use policy::RedactionKind;

use super::Planted;
use super::checks::{base64, base64url, github_checksum};
use super::rng::{BASE62, DIGITS, HEX, Rng};

fn look_alike(text: String, form: &str, key: &str) -> Planted {
    Planted::new(RedactionKind::Credentials, false, text, form.to_owned()).key(key)
}

/// A UUID (version 4 layout).
pub fn uuid(rng: &mut Rng) -> String {
    let variant = *rng.pick(&['8', '9', 'a', 'b']);
    format!(
        "{}-{}-4{}-{variant}{}-{}",
        rng.string(HEX, 8),
        rng.string(HEX, 4),
        rng.string(HEX, 3),
        rng.string(HEX, 3),
        rng.string(HEX, 12)
    )
}

/// A secret's look-alike.
pub fn credential_look_alike(rng: &mut Rng) -> Planted {
    match rng.below(22) {
        0 | 1 => look_alike(rng.string(HEX, 40), "git sha", rng.word(&["commit", "sha", "revision"])),
        2 => look_alike(rng.string_between(HEX, 7, 12), "short sha", "commit"),
        3 | 4 => {
            look_alike(rng.string(HEX, 64), "sha-256 digest", rng.word(&["sha256", "checksum", "digest"]))
        }
        5 | 6 => look_alike(uuid(rng), "uuid", rng.word(&["request_id", "trace_id", "tenant_id", "id"])),
        7 | 8 => super::values_pem::public_key(rng),
        9 => look_alike("AKIAIOSFODNN7EXAMPLE".into(), "aws example key id", "aws_access_key_id"),
        10 => look_alike(
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            "aws example secret",
            "aws_secret_access_key",
        ),
        11 | 12 => {
            let random = rng.string(BASE62, 30);
            let right = github_checksum(&random);
            let mut wrong = rng.string(BASE62, 6);
            while wrong == right {
                wrong = rng.string(BASE62, 6);
            }
            look_alike(format!("ghp_{random}{wrong}"), "github token bad checksum", "GITHUB_TOKEN")
        }
        13 | 14 => {
            let masked = *rng.pick(&[
                "***",
                "********",
                "${DB_PASSWORD}",
                "<your-password>",
                "{{ vault_db_password }}",
                "%(DB_PASS)s",
                "REDACTED",
                "xxxxxxxx",
                "<redacted>",
                "$SECRET_KEY",
                "${{ secrets.API_TOKEN }}",
                "[hidden]",
            ]);
            let key = *rng.pick(&["password", "secret", "api_key", "DB_PASSWORD", "client_secret"]);
            look_alike(masked.into(), "masked or templated", key)
        }
        15 => look_alike(
            format!("pk_live_{}", rng.string(BASE62, 24)),
            "stripe publishable key",
            "STRIPE_PUBLISHABLE_KEY",
        ),
        16 => {
            let prefix = *rng.pick(&["cus_", "pi_", "ch_", "sub_", "in_"]);
            look_alike(format!("{prefix}{}", rng.string_between(BASE62, 14, 24)), "stripe object id", "id")
        }
        17 => {
            let user = *rng.pick(&["ci-bot", "deploy", "jenkins", "renovate"]);
            let host = *rng.pick(&["git.acme-corp.com", "gitlab.example.org", "bitbucket.org"]);
            look_alike(
                format!(
                    "https://{user}@{host}/{}/{}.git",
                    rng.pick(&["infra", "web"]),
                    rng.pick(&["api", "site"])
                ),
                "url without password",
                "remote",
            )
        }
        18 => {
            let placeholder = *rng.pick(&[
                "<token>",
                "${TOKEN}",
                "$ACCESS_TOKEN",
                "YOUR_API_KEY",
                "{{token}}",
                "<redacted>",
            ]);
            look_alike(placeholder.into(), "bearer placeholder", "Authorization").around("Bearer ", "")
        }
        19 => look_alike(format!("sha512-{}", base64(&rng.bytes(64))), "npm integrity", "integrity"),
        20 => look_alike(
            format!("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{}", base64(&rng.bytes(60))),
            "base64 image",
            "src",
        ),
        _ => {
            let json = format!(
                r#"{{"theme":"{}","page":{},"lang":"{}"}}"#,
                rng.pick(&["dark", "light"]),
                rng.range(1, 40),
                rng.pick(&["de", "en", "fr"])
            );
            look_alike(base64url(json.as_bytes()), "base64 json segment", "state")
        }
    }
}

/// A date in one of the usual spellings.
pub fn date(rng: &mut Rng) -> String {
    let (year, month, day) = (rng.range(2019, 2026), rng.range(1, 12), rng.range(1, 28));
    match rng.below(6) {
        0 => format!("{year}-{month:02}-{day:02}"),
        1 => format!("{day:02}.{month:02}.{year}"),
        2 => format!("{month:02}/{day:02}/{year}"),
        3 => format!("{day:02}/{month:02}/{year}"),
        4 => format!("{day}. {} {year}", ["Januar", "März", "Juni", "Oktober"][rng.below(4)]),
        _ => format!("{} {day}, {year}", ["January", "March", "June", "October"][rng.below(4)]),
    }
}

/// A clock time.
pub fn time(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => format!("{:02}:{:02}", rng.below(24), rng.below(60)),
        1 => format!("{:02}:{:02}:{:02}", rng.below(24), rng.below(60), rng.below(60)),
        _ => format!("{}:{:02} {}", rng.range(1, 12), rng.below(60), rng.pick(&["AM", "PM"])),
    }
}

/// A price in one of several locales.
pub fn price(rng: &mut Rng) -> String {
    let units = rng.range(1, 99_999);
    let cents = rng.below(100);
    let thousands = |sep: &str| {
        if units >= 1000 { format!("{}{sep}{:03}", units / 1000, units % 1000) } else { units.to_string() }
    };
    match rng.below(6) {
        0 => format!("${}.{cents:02}", thousands(",")),
        1 => format!("{},{cents:02} €", thousands(".")),
        2 => format!("CHF {}.{cents:02}", thousands("'")),
        3 => format!("R$ {},{cents:02}", thousands(".")),
        4 => format!("£{}.{cents:02}", thousands(",")),
        _ => format!("USD {}.{cents:02}", thousands(",")),
    }
}

/// An ISBN-13 with its check digit, hyphenated.
pub fn isbn(rng: &mut Rng) -> String {
    let body = format!("978{}{}", rng.pick(&["3", "2", "0", "84", "88"]), rng.string(DIGITS, 12));
    let body = &body[..12];
    let sum: u32 =
        body.bytes().enumerate().map(|(i, b)| u32::from(b - b'0') * if i % 2 == 0 { 1 } else { 3 }).sum();
    let check = (10 - sum % 10) % 10;
    format!("{}-{}-{}-{}-{check}", &body[..3], &body[3..4], &body[4..8], &body[8..12])
}
