//! Redaction per recognizer: positive and negative cases, entity-encoded input, numbers split
//! by spaces or dashes, checksum failures left alone, counts per kind.

use policy::redact::CustomRecognizer;
use policy::{RedactionKind, RedactionSet, Redactor, RedactorName};

fn redact(text: &str) -> policy::Redacted {
    Redactor::default().redact(text, &RedactionSet::builtin())
}

fn assert_redacts(input: &str, expected: &str) {
    let out = redact(input);
    assert_eq!(out.text, expected, "input {input:?}");
}

fn assert_untouched(input: &str) {
    let out = redact(input);
    assert_eq!(out.text, input, "input {input:?} should not be redacted");
    assert_eq!(out.total(), 0);
}

#[test]
fn email_positive() {
    assert_redacts("write to jane.doe+hr@corp.example.com today", "write to [email 1] today");
    assert_redacts("a@b.co", "[email 1]");
    assert_redacts("<a href=\"mailto:x_y@mail.example.org\">", "<a href=\"mailto:[email 1]\">");
}

#[test]
fn email_entity_encoded() {
    assert_redacts("a&#64;b.com", "[email 1]");
    assert_redacts("a&#x40;b.com", "[email 1]");
    assert_redacts("jane&commat;corp&period;example", "[email 1]");
}

#[test]
fn email_in_quotes_keeps_its_quotes() {
    assert_redacts("contact 'jane@corp.com' now", "contact '[email 1]' now");
    assert_redacts("mail o'brien@example.co.uk", "mail [email 1]");
}

#[test]
fn email_negative() {
    assert_untouched("user@localhost");
    assert_untouched("@handle and a@ b.com");
    assert_untouched("version 1.2.3@beta");
}

#[test]
fn phone_positive() {
    assert_redacts("call +49 30 1234567.", "call [phone 1].");
    assert_redacts("call +1 (212) 555-0123", "call [phone 1]");
    assert_untouched("call +1 (555) 123-4567");
    assert_redacts("call +44 20 7946 0958 now", "call [phone 1] now");
    assert_redacts("US (555) 123-4567", "US [phone 1]");
    assert_redacts("US 555-123-4567 or 555.987.6543", "US [phone 1] or [phone 2]");
    assert_redacts("Berlin 030 12345678", "Berlin [phone 1]");
    assert_redacts("mobile 0171-1234567", "mobile [phone 1]");
    assert_redacts("+49&nbsp;30&nbsp;1234567", "[phone 1]");
}

#[test]
fn phone_negative() {
    assert_untouched("on 2024-01-15 and 15.01.2024 and 01/15/2024");
    assert_untouched("order 12345, room 0123, +12");
    assert_untouched("version 1.2.3 costs 1,234.56 EUR");
}

#[test]
fn phone_spaced_slash_and_exit_prefix() {
    assert_redacts("Ruf mich an: 0171 / 123 45 67", "Ruf mich an: [phone 1]");
    // The whole number dialled from the US goes, not its first groups.
    assert_redacts("call 011 44 20 7946 0958", "call [phone 1]");
    assert_redacts("call 011 44 20 7946 0958 ext. 12", "call [phone 1]");
}

#[test]
fn numbers_that_stay_numbers() {
    for text in [
        "created 1700000000 updated 1700003600",
        "from 2019 - 2024, on 15 / 01 / 2024",
        "version 1.2.3.4 on 2024.01.15 costs 12.50 EUR",
        "order 4711 / 0815, page 12 / 345",
        "invoice 01144207946095",
        "OID 1.3.6.1.4.1.311.21.7",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn iban_positive() {
    assert_redacts("IBAN DE89370400440532013000.", "IBAN [iban 1].");
    assert_redacts("IBAN DE89 3704 0044 0532 0130 00 please", "IBAN [iban 1] please");
    assert_redacts("GB82 WEST 1234 5698 7654 32", "[iban 1]");
    assert_redacts("FR1420041010050500013M02606", "[iban 1]");
}

#[test]
fn iban_double_spaced_or_dotted() {
    assert_redacts("IBAN DE89  3704 0044  0532 0130 00", "IBAN [iban 1]");
    assert_redacts("IBAN DE89.3704.0044.0532.0130.00", "IBAN [iban 1]");
    // Mod-97 still decides: a dotted look-alike is left whole.
    assert_untouched("IBAN DE88.3704.0044.0532.0130.00");
}

#[test]
fn iban_negative() {
    assert_untouched("DE88370400440532013000");
    assert_untouched("GB82 WEST 1234 5698 7654 33");
    assert_untouched("XX89370400440532013000");
}

#[test]
fn card_positive() {
    assert_redacts("card 4111111111111111 ok", "card [card 1] ok");
    assert_redacts("card 4111 1111 1111 1111 ok", "card [card 1] ok");
    assert_redacts("card 5500-0000-0000-0004", "card [card 1]");
    assert_redacts("amex 3782 822463 10005", "amex [card 1]");
    assert_redacts("4111&#32;1111&#32;1111&#32;1111", "[card 1]");
}

#[test]
fn card_negative() {
    assert_untouched("card 4111111111111112");
    assert_untouched("card 4111 1111 1111 1112");
    assert_untouched("short 411111111111");
}

#[test]
fn ssn_positive() {
    assert_redacts("SSN 123-45-6789.", "SSN [ssn 1].");
    assert_redacts("SSN 078 05 1121", "SSN [ssn 1]");
}

#[test]
fn ssn_dotted() {
    assert_redacts("SSN 536.22.1234", "SSN [ssn 1]");
    assert_untouched("SSN 666.22.1234");
    // Three parts of a longer dotted chain are not an SSN.
    assert_untouched("build 1.536.22.1234");
}

#[test]
fn uk_nino_dashed() {
    assert_redacts("NINO AB-12-34-56-C", "NINO [uk_nino 1]");
    // HMRC's example prefix is never allocated: a look-alike, dashed or spaced.
    assert_untouched("NINO QQ-12-34-56-C");
    assert_untouched("NINO QQ 12 34 56 C");
}

#[test]
fn ssn_invalid_ranges() {
    for ssn in ["000-12-3456", "666-12-3456", "900-12-3456", "999-12-3456", "123-00-4567", "123-45-0000"] {
        assert_untouched(&format!("SSN {ssn}"));
    }
}

#[test]
fn counts_per_kind() {
    let out = redact("a@b.com c@d.org 4111111111111111 123-45-6789");
    assert_eq!(out.counts.get(&RedactionKind::Email), Some(&2));
    assert_eq!(out.counts.get(&RedactionKind::Card), Some(&1));
    assert_eq!(out.counts.get(&RedactionKind::Ssn), Some(&1));
    assert_eq!(out.counts.get(&RedactionKind::Phone), None);
    assert_eq!(out.total(), 4);
}

#[test]
fn only_the_requested_kinds() {
    let set: RedactionSet = [RedactionKind::Iban].into_iter().collect();
    let out = Redactor::default().redact("a@b.com DE89370400440532013000 4111111111111111", &set);
    assert_eq!(out.text, "a@b.com [iban 1] 4111111111111111");
    assert!(Redactor::default().redact("a@b.com", &RedactionSet::new()).counts.is_empty());
}

#[test]
fn custom_recognizers_by_name() {
    let ticket = CustomRecognizer::new(RedactorName::new("ticket"), r"\bTCK-[0-9]{4}\b")
        .unwrap_or_else(|e| panic!("{e}"));
    let redactor = Redactor::new(vec![ticket]);
    let mut set = RedactionSet::new();
    set.insert(RedactionKind::Custom(RedactorName::new("ticket")));
    let out = redactor.redact("see TCK-1234 and TCK-99 by a@b.com", &set);
    assert_eq!(out.text, "see [ticket 1] and TCK-99 by a@b.com");
    assert_eq!(out.counts.get(&RedactionKind::Custom(RedactorName::new("ticket"))), Some(&1));
}

#[test]
fn non_ascii_text_is_kept() {
    assert_redacts(
        "Grüße — schreib an jürgen@b.de oder ö@x.de",
        "Grüße — schreib an [email 1] oder [email 2]",
    );
    assert_redacts("Préfixe 4111 1111 1111 1111 — fin", "Préfixe [card 1] — fin");
}

fn policy(text: &str) -> Result<policy::Policy, Vec<policy::PolicyError>> {
    policy::Policy::parse(text, "test.toml", &[policy::SiteId::new("wiki")]).map_err(|errors| errors.errors)
}

fn view(policy: &policy::Policy) -> policy::PolicyView {
    let subject = policy::Subject { user: policy::UserId::new("alice"), email: None, groups: Vec::new() };
    policy.view(&subject, &policy::SiteId::new("wiki"))
}

#[test]
fn all_means_every_builtin_kind() {
    let loaded = policy("[defaults]\nredact = [\"all\"]\n").expect("policy");
    let view_all = view(&loaded);
    assert_eq!(view_all.redactions().iter().count(), RedactionKind::BUILTIN.len());
    let mut scope = policy::Placeholders::new();
    let out = view(&loaded).redact("key AKIAZ7VQ3KXRPLM4HT2W, NINO AB 12 34 56 C, host 10.1.2.3", &mut scope);
    assert_eq!(out.text, "key [credential 1], NINO [uk_nino 1], host [ipv4 1]");
}

#[test]
fn phone_regions_choose_which_national_formats_are_read() {
    // A Paris number in its national form: read with France among the regions, not without.
    let text = "call 01 23 45 67 89";
    let french =
        policy("[defaults]\nredact = [\"phone\"]\n[redaction]\nphone_regions = [\"FR\"]\n").expect("policy");
    let american =
        policy("[defaults]\nredact = [\"phone\"]\n[redaction]\nphone_regions = [\"US\"]\n").expect("policy");
    let mut scope = policy::Placeholders::new();
    assert_eq!(view(&french).redact(text, &mut scope).text, "call [phone 1]");
    assert_eq!(view(&american).redact(text, &mut scope).text, text);
    // With `+` the country code decides, whatever the regions.
    assert_eq!(view(&american).redact("call +33 1 23 45 67 89", &mut scope).text, "call [phone 2]");
}

#[test]
fn an_unknown_phone_region_is_an_error_with_its_line() {
    let errors = policy("[redaction]\nphone_regions = [\"US\",\n  \"XX\"]\n").expect_err("refused");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].line, 3);
    assert_eq!(errors[0].key, "redaction.phone_regions[1]");
    assert!(errors[0].message.contains("unknown phone region \"XX\""), "{}", errors[0].message);
    let errors = policy("[redactor]\n").expect_err("a table where an array of tables belongs");
    assert!(!errors.is_empty());
    let errors = policy("[[redactor]]\nname = \"all\"\npattern = \"x\"\n").expect_err("a reserved name");
    assert!(errors[0].message.contains("built-in"), "{}", errors[0].message);
}

#[test]
fn a_url_password_is_a_credential_and_its_host_no_address() {
    let out = Redactor::default()
        .redact("clone https://deploy:pa=ss9@git.example.com/x now", &RedactionSet::builtin());
    assert_eq!(out.text, "clone https://deploy:[credential 1]@git.example.com/x now");
}

#[test]
fn a_password_shaped_like_a_card_that_fails_luhn_is_still_a_password() {
    // A card look-alike keeps its digits from being read as other kinds, not from a password's
    // name: the value under it is the password.
    assert_redacts("password=4945807302157368", "password=[credential 1]");
    assert_redacts("Kennwort: 5193036426212997", "Kennwort: [credential 1]");
    assert_untouched("card 4945807302157368 failed");
}
