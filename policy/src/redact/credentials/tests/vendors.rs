//! Vendor tokens of registries, secret stores, observability and AI providers, each in every
//! carrier, with their look-alikes.

use super::*;

#[test]
fn registry_and_platform_tokens() {
    assert_token_everywhere(&join(&["dckr", "_pat_", &chars(80, 27, BASE64URL)]));
    assert_token_everywhere(&join(&[
        "ATATT3",
        "xFfGF0",
        &chars(81, 170, BASE64URL),
        "=",
        &chars(82, 8, HEX),
    ]));
    assert_token_everywhere(&join(&["ATBB", &chars(83, 32, BASE62)]));
    assert_token_everywhere(&join(&["dapi", &chars(84, 32, HEX)]));
    assert_token_everywhere(&join(&["dapi", &chars(85, 32, HEX), "-2"]));
    assert_token_everywhere(&join(&["sq0", "atp-", &chars(86, 22, BASE64URL)]));
    assert_token_everywhere(&join(&["sq0", "csp-", &chars(87, 43, BASE64URL)]));
    assert_token_everywhere(&join(&["HRKU", "-AA", &chars(88, 58, BASE64URL)]));
    assert_token_everywhere(&join(&["hv", "s.", &chars(89, 91, BASE64URL)]));
    assert_token_everywhere(&join(&[&chars(90, 14, BASE62), ".atlas", "v1.", &chars(91, 67, BASE64URL)]));
    assert_token_everywhere(&join(&["lin", "_api_", &chars(92, 40, BASE62)]));
    assert_token_everywhere(&join(&["ntn", "_", &chars(93, 46, BASE62)]));
    assert_token_everywhere(&join(&["PMAK", "-", &chars(94, 24, HEX), "-", &chars(95, 34, HEX)]));
    assert_token_everywhere(&join(&["pscale", "_tkn_", &chars(96, 43, BASE64URL)]));
    assert_token_everywhere(&join(&["sb", "p_", &chars(97, 40, HEX)]));
    assert_token_everywhere(&join(&["dp", ".pt.", &chars(98, 43, BASE62)]));
    assert_token_everywhere(&join(&["pul", "-", &chars(99, 40, HEX)]));
    assert_token_everywhere(&join(&["rubygems", "_", &chars(100, 48, HEX)]));
    assert_token_everywhere(&join(&["CLOJARS", "_", &chars(101, 60, HEX)]));
}

#[test]
fn observability_tokens() {
    assert_token_everywhere(&join(&["gl", "sa_", &chars(110, 32, BASE62), "_", &chars(111, 8, HEX)]));
    assert_token_everywhere(&join(&["gl", "c_", &chars(112, 80, BASE64URL)]));
    assert_token_everywhere(&join(&["sntry", "u_", &chars(113, 64, HEX)]));
    assert_token_everywhere(&join(&["sntry", "s_", &chars(114, 120, BASE64URL)]));
    assert_token_everywhere(&join(&["NRAK", "-", &chars(115, 27, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")]));
    // Mapbox: secret tokens are redacted, public ones (for browsers) are look-alikes.
    let body = join(&["eyJ1Ijoi", &chars(116, 40, BASE64URL), ".", &chars(117, 22, BASE64URL)]);
    assert_token_everywhere(&join(&["sk", ".", &body]));
    assert_look_alike_everywhere(&join(&["pk", ".", &body]));
}

#[test]
fn ai_provider_keys() {
    assert_token_everywhere(&join(&["gs", "k_", &chars(120, 52, BASE62)]));
    assert_token_everywhere(&join(&["r8", "_", &chars(121, 37, BASE62)]));
    assert_token_everywhere(&join(&["pplx", "-", &chars(122, 48, BASE62)]));
    assert_token_everywhere(&join(&["xai", "-", &chars(123, 80, BASE62)]));
    assert_token_everywhere(&join(&["nvapi", "-", &chars(124, 64, BASE64URL)]));
    // `sk-` and 32 or more letters and digits (DeepSeek, Moonshot, OpenAI's legacy keys).
    assert_token_everywhere(&join(&["sk", "-", &chars(125, 32, HEX)]));
    assert_token_everywhere(&join(&["sk", "-", &chars(126, 48, BASE62)]));
    for text in ["task-force", "sk-learn", "the sk-1 and sk-2 rows", "sk-abc-def-0123456789"] {
        assert_clean(text);
    }
    assert_clean(&join(&["sk", "-", &chars(127, 24, BASE62), " is too short"]));
}

#[test]
fn telegram_bot_tokens_are_read_whole() {
    let token = join(&["5432198765", ":AA", &chars(130, 33, BASE64URL)]);
    assert_token_everywhere(&token);
    // Not a bot token: a time, a ratio, or too few characters after the id.
    assert_clean("12345678:AAbc is not one");
    assert_clean("at 10:AA the meeting");
}

#[test]
fn placeholder_bodies_are_look_alikes() {
    assert_look_alike_everywhere(&join(&["dckr", "_pat_", "XXXXXXXXXXXXXXXXXXXXXXXXXXX"]));
    assert_look_alike_everywhere(&join(&["hv", "s.", "EXAMPLEexampleEXAMPLEexample"]));
}

#[test]
fn a_key_word_inside_a_prefix_that_is_no_token_still_counts() {
    assert_secret("sb_secret_key = Zq8Lm2Xw9Kp4Rt7Y", "Zq8Lm2Xw9Kp4Rt7Y");
    assert_secret("app.sb_secret_key: Zq8Lm2Xw9Kp4Rt7Y", "Zq8Lm2Xw9Kp4Rt7Y");
}

#[test]
fn tokens_in_their_api_urls_and_with_an_environment() {
    let telegram = join(&["4973187389", ":AA", &chars(160, 33, BASE64URL)]);
    assert_secret(&format!("https://api.telegram.org/bot{telegram}/sendMessage"), &telegram);
    let doppler = join(&["dp", ".st.prod.", &chars(161, 43, BASE62)]);
    assert_token_everywhere(&doppler);
    assert_token_everywhere(&join(&["secret", "_", &chars(162, 43, BASE62)]));
}

/// Lower-case letters and digits (Mailgun's legacy keys).
const LOWER36: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";

#[test]
fn twilio_key_sids_and_auth_tokens() {
    assert_token_everywhere(&join(&["S", "K", &chars(170, 32, HEX)]));
    // An API key written with its secret, as basic auth takes them: both are one credential.
    assert_token_everywhere(&join(&["S", "K", &chars(171, 32, HEX), ":", &chars(172, 32, BASE62)]));
    // The account SID only names the account: the auth token after it is the secret.
    let account = join(&["A", "C", &chars(173, 32, HEX)]);
    let auth = chars(174, 32, HEX);
    assert_secret(&format!("TWILIO={account}:{auth}"), &auth);
    assert_secret(&format!("twilio {account}:{auth} rotated"), &auth);
    // Under a key word the value is read whole, the SID with it.
    let pair = format!("{account}:{auth}");
    assert_secret(&format!("creds {pair} rotated"), &pair);
    assert_clean(&format!("https://api.twilio.com/2010-04-01/Accounts/{account}/Messages.json"));
    let curl =
        format!("curl -u {account}:{auth} https://api.twilio.com/2010-04-01/Accounts/{account}/Calls.json");
    assert_secret(&curl, &auth);
    for text in ["SKU 48213 in stock", "SKIP", "ACME Corp", "the AC adapter", "SK-1234", "ACCEPTED"] {
        assert_clean(text);
    }
    // Too short, too long or not lower-case hex: not a SID.
    assert_clean(&join(&["S", "K", &chars(175, 31, HEX), " and more"]));
    assert_clean(&join(&["S", "K", &chars(176, 33, HEX)]));
    assert_clean(&join(&["S", "K", &chars(177, 32, HEX).to_uppercase()]));
    assert_look_alike_everywhere(&join(&["S", "K", &"0".repeat(32)]));
}

/// The base64 (no padding) of a Discord user id of `digits` digits.
fn discord_id(seed: u32, digits: usize) -> String {
    let id = join(&["1", &chars(seed, digits - 1, b"0123456789")]);
    STANDARD.encode(id).trim_end_matches('=').to_owned()
}

#[test]
fn discord_bot_tokens() {
    for (seed, digits, hmac) in [(180, 19, 38), (181, 18, 27), (182, 17, 38), (183, 20, 30)] {
        let token = join(&[
            &discord_id(seed, digits),
            ".",
            &chars(seed + 10, 6, BASE64URL),
            ".",
            &chars(seed + 20, hmac, BASE64URL),
        ]);
        assert_token_everywhere(&token);
    }
    // A filler HMAC is a documentation sample.
    let sample = join(&[&discord_id(184, 18), ".GhIjKl.", "abcdefghijklmnopqrstuvwxyz0123456789AB"]);
    assert_look_alike_everywhere(&sample);
    // The first part must decode to an id's digits: other base64 of that shape is no token.
    let words = STANDARD.encode("2024 release notes!!").trim_end_matches('=').to_owned();
    assert_clean(&join(&[&words, ".", &chars(185, 6, BASE64URL), ".", &chars(186, 30, BASE64URL)]));
    for text in ["NTFS and ODBC on NT 4.0", "MTV", "OTP: none", "Mjolnir", "ND.TX.US"] {
        assert_clean(text);
    }
    // The HMAC's length is 27 to 38.
    let id = discord_id(187, 19);
    assert_clean(&join(&[&id, ".", &chars(188, 6, BASE64URL), ".", &chars(189, 20, BASE64URL)]));
}

#[test]
fn tailscale_keys() {
    assert_token_everywhere(&join(&["tskey", "-auth-kq8Zr2LmX7CNTRL-", &chars(194, 33, BASE62)]));
    assert_token_everywhere(&join(&["tskey", "-api-kd4Wn7VpQ2CNTRL-", &chars(195, 33, BASE62)]));
    assert_look_alike_everywhere(&join(&["tskey", "-auth-", &"x".repeat(40)]));
    assert_clean("the tskey-auth prefix names an auth key");
}

#[test]
fn discord_mfa_tokens() {
    assert_token_everywhere(&join(&["mf", "a.", &chars(192, 84, BASE64URL)]));
    assert_token_everywhere(&join(&["mf", "a.", &chars(193, 70, BASE64URL)]));
    // A filler HMAC is a documentation sample; a short word after `mfa.` is a setting's name.
    assert_look_alike_everywhere(&join(&["mf", "a.", &"x".repeat(84)]));
    for text in ["mfa.enabled = true", "mfa.required_for_admins", "see mfa.md for the steps"] {
        assert_clean(text);
    }
}

#[test]
fn meta_graph_api_tokens() {
    assert_token_everywhere(&join(&["EA", "A", &chars(190, 180, BASE62)]));
    assert_token_everywhere(&join(&["EA", "AB", &chars(191, 40, BASE62)]));
    for text in [
        "EAA members fly in",
        "EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "the EAA2024 conference",
    ] {
        assert_clean(text);
    }
    // A slice of a base64 blob (`+`, `/` or `=` around it).
    assert_clean(&join(&["MIIB+EA", "A", &chars(192, 50, BASE62), "/Qx=="]));
    assert_clean(&join(&["EA", "A", &chars(193, 30, BASE62), " is too short"]));
}

#[test]
fn email_delivery_keys() {
    assert_token_everywhere(&join(&["ke", "y-", &chars(200, 32, LOWER36)]));
    assert_token_everywhere(&join(&["xkey", "sib-", &chars(201, 64, HEX), "-", &chars(202, 16, BASE62)]));
    assert_token_everywhere(&join(&["xsmtp", "sib-", &chars(203, 64, HEX), "-", &chars(204, 16, BASE62)]));
    // Mailgun's key printed in its documentation, and filler.
    assert_look_alike_everywhere(&join(&["ke", "y-", "3ax6xnjp29jd6fds4gc373sgvjxteol0"]));
    assert_look_alike_everywhere(&join(&["xkey", "sib-", &"0".repeat(64), "-", &"x".repeat(16)]));
    for text in [
        "a key-value store",
        "key-4f3c2a1b",
        "the key-management-service",
        "key-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
        "xkeysib-your-api-key",
    ] {
        assert_clean(text);
    }
    // Without a key, the key word is read as usual.
    assert_secret("key-password = Zq8Lm2Xw9Kp4Rt7Y", "Zq8Lm2Xw9Kp4Rt7Y");
}

#[test]
fn figma_personal_access_tokens() {
    assert_token_everywhere(&join(&["fig", "d_", &chars(210, 40, BASE64URL)]));
    // Filler: most of the body counts up through the alphabet.
    assert_look_alike_everywhere(&join(&["fig", "d_", "Xk9mQ2vL7pzAbCdEfGhIjKlMnOpQrStUvWx"]));
    assert_clean("figd_ is the prefix of Figma's tokens");
    assert_clean(&join(&["fig", "d_", &chars(211, 20, BASE64URL), " is too short"]));
}
