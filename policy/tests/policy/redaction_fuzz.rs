//! Property: the redactor takes any text, however its recognizers' triggers, quotes, escapes and
//! multi-byte characters fall, without panicking, and changes nothing but what it reports: the
//! text outside the placeholders is the input's (with its HTML character references decoded, as
//! the model reads them), in order.

use policy::{RedactionSet, Redactor};
use proptest::prelude::*;

/// Pieces that start, continue or end the recognizers' shapes, mixed with multi-byte characters.
const FRAGMENTS: [&str; 131] = [
    "mysql ",
    " -p",
    " -u ",
    " --password=",
    "echo '",
    "' | sudo -S ",
    "net use ",
    " \\\\fs\\share ",
    "htpasswd -b ",
    "sshpass",
    " /p:",
    "PuTTY-User-Key-File-3: ssh-ed25519\n",
    "Private-Lines: 2\n",
    "{\"kty\":\"oct\",",
    "\"k\":\"",
    "\\\"kty\\\":",
    "code",
    "verification code ",
    "PIN: ",
    "codes: ",
    "[at]",
    " dot ",
    "(at)",
    "[.]",
    "LS0tLS1CRUdJTi",
    "-----BEGIN PRIVATE KEY-----",
    "password: ",
    "<input type=password value=\"",
    "passphrase: ",
    "sk-",
    ":5432:",
    "*:*:*:u:",
    "<tr><th>Password</th></tr><tr><td>",
    "| user | password |\n|---|---|\n| ",
    " | ",
    "user,password\n",
    "WIFI:T:WPA;P:",
    "127.0.0.1:6379> AUTH ",
    "sqlplus scott/",
    "smtp.login(\"ada\", \"",
    "define('DB_PASSWORD', '",
    ", \"",
    "auth=('",
    "<th>Password</th><td>",
    "</td>",
    "<code>",
    "enable secret 0 ",
    "snmp-server community ",
    "username ada password 7 ",
    "@tcp(",
    "''",
    ":AA",
    "hvs.",
    "dckr_pat_",
    "Cookie: sid=",
    "https://u:",
    "@",
    ".",
    "'",
    "\"",
    "\\\"",
    "\\n",
    "\n",
    "=",
    ":",
    ";",
    "|",
    "&",
    " ",
    "\t",
    "é",
    "日本語",
    "\u{a0}",
    "\u{200b}",
    "٤١١١",
    "𝟒",
    "4111 1111 1111 1111",
    "482913",
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
    "ß\u{301}",
    "ÿ",
    "Authorization: Digest ",
    "Bearer ",
    "Basic ",
    "?sig=",
    "Set-Cookie: ",
    "password=",
    "<password>",
    "name: DB_PASSWORD\n  value: ",
    "xoxb-",
    "ghp_",
    "eyJhbGciOiJIUzI1NiJ9.",
    "AKIA",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "-----END RSA PRIVATE KEY-----",
    "password: |\n  ",
    "пароль: ",
    "パスワード：",
    "DE89 3704 ",
    "DE89.3704.0044.",
    "  ",
    " / ",
    " - ",
    "011 44 ",
    "536.22.",
    "AB-12-34-",
    "56-C",
    "+49 30 ",
    "%40",
    "\\u00e9",
    "&#64;",
    "&nbsp;",
    "curl -u a:",
    "T3BlbkFJ",
    ".atlasv1.",
    "[credential 1]",
    "[email 2]",
    "12345678-Z",
    "X1234567L",
    "BNCLRA90E51F205R",
    "rssmra85t10a56nh",
    "123.456.789-09",
    "CPF ",
    "440304199001011233",
    "62010219770315001X",
    "850709-9805",
    "19850709",
    "Aadhaar ",
    "2345 6789 0124",
    "PESEL 85123104567",
    "BSN 1234.56.782",
];

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        8 => proptest::sample::select(FRAGMENTS.to_vec()).prop_map(str::to_owned),
        1 => (1..3000usize).prop_map(|n| "é".repeat(n)),
        1 => (1..5000usize).prop_map(|n| "A".repeat(n)),
        2 => "[ -~é日\u{a0}\n]{0,12}",
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_text_is_redacted_without_panics_and_kept_outside_placeholders(input in text()) {
        let redacted = Redactor::default().redact(&input, &RedactionSet::builtin());
        // Every piece between placeholders is in the input, in order.
        let decoded = policy::redact::entities::decode(&input);
        let mut rest = decoded.as_ref();
        for piece in redacted.text.split(['[', ']']) {
            if piece.is_empty() || is_placeholder_label(piece) {
                continue;
            }
            let found = rest.find(piece);
            prop_assert!(found.is_some(), "{piece:?} not in the input after its earlier pieces");
            rest = &rest[found.unwrap_or(0) + piece.len()..];
        }
    }
}

/// `email 1`, `credential 12`: what a placeholder holds between its brackets.
fn is_placeholder_label(piece: &str) -> bool {
    const KINDS: [&str; 19] = [
        "email",
        "phone",
        "iban",
        "card",
        "ssn",
        "credential",
        "ipv4",
        "ipv6",
        "de_tax_id",
        "fr_nir",
        "uk_nino",
        "es_dni",
        "it_codice_fiscale",
        "br_cpf",
        "cn_resident_id",
        "se_personnummer",
        "in_aadhaar",
        "pl_pesel",
        "nl_bsn",
    ];
    piece.split_once(' ').is_some_and(|(kind, number)| {
        KINDS.contains(&kind) && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
    })
}
