//! Tokens of more web platforms (`platforms`), each in every carrier, with the text around their
//! prefixes that must stay.

use super::*;

#[test]
fn hosting_content_and_storage_tokens() {
    assert_token_everywhere(&join(&["nf", "p_", &chars(200, 40, BASE62)]));
    assert_token_everywhere(&join(&["rn", "d_", &chars(201, 32, BASE62)]));
    assert_token_everywhere(&join(&["CF", "PAT-", &chars(202, 43, BASE64URL)]));
    assert_token_everywhere(&join(&["pat", &chars(203, 14, BASE62), ".", &chars(204, 64, HEX)]));
    assert_token_everywhere(&join(&["s", "l.", &chars(205, 138, BASE64URL)]));
    assert_token_everywhere(&join(&["s", "l.u.", &chars(206, 150, BASE64URL)]));
    assert_token_everywhere(&join(&["ops", "_eyJ", &chars(207, 300, BASE64URL)]));
}

#[test]
fn marketing_payment_and_cloud_keys() {
    assert_token_everywhere(&join(&[&chars(210, 32, HEX), "-us", "21"]));
    assert_token_everywhere(&join(&[&chars(211, 32, HEX), "-us", "6"]));
    let braintree =
        ["access_token", "$production$", &chars(212, 16, b"0123456789abcdefghijklmnopqrstuvwxyz")];
    assert_token_everywhere(&join(&[&braintree.concat(), "$", &chars(213, 32, HEX)]));
    // Square's start like Meta's, with `-` and `_` among them.
    let square = join(&[
        "EAA",
        "A",
        &chars(214, 20, BASE62),
        "-",
        &chars(215, 19, BASE62),
        "_",
        &chars(216, 19, BASE62),
    ]);
    assert_token_everywhere(&square);
    assert_token_everywhere(&join(&["LT", "AI", &chars(217, 20, BASE62)]));
    assert_token_everywhere(&join(&["LT", "AI", &chars(218, 12, BASE62)]));
    assert_token_everywhere(&join(&["AK", "ID", &chars(219, 32, BASE62)]));
}

#[test]
fn text_around_the_prefixes_stays() {
    for text in [
        "Visit /en-us/docs and the non-us1 region",
        "pathname/patternMatcher.patch",
        "the sl. abbreviation, sl.1 and the rnd_seed",
        "LTAI is a code; LTAI123 and AKID-42 are ids of something else",
        "access_token$production$ with nothing after it",
        "ops_eyJ and nfp_ alone",
        // 31 hex digits, and a 33rd before the dash: neither is a Mailchimp key.
        "0123456789abcdef0123456789abcde-us21 and a0123456789abcdef0123456789abcdef-us21",
    ] {
        assert_clean(text);
    }
    // A filler body is a look-alike.
    assert_look_alike(&join(&["key: ", "nf", "p_", &"x".repeat(40)]), &join(&["nf", "p_", &"x".repeat(40)]));
}
