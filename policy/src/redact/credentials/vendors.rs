//! Vendor tokens recognized by their published prefix and shape (the whole token is reported):
//!
//! - GitLab: `glpat-` `gloas-` `gldt-` `glrt-` `glrtr-` `glcbt-` `glptt-` `glft-` `glimt-`
//!   `glagent-` `glsoat-` `glffct-` + ≥ 20 of `[A-Za-z0-9_-]`, then up to two `.`-separated
//!   routing parts (routable tokens); runner registration `GR1348941` + 20.
//! - Slack: `xoxb-` `xoxp-` `xoxa-` `xoxr-` `xoxs-` `xoxo-` `xoxe-` `xoxe.xoxp-` `xapp-` + ≥ 20 of
//!   `[A-Za-z0-9-]` holding a digit (else a look-alike: `xoxb-not-a-real-token-this-will-not-work`).
//! - Stripe: `sk_live_` `sk_test_` `rk_live_` `rk_test_` + ≥ 20 base62; `whsec_` + ≥ 24 base64.
//! - Google: `AIza` + exactly 35 `[A-Za-z0-9_-]`; `GOCSPX-` + ≥ 24; `ya29.` + ≥ 20; refresh
//!   tokens `1//0` + ≥ 30.
//! - npm `npm_` + 36 base62; PyPI `pypi-AgE` + ≥ 50 base64url (a macaroon); SendGrid `SG.` + 22 +
//!   `.` + 43 base64url.
//! - OpenAI, Anthropic: `sk-proj-` `sk-svcacct-` `sk-admin-` `sk-ant-` + ≥ 40; legacy OpenAI `sk-` +
//!   20 + `T3BlbkFJ` + 20.
//! - Hugging Face `hf_` + 34 base62; DigitalOcean `dop_v1_` + 64 hex; Shopify `shpat_` `shpss_`
//!   `shpca_` `shppa_` + 32 hex.
//! - age (file encryption) identities: `AGE-SECRET-KEY-1` + 58 characters of bech32's alphabet,
//!   upper case.
//! - Registries and platforms: Docker `dckr_pat_` `dckr_oat_` + ≥ 24; Atlassian `ATATT3` + ≥ 60;
//!   Bitbucket `ATBB` + ≥ 28; Databricks `dapi` + 32 hex (`-2` suffix); Square `sq0atp-` + ≥ 22,
//!   `sq0csp-` + ≥ 43; Heroku `HRKU-` + ≥ 30; HashiCorp Vault `hvs.` `hvb.` `hvr.` + ≥ 24;
//!   Terraform `<14>.atlasv1.` + ≥ 60; Linear `lin_api_` and Notion `ntn_` + ≥ 40; Postman
//!   `PMAK-` + 24 hex + `-` + 34 hex; PlanetScale `pscale_tkn_` `pscale_pw_` `pscale_oauth_` +
//!   ≥ 32; Supabase `sbp_` + 40 hex, `sb_secret_` + ≥ 20; Doppler `dp.pt.` `dp.st.` `dp.sa.`
//!   `dp.ct.` + ≥ 40; Pulumi `pul-` + 40 hex; RubyGems `rubygems_` + 48 hex; Clojars `CLOJARS_` +
//!   60 hex.
//! - Observability: Grafana `glsa_` + 32 + `_` + 8 hex, `glc_` + ≥ 32; Sentry `sntrys_` + ≥ 50,
//!   `sntryu_` + 64 hex; New Relic `NRAK-` + 27; Mapbox secret `sk.eyJ…` (public `pk.eyJ…` is a
//!   look-alike).
//! - AI providers: Groq `gsk_` + 52, Replicate `r8_` + 37, Perplexity `pplx-` + 48, xAI `xai-` +
//!   ≥ 70, NVIDIA `nvapi-` + ≥ 30, and `sk-` + ≥ 32 letters and digits (OpenAI's legacy format,
//!   which DeepSeek, Moonshot and others copied).
//! - Telegram bot tokens: the bot id (8–10 digits) + `:AA` + 33, reported whole (also after
//!   `/bot` in the Bot API's URLs); Notion's legacy `secret_` + 43; Doppler's `dp.st.<env>.` + ≥ 40.
//! - E-mail delivery: Mailgun's legacy `key-` + 32 lower-case letters and digits (the key in
//!   Mailgun's documentation is a look-alike); Brevo's (formerly Sendinblue) `xkeysib-` and
//!   `xsmtpsib-` + 64 hex + `-` + 16. Design: Figma's personal access tokens `figd_` + ≥ 32.
//!   Networks: Tailscale's auth, API and OAuth client keys `tskey-` + a kind, an id and a
//!   secret joined by `-`, ≥ 30 in all.
//! - Twilio, Discord bots and Meta's Graph API, whose prefixes are two or three letters: see
//!   `messaging`.
//!
//! Look-alikes: Stripe publishable keys (`pk_…`, public by design), Stripe's documented test keys,
//! and a body that is a placeholder (`EXAMPLE`, a masked `***`, one repeated character, or mostly
//! runs such as `xxxx`, `123456` or `abcdef`; see [`is_placeholder_body`]).

use super::{is_base64url, run, starts_word};

/// The 32 characters of bech32's data part, upper case (BIP 173).
const BECH32_UPPER: &[u8] = b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";

/// Secret keys printed in Stripe's public documentation.
const STRIPE_DOC_KEYS: [&str; 4] = [
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    "sk_test_26PHem9AhJZvU623DfE1x4sd",
    "sk_test_Hrs6SAopgFPF0bZXSN3f6ELN",
];

/// Mailgun's key printed in its public documentation (and copied into many samples since).
const MAILGUN_DOC_KEY: &str = concat!("key-", "3ax6xnjp29jd6fds4gc373sgvjxteol0");

/// The trigger of Mailgun's keys (read with the messaging set, on its own): the whole key's
/// shape, not only its prefix. `key` is a key word, and a `key-` trigger in a set read with the
/// key words would hide it from its recognizer when no token follows (`key-file = …`).
pub(super) const MAILGUN_TRIGGER: &str = r"key-[0-9a-z]{32}(?-u:\b)";

/// Handles a vendor prefix at `start..end`; returns where scanning resumes.
pub(super) fn at_prefix(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let prefix = &text[start..end];
    match prefix {
        "T3BlbkFJ" => return openai_legacy(text, start, end, out),
        ".atlasv1." => return terraform(text, start, end, out),
        ":AA" => return telegram(text, start, end, out),
        _ if prefix.starts_with("key-") => return mailgun(text, start, out),
        _ => {}
    }
    // Without a token, scanning resumes inside the prefix: a key word in it still counts
    // (`sb_secret_key = …`, `mysb_secret_key: …`).
    if !starts_word(bytes, start) || (prefix == "1//0" && start > 0 && bytes[start - 1] == b'/') {
        return start + 1;
    }
    let alphanumeric = |b: u8| b.is_ascii_alphanumeric();
    let hex = |b: u8| b.is_ascii_hexdigit();
    let base62_at_least = |min: usize| found(at_least(bytes, end, min, alphanumeric), end);
    let base64url_at_least = |min: usize| found(at_least(bytes, end, min, is_base64url), end);
    let (body_end, valid) = match prefix {
        "glsa_" => grafana_service_account(bytes, end),
        "glc_" => found(at_least(bytes, end, 32, |b| is_base64url(b) || b == b'='), end),
        _ if prefix.starts_with("gl") => gitlab(bytes, end),
        "GR1348941" => exact(bytes, end, 20, is_base64url),
        _ if prefix.starts_with("xox") || prefix == "xapp-" => slack(text, start, end),
        "sk_live_" | "sk_test_" | "rk_live_" | "rk_test_" => {
            let body_end = run(bytes, end, 255, alphanumeric);
            let doc = STRIPE_DOC_KEYS.contains(&&text[start..body_end]);
            (body_end, (body_end - end >= 20).then_some(!doc))
        }
        "pk_live_" | "pk_test_" => {
            at_least(bytes, end, 20, alphanumeric).map_or((end, None), |end| (end, Some(false)))
        }
        "whsec_" => {
            found(at_least(bytes, end, 24, |b| alphanumeric(b) || matches!(b, b'+' | b'/' | b'=')), end)
        }
        "AIza" => exact(bytes, end, 35, is_base64url),
        "GOCSPX-" => found(at_least(bytes, end, 24, is_base64url), end),
        "ya29." => found(at_least(bytes, end, 20, |b| is_base64url(b) || b == b'.'), end),
        "1//0" => found(at_least(bytes, end, 30, is_base64url), end),
        "npm_" => exact(bytes, end, 36, alphanumeric),
        "pypi-AgE" => found(at_least(bytes, end, 50, is_base64url), end),
        "SG." => sendgrid(bytes, end),
        "hf_" => exact(bytes, end, 34, alphanumeric),
        "dop_v1_" => exact(bytes, end, 64, hex),
        "AGE-SECRET-KEY-1" => exact(bytes, end, 58, |b| BECH32_UPPER.contains(&b)),
        _ if prefix.starts_with("shp") => exact(bytes, end, 32, hex),
        "sk-" => sk_key(text, end),
        "dckr_pat_" | "dckr_oat_" => base64url_at_least(24),
        "ATATT3" => found(at_least(bytes, end, 60, |b| is_base64url(b) || b == b'='), end),
        "ATBB" => base62_at_least(28),
        "dapi" => {
            let (body_end, valid) = exact(bytes, end, 32, hex);
            // Azure Databricks appends `-2` and the like.
            let suffix = run(bytes, body_end + 1, 2, |b| b.is_ascii_digit());
            let with_suffix = bytes.get(body_end) == Some(&b'-') && suffix > body_end + 1;
            (if valid.is_some() && with_suffix { suffix } else { body_end }, valid)
        }
        "sq0atp-" => base64url_at_least(22),
        "sq0csp-" => base64url_at_least(43),
        "HRKU-" | "nvapi-" => base64url_at_least(30),
        "hvs." | "hvb." | "hvr." => base64url_at_least(24),
        "sntrys_" => {
            found(at_least(bytes, end, 50, |b| is_base64url(b) || matches!(b, b'+' | b'/' | b'=')), end)
        }
        "sntryu_" => exact(bytes, end, 64, hex),
        "lin_api_" | "ntn_" => base62_at_least(40),
        "PMAK-" => postman(bytes, end),
        "NRAK-" => exact(bytes, end, 27, |b| b.is_ascii_uppercase() || b.is_ascii_digit()),
        _ if prefix.starts_with("pscale_") => base64url_at_least(32),
        "sbp_" => exact(bytes, end, 40, hex),
        "sb_secret_" => base64url_at_least(20),
        _ if prefix.starts_with("dp.") => {
            // Service tokens may name their environment first: `dp.st.prod.…`.
            let environment = run(bytes, end, 33, |b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
            });
            let body = if environment > end && bytes.get(environment) == Some(&b'.') {
                environment + 1
            } else {
                end
            };
            found(at_least(bytes, body, 40, alphanumeric), end)
        }
        "secret_" => exact(bytes, end, 43, alphanumeric),
        "pul-" => exact(bytes, end, 40, hex),
        "rubygems_" => exact(bytes, end, 48, hex),
        "CLOJARS_" => exact(bytes, end, 60, hex),
        "sk.eyJ" => found(at_least(bytes, end, 50, |b| is_base64url(b) || b == b'.'), end),
        // Mapbox's public tokens: meant for browsers.
        "pk.eyJ" => at_least(bytes, end, 50, |b| is_base64url(b) || b == b'.')
            .map_or((end, None), |end| (end, Some(false))),
        "gsk_" => exact(bytes, end, 52, alphanumeric),
        "r8_" => exact(bytes, end, 37, alphanumeric),
        "pplx-" => exact(bytes, end, 48, alphanumeric),
        "xai-" => base62_at_least(70),
        "xkeysib-" | "xsmtpsib-" => brevo(bytes, end),
        "figd_" => base64url_at_least(32),
        "tskey-" => found(at_least(bytes, end, 30, |b| b.is_ascii_alphanumeric() || b == b'-'), end),
        _ => (end, None),
    };
    let body_end = trim_dots(bytes, end, body_end);
    match valid {
        Some(true) => report(text, start, end.min(body_end), body_end, out),
        Some(false) => super::look_alike(out, start, body_end),
        None => return start + 1,
    }
    body_end.max(end)
}

/// A body run of at least `min` bytes: its end, or `None`.
pub(super) fn at_least(bytes: &[u8], from: usize, min: usize, keep: impl Fn(u8) -> bool) -> Option<usize> {
    let end = run(bytes, from, 4096, keep);
    (end - from >= min).then_some(end)
}

/// A valid body ending at `found`, or none (resuming at `from`).
fn found(end: Option<usize>, from: usize) -> (usize, Option<bool>) {
    end.map_or((from, None), |end| (end, Some(true)))
}

/// A body run of exactly `length` bytes (not followed by another body byte).
fn exact(bytes: &[u8], from: usize, length: usize, keep: impl Fn(u8) -> bool) -> (usize, Option<bool>) {
    let end = run(bytes, from, length + 1, keep);
    if end - from == length { (end, Some(true)) } else { (from, None) }
}

fn gitlab(bytes: &[u8], from: usize) -> (usize, Option<bool>) {
    let Some(mut end) = at_least(bytes, from, 20, is_base64url) else {
        return (from, None);
    };
    // Routable tokens carry `.`-separated parts after the payload.
    for _ in 0..2 {
        let part = run(bytes, end + 1, 64, |b| b.is_ascii_alphanumeric());
        if bytes.get(end) != Some(&b'.') || part == end + 1 {
            break;
        }
        end = part;
    }
    (end, Some(true))
}

fn slack(text: &str, start: usize, end: usize) -> (usize, Option<bool>) {
    let bytes = text.as_bytes();
    let mut body = end;
    if text[start..].starts_with("xoxe.xox") {
        body = start + "xoxe.xoxp".len();
    }
    if bytes.get(body) == Some(&b'-') {
        body += 1;
    } else if bytes.get(body - 1) != Some(&b'-') {
        return (end, None);
    }
    let mut body_end = run(bytes, body, 512, |b| b.is_ascii_alphanumeric() || b == b'-');
    while body_end > body && bytes[body_end - 1] == b'-' {
        body_end -= 1;
    }
    let token = &text[body..body_end];
    if token.len() < 8 {
        return (end, None);
    }
    let shaped = token.len() >= 20 && token.bytes().any(|b| b.is_ascii_digit());
    (body_end, Some(shaped))
}

/// Brevo (formerly Sendinblue) API and SMTP keys: `xkeysib-` or `xsmtpsib-` + 64 hex + `-` +
/// 16 letters and digits.
fn brevo(bytes: &[u8], from: usize) -> (usize, Option<bool>) {
    let (hex_end, valid) = exact(bytes, from, 64, |b| b.is_ascii_hexdigit());
    if valid.is_none() || bytes.get(hex_end) != Some(&b'-') {
        return (from, None);
    }
    exact(bytes, hex_end + 1, 16, |b| b.is_ascii_alphanumeric())
}

/// Mailgun's legacy API keys, `key-` + 32 lower-case letters and digits (the trigger matches
/// that whole shape, see [`MAILGUN_TRIGGER`]). Returns where scanning resumes.
fn mailgun(text: &str, start: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let body = start + "key-".len();
    let (body_end, valid) = exact(bytes, body, 32, |b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !starts_word(bytes, start) || valid.is_none() || bytes.get(body_end).is_some_and(|&b| is_base64url(b))
    {
        return start + 1;
    }
    if &text[start..body_end] == MAILGUN_DOC_KEY {
        super::look_alike(out, start, body_end);
    } else {
        report(text, start, body, body_end, out);
    }
    body_end
}

fn sendgrid(bytes: &[u8], from: usize) -> (usize, Option<bool>) {
    let id_end = run(bytes, from, 23, is_base64url);
    if id_end - from != 22 || bytes.get(id_end) != Some(&b'.') {
        return (from, None);
    }
    exact(bytes, id_end + 1, 43, is_base64url)
}

/// The legacy OpenAI key `sk-` + 20 + `T3BlbkFJ` (base64 of "OpenAI") + 20, around the marker.
fn openai_legacy(text: &str, marker: usize, marker_end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let Some(start) = marker.checked_sub(23) else { return marker_end };
    let head = &bytes[start..marker];
    let (end, valid) = exact(bytes, marker_end, 20, |b| b.is_ascii_alphanumeric());
    if head.starts_with(b"sk-") && head[3..].iter().all(u8::is_ascii_alphanumeric) && valid.is_some() {
        if starts_word(bytes, start) {
            super::secret(out, start, end);
        }
        return end;
    }
    marker_end
}

/// `sk-`: OpenAI's project, service-account and admin keys and Anthropic's (`sk-proj-`,
/// `sk-svcacct-`, `sk-admin-`, `sk-ant-` + ≥ 40 base64url), and the `sk-` + ≥ 32 letters and
/// digits of OpenAI's legacy keys and of the providers that copied their format (DeepSeek,
/// Moonshot and others).
fn sk_key(text: &str, from: usize) -> (usize, Option<bool>) {
    let bytes = text.as_bytes();
    let rest = &text[from..];
    if let Some(kind) =
        ["proj-", "svcacct-", "admin-", "ant-"].into_iter().find(|kind| rest.starts_with(kind))
    {
        return found(at_least(bytes, from + kind.len(), 40, is_base64url), from);
    }
    let end = run(bytes, from, 256, |b| b.is_ascii_alphanumeric());
    if end - from >= 32 && !bytes.get(end).is_some_and(|&b| is_base64url(b)) {
        (end, Some(true))
    } else {
        (from, None)
    }
}

/// Grafana service account tokens: `glsa_` + 32 letters and digits + `_` + 8 hex (a checksum).
fn grafana_service_account(bytes: &[u8], from: usize) -> (usize, Option<bool>) {
    let (body_end, valid) = exact(bytes, from, 32, |b| b.is_ascii_alphanumeric());
    if valid.is_none() || bytes.get(body_end) != Some(&b'_') {
        return (from, None);
    }
    exact(bytes, body_end + 1, 8, |b| b.is_ascii_hexdigit())
}

/// Postman API keys: `PMAK-` + 24 hex + `-` + 34 hex.
fn postman(bytes: &[u8], from: usize) -> (usize, Option<bool>) {
    let (id_end, valid) = exact(bytes, from, 24, |b| b.is_ascii_hexdigit());
    if valid.is_none() || bytes.get(id_end) != Some(&b'-') {
        return (from, None);
    }
    exact(bytes, id_end + 1, 34, |b| b.is_ascii_hexdigit())
}

/// Terraform Cloud and Enterprise API tokens: 14 letters and digits, `.atlasv1.`, and ≥ 60 of
/// base64url, around the marker.
fn terraform(text: &str, marker: usize, marker_end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let Some(start) = marker.checked_sub(14) else { return marker_end };
    let id = bytes[start..marker].iter().all(u8::is_ascii_alphanumeric) && starts_word(bytes, start);
    let Some(end) = at_least(bytes, marker_end, 60, is_base64url).filter(|_| id) else {
        return marker_end;
    };
    report(text, start, marker_end, end, out);
    end
}

/// Telegram bot tokens: the bot's numeric id (8 to 10 digits), `:`, and 35 of base64url starting
/// with `AA`, around the `:AA`. The whole token is reported, so the id is not read as a phone
/// number.
fn telegram(text: &str, colon: usize, marker_end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let start = super::run_back(bytes, colon, 11, |b| b.is_ascii_digit());
    let (end, valid) = exact(bytes, marker_end, 33, is_base64url);
    // In the Bot API's URLs the token follows `/bot`: `https://api.telegram.org/bot123…:AA…/`.
    let in_url = bytes[..start].ends_with(b"/bot");
    if !(8..=10).contains(&(colon - start)) || !(starts_word(bytes, start) || in_url) || valid.is_none() {
        return marker_end;
    }
    report(text, start, marker_end, end, out);
    end
}

/// Reports the token `start..end` whose body starts at `body`: a secret, or a look-alike when the
/// body is a placeholder.
pub(super) fn report(text: &str, start: usize, body: usize, end: usize, out: &mut Vec<super::Finding>) {
    if is_placeholder_body(&text[body..end]) {
        super::look_alike(out, start, end);
    } else {
        super::secret(out, start, end);
    }
}

fn trim_dots(bytes: &[u8], from: usize, mut end: usize) -> usize {
    while end > from && bytes[end - 1] == b'.' {
        end -= 1;
    }
    end
}

/// Whether a token body is a placeholder rather than a secret: it says `example` (any case), it
/// is masked, or at least half of it is filler: runs of four or more of one character, or of
/// letters or digits that count up or down (`xxxx`, `0000`, `123456789`, `abcdef`, `9876`),
/// case aside. A live token is random, and one run in it proves nothing: the digits of a Slack
/// team id (`2345678901`) or four `x` in a long OpenAI key turn up in a few tokens in ten
/// thousand, and each of those tokens must still be redacted. Runs covering half of a token do
/// not happen by chance.
pub(super) fn is_placeholder_body(body: &str) -> bool {
    body.to_ascii_lowercase().contains("example")
        || super::placeholder::is_masked(body)
        || filler_length(body.as_bytes()) * 2 >= body.len()
}

/// How many bytes of `body` lie in runs of at least `FILLER_RUN` alphanumerics whose neighbours
/// differ by the same step, 0, +1 or -1, case aside. Runs that meet share a byte, counted once.
fn filler_length(body: &[u8]) -> usize {
    const FILLER_RUN: usize = 4;
    let step = |at: usize| -> Option<i16> {
        let (a, b) = (body[at].to_ascii_lowercase(), body[at + 1].to_ascii_lowercase());
        let step = i16::from(b) - i16::from(a);
        (a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric() && step.abs() <= 1).then_some(step)
    };
    let (mut filler, mut counted_to) = (0, 0);
    let mut at = 0;
    while at + 1 < body.len() {
        let Some(first) = step(at) else {
            at += 1;
            continue;
        };
        let mut end = at + 1;
        while end + 1 < body.len() && step(end) == Some(first) {
            end += 1;
        }
        // The run is `at..=end`.
        if end + 1 - at >= FILLER_RUN {
            filler += end + 1 - at.max(counted_to);
            counted_to = end + 1;
        }
        at = end;
    }
    filler
}
