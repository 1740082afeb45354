//! Redaction of the national numbers added after the first three: each kind end to end, the
//! forms that need their word, and the numbers of other kinds beside them.

use policy::{RedactionSet, Redactor};

fn redact(text: &str) -> policy::Redacted {
    Redactor::default().redact(text, &RedactionSet::builtin())
}

fn assert_redacts(input: &str, expected: &str) {
    assert_eq!(redact(input).text, expected, "input {input:?}");
}

fn assert_untouched(input: &str) {
    let out = redact(input);
    assert_eq!((out.text.as_str(), out.total()), (input, 0), "input {input:?} should not be redacted");
}

#[test]
fn national_ids_of_more_countries() {
    for (input, expected) in [
        ("DNI 12.345.678-Z, NIE X-1234567-L", "DNI [es_dni 1], NIE [es_dni 2]"),
        ("Codice fiscale: BNCLRA90E51F205R.", "Codice fiscale: [it_codice_fiscale 1]."),
        ("CPF 123.456.789-09 e CPF: 39053344705", "CPF [br_cpf 1] e CPF: [br_cpf 2]"),
        ("身份证号码 440304199001011233", "身份证号码 [cn_resident_id 1]"),
        ("personnummer 850709-9805, 198507099805", "personnummer [se_personnummer 1], [se_personnummer 2]"),
        ("Aadhaar 2345 6789 0124", "Aadhaar [in_aadhaar 1]"),
        ("PESEL: 85123104567", "PESEL: [pl_pesel 1]"),
        ("BSN 1234.56.782", "BSN [nl_bsn 1]"),
    ] {
        assert_redacts(input, expected);
    }
    // One value, one placeholder, however it is written.
    assert_redacts("12345678Z or 12.345.678-z", "[es_dni 1] or [es_dni 1]");
    // Failing checks stay, and are not re-read as another kind.
    for text in [
        "DNI 12345678A",
        "BNCLRA90E51F205X",
        "CPF 123.456.789-00",
        "000.000.000-00",
        "440304199001011234",
        "850709-9806",
        "2345 6789 0125",
        "PESEL 85123104568",
        "BSN 123456789",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn national_ids_that_need_their_word() {
    // Bare digits without the word are another country's id, a phone number or nothing.
    for text in ["PLZ 85123104567", "ref 123456782", "no. 8507099805", "acct 234567890124"] {
        let out = redact(text);
        for kind in ["pl_pesel", "nl_bsn", "se_personnummer", "in_aadhaar"] {
            assert!(!out.text.contains(kind), "{text:?} → {:?}", out.text);
        }
    }
}

#[test]
fn national_ids_beside_other_kinds() {
    // A valid German tax id stays one; named as a CPF or PESEL, eleven digits are that id, even
    // when their repetitions are a tax id's (which would otherwise make them a tax-id look-alike).
    assert_redacts("Steuer-ID 86095742719", "Steuer-ID [de_tax_id 1]");
    assert_redacts("86095742719", "[de_tax_id 1]");
    assert_redacts("CPF 11144477735", "CPF [br_cpf 1]");
    assert_redacts("PESEL 02221001231", "PESEL [pl_pesel 1]");
    // Eighteen digits that are a Chinese id with a card issuer's first digits (Visa's 4, UnionPay's
    // 62) are the id: not a card look-alike when Luhn fails, not a card when it passes.
    assert_redacts("440304199001011233", "[cn_resident_id 1]");
    assert_redacts("620102197703150001 x", "[cn_resident_id 1] x");
    assert_redacts("620102197703150108", "[cn_resident_id 1]");
    // Cards, IBANs, phone numbers and NINOs keep their kinds.
    assert_redacts("4111 1111 1111 1111", "[card 1]");
    assert_redacts("5018 1234 5670", "5018 1234 5670");
    assert_redacts("ES91 2100 0418 4502 0005 1332", "[iban 1]");
    assert_redacts("call +34 612 345 678", "call [phone 1]");
    assert_redacts("AB123456C", "[uk_nino 1]");
    // A number a word names is the next one after it, not one further on.
    assert_redacts("PESEL 02221001231, CPF 11144477735", "PESEL [pl_pesel 1], CPF [br_cpf 1]");
    // A date and a time in a file name are not a personnummer.
    assert_untouched("backup-20240115-1036.tar.gz");
}

#[test]
fn a_json_key_names_the_number_under_it() {
    let mut value = serde_json::json!({
        "pesel": "85123104567",
        "bsn": "123456782",
        "customerSsn": "123456789",
        "aadhaar": "234567890124",
        "employee": { "cpf": "39053344705" },
        "id": "123456789",
        "note": "call 123456789",
        "ticket 42": "123456789",
    });
    let mut scope = policy::Placeholders::default();
    Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut scope);
    assert_eq!(
        value,
        serde_json::json!({
            "pesel": "[pl_pesel 1]",
            "bsn": "[nl_bsn 1]",
            "customerSsn": "[ssn 1]",
            "aadhaar": "[in_aadhaar 1]",
            "employee": { "cpf": "[br_cpf 1]" },
            // Keys that name nothing, and keys that are not plain names, leave their numbers.
            "id": "123456789",
            "note": "call 123456789",
            "ticket 42": "123456789",
        })
    );
}
