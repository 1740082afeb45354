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
