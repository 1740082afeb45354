//! The trigger sets that `find` walks (see the module docs of `credentials`): each a regex of
//! literals (or of a few whole shapes) small enough for the regex prefilter's fast path, built
//! once, and the indexes `find` knows them by.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

use super::{
    call, cli, device, dsn, hash, key, languages, messaging, mnemonic, otp, pgpass, platforms, smtp,
    userinfo, vendors, wifi,
};

/// Triggers of shapes: vendor prefixes, PEM, JWT and URL markers (case-sensitive, rare in prose).
const SHAPE_TRIGGERS: &str = concat!(
    r"-----BEGIN |eyJ|://|A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA)",
    r"|github_pat_|gh[pousr]_|gl(?:pat|oas|dt|rtr|rt|cbt|ptt|ft|imt|agent|soat|ffct)-|GR1348941",
    r"|xox[abposre]|xapp-|[srp]k_(?:live|test)_|whsec_|AIza|GOCSPX-|ya29\.|1//0",
    r"|npm_|pypi-AgE|SG\.|T3BlbkFJ|hf_|dop_v1_|shp(?:at|ss|ca|pa)_",
    r#"|[Cc]ookie\\?"?:|COOKIE:"#,
    "|AGE-SECRET-KEY-1|PuTTY-User-Key-File-|kty\\\\?\"",
);

/// Triggers of more vendor prefixes: registries and platforms, secret stores, observability, AI
/// providers (`sk-`), e-mail delivery, Figma, Tailscale, and Telegram's `:AA` (see `vendors`), a
/// PEM block in base64 (`pem`), and the prefixes of password hashes (`hash`); with them (see
/// `find`) the two- and three-letter prefixes of Twilio, Discord and Meta (`messaging`) and
/// Mailgun's keys.
/// A regex of their own: in the shape triggers they made that prefilter five times slower.
const TOKEN_TRIGGERS: &str = concat!(
    r"sk-|dckr_(?:pat|oat)_|ATATT3|ATBB|dapi|sq0(?:atp|csp)-|HRKU-|hv[sbr]\.|\.atlasv1\.|gl(?:sa|c)_",
    r"|sntry[su]_|lin_api_|ntn_|PMAK-|NRAK-|pscale_(?:tkn|pw|oauth)_|sbp_|sb_secret_|dp\.(?:pt|st|sa|ct)\.",
    r"|pul-|rubygems_|CLOJARS_|[sp]k\.eyJ|gsk_|r8_|pplx-|xai-|nvapi-|:AA|LS0tLS1CRUdJTi|secret_",
    r"|x(?:keys|smtps)ib-|figd_|tskey-",
);

/// Triggers of the word for a password in languages the key-word set leaves out (it is full):
/// Russian and Ukrainian, Japanese, Chinese, Korean, Polish, Swedish, Danish, Finnish, Turkish,
/// Hungarian, Hebrew and Thai (`key::PASSWORD_WORDS`), in the cases each script has, and
/// `credentials`/`creds`, Wi-Fi's `PSK`/`Psk`, Spanish's `clave`, `login`, `Wi-Fi` and `WLAN`
/// before a name and password pair (`login.rs`), and the names of key material (`salt`, `pepper`,
/// `KEK`, `DEK`: `key::Key::Material`) (the key-word set is full). A regex of their own: mixed
/// into the shape triggers they slowed every scan by a quarter. The last twelve literals cost
/// this set nothing measurable; as a set of their own they took about 1 µs per 8 KB.
const WORD_TRIGGERS: &str = concat!(
    "\u{43f}\u{430}\u{440}\u{43e}\u{43b}\u{44c}|\u{41f}\u{430}\u{440}\u{43e}\u{43b}\u{44c}",
    "|\u{41f}\u{410}\u{420}\u{41e}\u{41b}\u{42c}|\u{30d1}\u{30b9}\u{30ef}\u{30fc}\u{30c9}",
    "|\u{5bc6}\u{7801}|\u{5bc6}\u{78bc}|\u{be44}\u{bc00}\u{bc88}\u{d638}",
    "|[Hh]as\u{142}o|HAS\u{141}O|[Ll]\u{f6}senord|L\u{d6}SENORD|[Aa]dgangskode|ADGANGSKODE",
    "|[Ss]alasana|SALASANA|[\u{15f}\u{15e}]ifre|[Jj]elsz\u{f3}|JELSZ\u{d3}",
    "|\u{5e1}\u{5d9}\u{5e1}\u{5de}\u{5d4}|\u{e23}\u{e2b}\u{e31}\u{e2a}\u{e1c}\u{e48}\u{e32}\u{e19}",
    "|[Cc]redential|CREDENTIAL|[Cc]reds|CREDS|PSK|Psk|[Ll]ogin|LOGIN|[Ww]i-?[Ff]i|WI-?FI|WLAN|[Ww]lan",
    "|[Cc]lave|CLAVE|[Ss]alt|SALT|[Pp]epper|PEPPER|[Kk]ek|KEK|[Dd]ek|DEK",
);

/// Triggers of key names, in the three cases names are written in (`password`, `Password` as in
/// `dbPassword`, `PASSWORD`): a short literal set the regex prefilter scans fast, where a
/// case-insensitive one would be several times slower. `Passwort` and `mot de passe` hold `pass`;
/// `contraseña`, `senha`, `wachtwoord` and `Kennwort` need their own, as does `Basic`: those are
/// written in lower case and capitalized only, and Wi-Fi's `psk` in lower case, which keeps the set
/// at 32 literals, the most the fastest (slim) Teddy prefilter takes. `pw` (`DB_PW`, `smtpPw`)
/// holds `pwd`.
const KEYWORD_TRIGGERS: &str = concat!(
    "pass|Pass|PASS|pw|Pw|PW|secret|Secret|SECRET|token|Token|TOKEN|key|Key|KEY",
    "|auth|Auth|AUTH|bearer|Bearer|BEARER|basic|Basic|psk",
    "|contrase|Contrase|senha|Senha|wachtwoord|Wachtwoord|kennwort|Kennwort",
);

/// The key-name triggers (and the ASCII ones of the word triggers), compared without case.
const KEYWORDS_FOLDED: [&str; 19] = [
    "pass",
    "pw",
    "psk",
    "secret",
    "token",
    "key",
    "auth",
    "bearer",
    "contrase",
    "senha",
    "wachtwoord",
    "kennwort",
    "credential",
    "creds",
    "clave",
    "salt",
    "pepper",
    "kek",
    "dek",
];

/// The indexes of the trigger sets `find` walks (command lines and one-time codes are read on
/// their own: see `find`).
pub(super) const TOKEN_SET: usize = 1;
pub(super) const KEYWORD_SET: usize = 2;
pub(super) const WORD_SET: usize = 3;
pub(super) const LANGUAGE_SET: usize = 4;
pub(super) const OTHER_NAME_SET: usize = 5;
pub(super) const COMMAND_SET: usize = 6;
pub(super) const CODE_SET: usize = 7;
pub(super) const SOURCE_SET: usize = 8;
pub(super) const MESSAGING_SET: usize = 9;
pub(super) const AT_SET: usize = 10;
pub(super) const PLATFORM_SET: usize = 11;

// Compile-time constants covered by every test: building them cannot fail on any input.
static SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(SHAPE_TRIGGERS).dfa_size_limit(4 << 20).build().expect("shape triggers are valid")
});
static KEYWORDS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(KEYWORD_TRIGGERS).expect("keyword triggers are valid"));
static WORDS: LazyLock<Regex> = LazyLock::new(|| Regex::new(WORD_TRIGGERS).expect("word triggers are valid"));
static LANGUAGES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&languages::triggers()).expect("language triggers are valid"));
static OTHER_NAMES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&languages::other_triggers()).expect("other names' triggers are valid"));
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    let triggers = format!("{TOKEN_TRIGGERS}|{}", hash::TRIGGERS);
    Regex::new(&triggers).expect("token triggers are valid")
});
static MESSAGING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("{}|{}", messaging::TRIGGERS, vendors::MAILGUN_TRIGGER))
        .expect("messaging triggers are valid")
});
static PLATFORMS: LazyLock<Regex> = LazyLock::new(|| {
    let triggers = [platforms::TRIGGERS, platforms::AIRTABLE_TRIGGER, hash::PWDUMP_TRIGGER];
    Regex::new(&triggers.join("|")).expect("platform triggers are valid")
});
static AT_SIGNS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(userinfo::TRIGGERS).expect("the at sign trigger is valid"));
static CODES: LazyLock<Regex> = LazyLock::new(|| Regex::new(otp::TRIGGERS).expect("code triggers are valid"));
static COMMANDS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(cli::TRIGGERS).expect("command triggers are valid"));
static SOURCES: LazyLock<Regex> = LazyLock::new(|| {
    let sources = [
        call::TRIGGERS,
        device::TRIGGERS,
        dsn::TRIGGERS,
        wifi::TRIGGERS,
        cli::LOGON_TRIGGERS,
        pgpass::TRIGGERS,
        smtp::TRIGGERS,
        mnemonic::TRIGGERS,
    ];
    Regex::new(&sources.join("|")).expect("source triggers are valid")
});

/// The trigger sets, in the order of the `*_SET` indexes.
pub(super) fn sets() -> [&'static Regex; 12] {
    [
        &SHAPES,
        &TOKENS,
        &KEYWORDS,
        &WORDS,
        &LANGUAGES,
        &OTHER_NAMES,
        &COMMANDS,
        &CODES,
        &SOURCES,
        &MESSAGING,
        &AT_SIGNS,
        &PLATFORMS,
    ]
}

/// Whether a trigger names a key (a key word, or the word for a password in some language).
pub(super) fn is_keyword(trigger: &str) -> bool {
    if KEYWORDS_FOLDED.iter().any(|word| trigger.eq_ignore_ascii_case(word)) {
        return true;
    }
    let lowered = trigger.to_lowercase();
    key::PASSWORD_WORDS.contains(&lowered.as_str()) || languages::is_name(&lowered)
}
