//! One-time codes, PINs, card security codes and backup-code lists (`otp`).

use super::*;

#[test]
fn codes_named_before_them() {
    let cases = [
        ("Your verification code is 482913", "482913"),
        ("Your Google verification code: 739104", "739104"),
        ("2FA code: 093 441", "093 441"),
        ("OTP: 771920", "771920"),
        ("Your OTP is 771920. Do not share it.", "771920"),
        ("PIN: 4821", "4821"),
        ("TOTP code 482913", "482913"),
        ("one time code 662910", "662910"),
        ("Ihr Bestätigungscode lautet 118204", "118204"),
        ("Votre code de vérification : 339102", "339102"),
        ("Su código de verificación es 771204", "771204"),
        ("CVV: 737", "737"),
        ("security code: 4929", "4929"),
        ("{\"sms\": \"Your login code is 550193\"}", "550193"),
        ("his pin is 4821", "4821"),
        ("card pin 4821", "4821"),
        ("Pin: 7305", "7305"),
        ("the door code is 4821#", "4821"),
        ("Garage code: 7305", "7305"),
        ("alarm code 918273", "918273"),
        ("Der Türcode lautet 4821", "4821"),
        ("gate code: 2580", "2580"),
        ("Geheimzahl: 4821", "4821"),
        ("Ihre neue Geheimzahl lautet 7305", "7305"),
    ];
    for (text, code) in cases {
        assert_secret(text, code);
    }
}

#[test]
fn codes_named_after_them_and_lists() {
    assert_secret("G-739104 is your Google verification code.", "739104");
    assert_secret("Use 551203 as your one-time passcode.", "551203");
    assert_secret("482913 is your Acme security code", "482913");
    assert_eq!(
        redacted("recovery codes: 8f3k-2m9x 7h4q-1z8w 3n6v-5b2c"),
        ["8f3k-2m9x", "7h4q-1z8w", "3n6v-5b2c"]
    );
    assert_eq!(redacted("Backup codes:\n4829 1037\n7720 9164\n"), ["4829 1037", "7720 9164"]);
}

#[test]
fn other_codes_and_numbers_stay() {
    for text in [
        "error code 5001 occurred",
        "Geheimzahl vergessen? Rufen Sie 0800 123 an.",
        "Geheimzahlen 2024 werden nie per Mail verschickt",
        "HTTP status code 404",
        "zip code 90210",
        "The source code is 2024 lines.",
        "exit code 1",
        "promo code SAVE20 applies",
        "Order 12345678 code shipped",
        "SHIPPING 1234 PINE ST",
        "Enter the verification code we sent to your phone.",
        "verification code expires in 10 minutes",
        "verification code: 2024-05-01",
        "PIN code: 560001, Bangalore",
        "otpauth is the scheme",
        "a QR code 1234",
        "spin 4821 times",
        "pinned 2024 issues",
        "shopping 4821 items",
        "connect the header to pin 13",
        "the building code 2021 applies",
        "pin the 2024 roadmap to the channel",
    ] {
        assert_clean(text);
    }
    // A stand-in in documentation is a look-alike.
    assert_look_alike("verification code: 123456", "123456");
}

#[test]
fn a_one_time_password_in_digits() {
    assert_secret("Your one-time password is 482913.", "482913");
    assert_secret("One-time password: 093 441", "093 441");
    assert_secret("771204 is your one time password", "771204");
    assert_clean("Your one-time password expires in 10 minutes.");
}
