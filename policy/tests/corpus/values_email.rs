//! Email addresses, valid and look-alike.
//!
//! Valid: varied local parts (`first.last`, `f.last`, `first_last+tag`, role accounts, an
//! apostrophe, a few non-ASCII names as SMTPUTF8 allows), company domains with subdomains,
//! free-mail providers, and top-level domains from the root zone: legacy gTLDs, ccTLDs with
//! second levels (`co.uk`, `com.br`) and new gTLDs (`.berlin`, `.consulting`, `.app`).
//! Look-alikes: `logo@2x.png`, npm specifiers `lodash@4.17.21`, `git@github.com:org/repo.git`,
//! shell prompts, `user@localhost`, image digests `nginx@sha256:…`, mentions, CSS at-rules.

use policy::RedactionKind;

use super::Planted;
use super::rng::{HEX, Rng};

const FIRST: &[&str] = &[
    "jane", "john", "maria", "lukas", "sophie", "emma", "liam", "noah", "olivia", "mohammed", "wei", "yuki",
    "priya", "raj", "chloe", "lucia", "joao", "anna", "pierre", "giulia", "marco", "sven", "ingrid",
    "fatima", "ahmed", "carlos", "aisha", "tom", "kim", "hannah", "jens", "margot", "pablo", "sanne",
    "thijs", "ana",
];
const LAST: &[&str] = &[
    "smith",
    "mueller",
    "schmidt",
    "dubois",
    "martin",
    "garcia",
    "rossi",
    "jansen",
    "devries",
    "silva",
    "santos",
    "kumar",
    "sharma",
    "nguyen",
    "wang",
    "tanaka",
    "obrien",
    "fischer",
    "lefebvre",
    "fernandez",
    "bianchi",
    "bakker",
    "oliveira",
    "patel",
    "kowalski",
    "johansson",
    "murphy",
    "weber",
    "moreau",
    "lopez",
];
const COMPANIES: &[&str] = &[
    "acme-corp",
    "nordwind",
    "globex",
    "initech",
    "contoso",
    "fabrikam",
    "northwind-traders",
    "tailspin",
    "mueller-gmbh",
    "boulangerie-martin",
    "hoogland",
    "sierra-logistics",
    "bluefin",
    "kraftwerk-ag",
    "vertex-health",
    "solaris",
    "example",
    "brightline",
    "atlas-consulting",
    "fjord-systems",
    "pinecone-labs",
];
const TLDS: &[&str] = &[
    "com",
    "com",
    "com",
    "org",
    "net",
    "de",
    "de",
    "fr",
    "co.uk",
    "org.uk",
    "ac.uk",
    "com.au",
    "com.br",
    "es",
    "it",
    "nl",
    "be",
    "ch",
    "at",
    "io",
    "dev",
    "app",
    "ai",
    "co",
    "eu",
    "info",
    "biz",
    "tech",
    "cloud",
    "shop",
    "online",
    "agency",
    "consulting",
    "berlin",
    "paris",
    "london",
    "bank",
    "insurance",
    "solutions",
    "digital",
    "studio",
    "jp",
    "co.jp",
    "in",
    "co.in",
    "ca",
    "mx",
    "pl",
    "se",
    "no",
    "dk",
    "fi",
    "ie",
    "pt",
    "nz",
    "sg",
];
const FREE_MAIL: &[&str] = &[
    "gmail.com",
    "outlook.com",
    "yahoo.co.uk",
    "gmx.de",
    "web.de",
    "t-online.de",
    "orange.fr",
    "laposte.net",
    "libero.it",
    "hotmail.es",
    "proton.me",
    "icloud.com",
    "uol.com.br",
    "rediffmail.com",
    "ziggo.nl",
];

/// A valid email address.
pub fn email(rng: &mut Rng) -> Planted {
    let first = *rng.pick(FIRST);
    let last = *rng.pick(LAST);
    let (local, style) = match rng.below(12) {
        0..=2 => (format!("{first}.{last}"), "first.last"),
        3 => (format!("{}.{last}", &first[..1]), "f.last"),
        4 => (format!("{first}{last}"), "firstlast"),
        5 => (format!("{first}_{last}"), "first_last"),
        6 => (format!("{first}-{last}{}", rng.range(1, 99)), "first-last99"),
        7 => (
            format!("{first}.{last}+{}", rng.pick(&["hr", "billing", "newsletter", "jira", "2024"])),
            "plus tag",
        ),
        8 => (
            (*rng.pick(&["info", "billing", "hr", "support", "kontakt", "contact", "facturation"])).into(),
            "role",
        ),
        9 => (format!("{}{}", &first[..1], rng.digits_between(4, 7)), "initial+digits"),
        10 if rng.chance(0.3) => (
            (*rng.pick(&["o'brien.sean", "jürgen.müller", "chloé.dubois", "joão.silva"])).into(),
            "apostrophe/unicode",
        ),
        _ => (format!("{last}.{first}"), "last.first"),
    };
    let (domain, where_) = match rng.below(10) {
        0..=2 => ((*rng.pick(FREE_MAIL)).to_owned(), "free mail"),
        3 => (
            format!(
                "{}.{}.{}",
                rng.pick(&["mail", "eu", "corp", "de", "hr", "students"]),
                rng.pick(COMPANIES),
                rng.pick(TLDS)
            ),
            "subdomain",
        ),
        _ => (format!("{}.{}", rng.pick(COMPANIES), rng.pick(TLDS)), "company"),
    };
    let mut text = format!("{local}@{domain}");
    if rng.chance(0.08) {
        // Written with capitals, as people do in signatures.
        text = text.split('@').map(capitalize_parts).collect::<Vec<_>>().join("@");
    }
    Planted::new(RedactionKind::Email, true, text, format!("{style} {where_}"))
}

fn capitalize_parts(part: &str) -> String {
    part.split('.')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Something with an `@` that is no email address.
pub fn email_look_alike(rng: &mut Rng) -> Planted {
    let (text, form, key) = match rng.below(8) {
        0 => (
            format!(
                "{}@{}x.{}",
                rng.pick(&["logo", "icon", "hero", "avatar", "banner"]),
                rng.range(2, 4),
                rng.pick(&["png", "jpg", "webp", "svg"])
            ),
            "retina asset",
            "asset",
        ),
        1 => (
            format!(
                "{}@{}.{}.{}",
                rng.pick(&["lodash", "react", "express", "typescript", "left-pad", "@types/node"]),
                rng.range(1, 20),
                rng.range(0, 30),
                rng.range(0, 40)
            ),
            "npm specifier",
            "package",
        ),
        2 => (
            format!(
                "git@{}:{}/{}.git",
                rng.pick(&["github.com", "gitlab.com", "bitbucket.org"]),
                rng.pick(COMPANIES),
                rng.pick(&["api", "infra", "website", "toolgate"])
            ),
            "git ssh remote",
            "remote",
        ),
        3 => (
            format!(
                "{}@{}-{:02}:~$",
                rng.pick(&["deploy", "root", "ubuntu", "ec2-user"]),
                rng.pick(&["web", "build", "db"]),
                rng.range(1, 30)
            ),
            "shell prompt",
            "prompt",
        ),
        4 => (format!("{}@localhost", rng.pick(FIRST)), "localhost", "user"),
        5 => (
            format!(
                "{}@sha256:{}",
                rng.pick(&["nginx", "postgres", "ghcr.io/acme/api"]),
                rng.string(HEX, 64)
            ),
            "image digest",
            "image",
        ),
        6 => (format!("@{}{}", rng.pick(FIRST), rng.pick(&["", "_dev", "42"])), "mention", "handle"),
        _ => (
            format!("{}@{}", rng.pick(&["@media", "@import", "@app.route"]), rng.pick(&["screen", "print"])),
            "code at-rule",
            "code",
        ),
    };
    Planted::new(RedactionKind::Email, false, text, form).key(key)
}
