//! The redaction corpus: carrier texts with planted personal data, secrets and look-alikes.
//!
//! An [`Item`] is one document as the gateway would see it (a wiki paragraph, a log excerpt, a
//! config file, a JSON tool result, a tool's JSON Schema…) in one [`Channel`] (plain text,
//! `&nbsp;`-grouped numbers, fullwidth digits, HTML character references, JSON…). It holds zero
//! or more [`Planted`] values, each of one [`RedactionKind`], either *valid* (the recognizer must
//! replace it) or a *look-alike* (same shape, fails the real rule: it must be left intact).
//!
//! Values are generated from the real rules (mod-97, Luhn, libphonenumber's metadata, MOD 11,10,
//! the NIR key, MOD 11-2, Verhoeff, the DNI and codice fiscale letters, GitHub's CRC-32, …) in
//! `values_*`; `generate` never looks at what the redactor
//! does. Carriers are in `carriers`, `text_carriers` and `json`, channels in `channels`. Scoring
//! is `score` (on the alignment of `align`), counted in `tally` and printed by `report`.
//!
//! Shared by the `policy` test binary and the `redaction` bench, so not every item is used by
//! both (hence the `dead_code` allowance).

#![allow(dead_code)]

pub mod align;
pub mod carriers;
pub mod channels;
pub mod checks;
pub mod checks_national;
pub mod json;
pub mod labels;
pub mod page;
pub mod phone_plans;
pub mod report;
pub mod rng;
pub mod score;
pub mod tally;
pub mod text_carriers;
pub mod values_decoys;
pub mod values_email;
pub mod values_finance;
pub mod values_ids;
pub mod values_ids_eu;
pub mod values_ids_world;
pub mod values_ip;
pub mod values_pem;
pub mod values_phone;
pub mod values_secrets;

use policy::RedactionKind;

pub use channels::Channel;
use rng::Rng;

/// The seed of the corpus the test asserts on.
pub const SEED: u64 = 0x7001_6A7E_C0DE_5EED;
/// How many items the test corpus has.
pub const ITEMS: usize = 7_000;

/// One value planted in an item.
#[derive(Clone, Debug)]
pub struct Planted {
    /// The kind it is, or looks like.
    pub kind: RedactionKind,
    /// True when it must be redacted; false for a look-alike that must stay.
    pub valid: bool,
    /// The value as written into the item (after the channel's encoding).
    pub text: String,
    /// The value as generated, before the channel's encoding.
    pub plain: String,
    /// What variant it is, for the reports (`"visa 16 grouped"`, `"fr national"`…).
    pub form: String,
    /// A field name for carriers that need one (`email`, `aws_secret_access_key`).
    pub key: String,
    /// Text that must stand right before it (`Bearer `, a PEM header); not part of the value.
    pub before: String,
    /// Text that must stand right after it (a PEM footer, `@host/db`); not part of the value.
    pub after: String,
}

impl Planted {
    /// A value of `kind` with the kind's default key.
    pub fn new(kind: RedactionKind, valid: bool, text: impl Into<String>, form: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            key: default_key(&kind).to_owned(),
            kind,
            valid,
            plain: text.clone(),
            text,
            form: form.into(),
            before: String::new(),
            after: String::new(),
        }
    }

    /// With a field name.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = key.into();
        self
    }

    /// With mandatory context around it.
    pub fn around(mut self, before: impl Into<String>, after: impl Into<String>) -> Self {
        self.before = before.into();
        self.after = after.into();
        self
    }

    /// True when the value (with its context) spans lines.
    pub fn multiline(&self) -> bool {
        self.text.contains('\n') || self.before.contains('\n') || self.after.contains('\n')
    }
}

/// The field name carriers use for a kind when the generator gives none.
pub fn default_key(kind: &RedactionKind) -> &'static str {
    match kind {
        RedactionKind::Email => "email",
        RedactionKind::Phone => "phone",
        RedactionKind::Iban => "iban",
        RedactionKind::Card => "card_number",
        RedactionKind::Ssn => "ssn",
        RedactionKind::Credentials => "secret",
        RedactionKind::DeTaxId => "steuer_id",
        RedactionKind::FrNir => "nir",
        RedactionKind::UkNino => "ni_number",
        RedactionKind::EsDni => "dni",
        RedactionKind::ItCodiceFiscale => "codice_fiscale",
        RedactionKind::BrCpf => "cpf",
        RedactionKind::CnResidentId => "resident_id",
        RedactionKind::SePersonnummer => "personnummer",
        RedactionKind::InAadhaar => "aadhaar",
        RedactionKind::PlPesel => "pesel",
        RedactionKind::NlBsn => "bsn",
        RedactionKind::Ipv4 => "client_ip",
        RedactionKind::Ipv6 => "client_ipv6",
        RedactionKind::Custom(_) => "value",
    }
}

/// A run of an item's string: carrier text, or one planted value (index into [`Item::planted`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The text as it is in the document.
    pub text: String,
    /// The planted value this run is, if any.
    pub value: Option<usize>,
}

/// The document of an item.
#[derive(Clone, Debug)]
pub enum Doc {
    /// Text, redacted with `redact_in`.
    Text(Vec<Piece>),
    /// A JSON value, redacted with `redact_json`; every string that holds planted values is
    /// listed with its JSON pointer.
    Json {
        /// The value to redact.
        value: serde_json::Value,
        /// `(pointer, pieces)` of every string leaf.
        strings: Vec<(String, Vec<Piece>)>,
    },
}

/// One corpus item.
#[derive(Clone, Debug)]
pub struct Item {
    /// Position in the corpus.
    pub id: usize,
    /// The carrier's name (`wiki`, `log`, `yaml`, `tool_result`…).
    pub carrier: &'static str,
    /// How the document is written.
    pub channel: Channel,
    /// The values planted in it.
    pub planted: Vec<Planted>,
    /// The document.
    pub doc: Doc,
}

impl Item {
    /// The document as text (JSON documents serialized), for reports.
    pub fn text(&self) -> String {
        match &self.doc {
            Doc::Text(pieces) => pieces.iter().map(|p| p.text.as_str()).collect(),
            Doc::Json { value, .. } => value.to_string(),
        }
    }
}

/// A language of the carrier text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// German.
    De,
    /// French.
    Fr,
    /// Spanish.
    Es,
    /// Italian.
    It,
    /// Dutch.
    Nl,
    /// Portuguese (Brazil).
    Pt,
}

/// Every language.
pub const LANGS: [Lang; 7] = [Lang::En, Lang::De, Lang::Fr, Lang::Es, Lang::It, Lang::Nl, Lang::Pt];

/// Draws one value of `kind` (two for an AWS key pair), valid or a look-alike, in a style that
/// fits `channel`.
pub fn draw(rng: &mut Rng, kind: &RedactionKind, valid: bool, channel: Channel) -> Vec<Planted> {
    let grouped = channel.wants_grouping();
    let one = match (kind, valid) {
        (RedactionKind::Email, true) => values_email::email(rng),
        (RedactionKind::Email, false) => values_email::email_look_alike(rng),
        (RedactionKind::Phone, true) => values_phone::phone(rng, grouped),
        (RedactionKind::Phone, false) => values_phone::phone_look_alike(rng),
        (RedactionKind::Iban, v) => values_finance::iban(rng, v, grouped),
        (RedactionKind::Card, v) => values_finance::card(rng, v, grouped),
        (RedactionKind::Ssn, v) => values_ids::ssn(rng, v, grouped),
        (RedactionKind::DeTaxId, v) => values_ids::de_tax_id(rng, v, grouped),
        (RedactionKind::FrNir, v) => values_ids::fr_nir(rng, v, grouped),
        (RedactionKind::UkNino, v) => values_ids::uk_nino(rng, v, grouped),
        (RedactionKind::EsDni, v) => values_ids_eu::es_dni(rng, v, grouped),
        (RedactionKind::ItCodiceFiscale, v) => values_ids_eu::it_codice_fiscale(rng, v, grouped),
        (RedactionKind::SePersonnummer, v) => values_ids_eu::se_personnummer(rng, v, grouped),
        (RedactionKind::PlPesel, v) => values_ids_eu::pl_pesel(rng, v, grouped),
        (RedactionKind::NlBsn, v) => values_ids_eu::nl_bsn(rng, v, grouped),
        (RedactionKind::BrCpf, v) => values_ids_world::br_cpf(rng, v, grouped),
        (RedactionKind::CnResidentId, v) => values_ids_world::cn_resident_id(rng, v, grouped),
        (RedactionKind::InAadhaar, v) => values_ids_world::in_aadhaar(rng, v, grouped),
        (RedactionKind::Ipv4, true) => values_ip::ipv4(rng),
        (RedactionKind::Ipv4, false) => values_ip::ipv4_look_alike(rng),
        (RedactionKind::Ipv6, true) => values_ip::ipv6(rng),
        (RedactionKind::Ipv6, false) => values_ip::ipv6_look_alike(rng),
        (RedactionKind::Credentials, true) => return values_secrets::credential(rng),
        (RedactionKind::Credentials, false) => values_decoys::credential_look_alike(rng),
        (RedactionKind::Custom(_), _) => return Vec::new(),
    };
    vec![one]
}

/// The corpus for `seed`: `count` items over every channel and carrier.
pub fn generate(seed: u64, count: usize) -> Vec<Item> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|id| {
            let mut item_rng = rng.fork(id as u64);
            // Plain text and JSON tool results are what the gateway sees most: twice their share.
            let channel = match id % (channels::ALL.len() + 2) {
                n if n < channels::ALL.len() => channels::ALL[n],
                n if n == channels::ALL.len() => Channel::Plain,
                _ => Channel::JsonValue,
            };
            carriers::item(&mut item_rng, id, channel)
        })
        .collect()
}
