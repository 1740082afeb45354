//! The helpers the national recognizers' tests share, and the properties every recognizer
//! keeps: samples found whole between neighbours, never glued, spans on whole tokens.

use super::*;

/// What `find` reports in `text`: each span's text and whether it is valid.
pub(in crate::redact::national) fn found_by(find: Find, text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    find(text, &crate::redact::digits::groups(text), &mut out);
    out.iter().map(|f| (text[f.start..f.end].to_owned(), f.valid)).collect()
}

/// Asserts what `find` reports in each of the `cases`: the text, and the spans and validity
/// expected.
pub(in crate::redact::national) fn assert_finds(find: Find, cases: &[(&str, Vec<(String, bool)>)]) {
    for (text, expected) in cases {
        assert_eq!(&found_by(find, text), expected, "{text:?}");
    }
}

/// The expectation of one valid finding.
pub(in crate::redact::national) fn valid(span: &str) -> Vec<(String, bool)> {
    vec![(span.to_owned(), true)]
}

/// The expectation of one look-alike.
pub(in crate::redact::national) fn look_alike(span: &str) -> Vec<(String, bool)> {
    vec![(span.to_owned(), false)]
}

#[test]
fn standalone_boundaries() {
    // (text, start, end, grouped, expected)
    let cases = [
        ("12345", 0, 5, false, true),
        ("x 12345.", 2, 7, false, true),
        ("a12345", 1, 6, false, false),
        ("12345b", 0, 5, false, false),
        ("é12345", 2, 7, false, false),
        ("+12345", 1, 6, false, false),
        ("1.12345", 2, 7, false, false),
        ("12345,6", 0, 5, false, false),
        ("1,12345", 2, 7, false, false),
        ("12345,09/02/2021", 0, 5, false, true),
        ("2021,12345,40782536964", 5, 10, false, true),
        ("12345-6", 0, 5, false, false),
        ("12345-x", 0, 5, false, true),
        ("(12345)", 1, 6, false, true),
        ("9 12345", 2, 7, false, true),
        ("9 12345", 2, 7, true, false),
        ("12345 9", 0, 5, true, false),
        ("12345 x", 0, 5, true, true),
    ];
    for (text, start, end, grouped, expected) in cases {
        assert_eq!(standalone(text, start, end, grouped), expected, "{text:?}");
    }
}

#[test]
fn reads_groups() {
    let digit = |_: usize, byte: u8| byte.is_ascii_digit();
    assert_eq!(read_groups::<5>(b"12 345x", 0, &[2, 3], Some(b' '), digit), Some((*b"12345", 6)));
    assert_eq!(read_groups::<5>(b"12345", 0, &[2, 3], None, digit), Some((*b"12345", 5)));
    assert_eq!(read_groups::<5>(b"12-345", 0, &[2, 3], Some(b' '), digit), None);
    assert_eq!(read_groups::<5>(b"12 34", 0, &[2, 3], Some(b' '), digit), None);
    assert_eq!(read_groups::<5>(b"1A345", 0, &[2, 3], None, digit), None);
    let letter_second = |i: usize, byte: u8| byte.is_ascii_digit() || (i == 1 && byte == b'A');
    assert_eq!(read_groups::<5>(b"1A 345", 0, &[2, 3], Some(b' '), letter_second), Some((*b"1A345", 6)));
}

/// Every kind's valid sample is found whole next to spaces and punctuation, at the start and
/// end of the text, and never whole when glued to a letter, a digit, `_` or `é`. A sample read
/// only after a word that names it stands after that word.
#[test]
fn samples_between_neighbours() {
    let samples: [(Find, &str, &str); 30] = [
        (de_tax_id::find, "", "86095742719"),
        (de_tax_id::find, "", "86 095 742 719"),
        (fr_nir::find, "", "185057800608491"),
        (fr_nir::find, "", "1 85 05 78 006 084 91"),
        (uk_nino::find, "", "AB123456C"),
        (uk_nino::find, "", "AB 12 34 56 C"),
        (es_dni::find, "", "12345678Z"),
        (es_dni::find, "", "12345678-Z"),
        (es_dni::find, "", "12.345.678-Z"),
        (es_dni::find, "", "X1234567L"),
        (es_dni::find, "", "X-1234567-L"),
        (it_codice_fiscale::find, "", "BNCLRA90E51F205R"),
        (it_codice_fiscale::find, "", "RSSMRA85T10A56NH"),
        (br_cpf::find, "", "123.456.789-09"),
        (br_cpf::find, "CPF ", "12345678909"),
        (br_cpf::find, "CPF ", "123456789-09"),
        (cn_resident_id::find, "", "440304199001011233"),
        (cn_resident_id::find, "", "62010219770315001X"),
        (cn_resident_id::find, "", "310115 19850709 8879"),
        (se_personnummer::find, "", "850709-9805"),
        (se_personnummer::find, "", "850709+9805"),
        (se_personnummer::find, "", "19850709-9805"),
        (se_personnummer::find, "", "198507099805"),
        (se_personnummer::find, "personnummer ", "8507099805"),
        (in_aadhaar::find, "", "2345 6789 0124"),
        (in_aadhaar::find, "", "4567-8901-2341"),
        (in_aadhaar::find, "Aadhaar ", "234567890124"),
        (pl_pesel::find, "PESEL ", "85123104567"),
        (nl_bsn::find, "BSN ", "123456782"),
        (nl_bsn::find, "BSN ", "1234.56.782"),
    ];
    let ip: [(Find, &str, &str); 3] = [
        (crate::redact::ip::find_ipv4, "", "192.0.2.55"),
        (|text, _, out| crate::redact::ip::find_ipv6(text, out), "", "2001:db8::55"),
        (|text, _, out| crate::redact::ip::find_ipv6(text, out), "", "::ffff:192.0.2.55"),
    ];
    let apart =
        [("", ""), (" ", " "), ("(", ")"), ("\"", "\","), ("[", "];"), ("\n", "."), ("'", "'!"), ("<", ">")];
    let glued = [("x", ""), ("", "x"), ("1", ""), ("", "1"), ("_", ""), ("", "_"), ("é", ""), ("", "é")];
    let spans = |find: Find, text: &str| -> Vec<String> {
        let mut out = Vec::new();
        find(text, &crate::redact::digits::groups(text), &mut out);
        out.iter().filter(|f| f.valid).map(|f| text[f.start..f.end].to_owned()).collect()
    };
    for (find, named, sample) in samples.into_iter().chain(ip) {
        for (before, after) in apart {
            let text = format!("{named}{before}{sample}{after}");
            assert_eq!(spans(find, &text), [sample], "{text:?}");
        }
        for (before, after) in glued {
            let text = format!("{named}{before}{sample}{after}");
            // Glued, the sample is never taken whole (what is left may still be a value: a
            // NINO without its suffix, the address after `x2001:` as in `key:2001:db8::1`).
            assert!(!spans(find, &text).iter().any(|span| span == sample), "{text:?}");
        }
    }
}

#[test]
fn words_that_name_a_number() {
    let words = &["cpf", "uid", "tax id"];
    // (text, where the number starts, named)
    for (text, named) in [
        ("CPF 1", true),
        ("cpf: 1", true),
        ("o CPF do titular é 1", true),
        ("customerCpf=1", true),
        ("customer_cpf=1", true),
        ("UID 1", true),
        ("my tax ID 1", true),
        ("guid 1", false),
        ("GUID 1", false),
        ("fluid 1", false),
        ("customercpf=1", true),
        ("\"employeecpf\": 1", true),
        ("clientuid: 1", true),
        ("tcpfx=1", false),
        ("tcpf 1", false),
        ("nothing here 1", false),
        ("CPF and then a very long sentence before 1", false),
        ("é CPF 1", true),
        ("CPF 12, then 1", false),
        ("PESEL=\"PESEL 61032151579\"\nCPF 1", true),
    ] {
        assert_eq!(named_before(text, text.len() - 1, words), named, "{text:?}");
    }
}

proptest::proptest! {
    /// Whatever the text, every recognizer returns spans on character boundaries, in order
    /// within the text, that neither start nor end inside a word.
    #[test]
    fn findings_are_whole_tokens(
        text in "(1|12|255|0|9|\\.|:|::| |é|ü|§|ver |x|AB|ab|C|c|2A|-|\\+|/|f|_|[0-9a-fA-Z .:]{1,4}|\
            86 095 742 719|185057800608491|1 85 05 78 006 084 91|CE 12 34 56|192\\.0\\.2\\.1|2001:db8|\
            12345678Z|X1234567L|BNCLRA90E51F205R|RSSMRA85T10A56NH|123\\.456\\.789-09|CPF |PESEL |BSN |\
            Aadhaar |2345 6789 0124|4403041990010112|33|850709|19850709|-9805|\\+9805){0,12}"
    ) {
        let finders: [Find; 13] = [
            de_tax_id::find,
            fr_nir::find,
            uk_nino::find,
            es_dni::find,
            it_codice_fiscale::find,
            br_cpf::find,
            cn_resident_id::find,
            se_personnummer::find,
            in_aadhaar::find,
            pl_pesel::find,
            nl_bsn::find,
            crate::redact::ip::find_ipv4,
            |text, _, out| crate::redact::ip::find_ipv6(text, out),
        ];
        for find in finders {
            let mut out = Vec::new();
            find(&text, &crate::redact::digits::groups(&text), &mut out);
            for finding in out {
                proptest::prop_assert!(finding.start < finding.end && finding.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(finding.start) && text.is_char_boundary(finding.end));
                proptest::prop_assert!(!word_before(&text, finding.start) && !word_after(&text, finding.end));
            }
        }
    }
}
