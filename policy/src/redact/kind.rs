//! The kinds of data the redactor knows, their names in a policy and their placeholder labels.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::ids::RedactorName;

/// A kind of personal data or secret, and the label of its placeholder (`[email 1]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RedactionKind {
    /// Email addresses whose top-level domain is in IANA's root zone.
    Email,
    /// Phone numbers valid by libphonenumber's metadata.
    Phone,
    /// IBANs: the country's length and mod-97.
    Iban,
    /// Payment card numbers: 12–19 digits, a known issuer prefix, Luhn.
    Card,
    /// US Social Security numbers outside the never-issued ranges.
    Ssn,
    /// Secrets: private keys, JWTs, cloud and SaaS tokens, passwords in URLs and assignments.
    Credentials,
    /// The German tax identification number (Steuer-IdNr), check digit verified.
    DeTaxId,
    /// The French social security number (NIR), key verified.
    FrNir,
    /// The UK National Insurance number.
    UkNino,
    /// The Spanish DNI and NIE, control letter verified.
    EsDni,
    /// The Italian codice fiscale, check letter verified (omocodia included).
    ItCodiceFiscale,
    /// The Brazilian CPF, both check digits verified.
    BrCpf,
    /// The Chinese resident identity number, date of birth and MOD 11-2 check verified.
    CnResidentId,
    /// The Swedish personnummer and samordningsnummer, date and Luhn verified.
    SePersonnummer,
    /// The Indian Aadhaar number, Verhoeff check digit verified.
    InAadhaar,
    /// The Polish PESEL, date and check digit verified; only after the word PESEL.
    PlPesel,
    /// The Dutch BSN, eleven-proof verified; only after a word that names it.
    NlBsn,
    /// IPv4 addresses.
    Ipv4,
    /// IPv6 addresses.
    Ipv6,
    /// An admin `[[redactor]]`.
    Custom(RedactorName),
}

impl RedactionKind {
    /// Every built-in kind: what `redact = ["all"]` stands for.
    pub const BUILTIN: [RedactionKind; 19] = [
        Self::Email,
        Self::Phone,
        Self::Iban,
        Self::Card,
        Self::Ssn,
        Self::Credentials,
        Self::DeTaxId,
        Self::FrNir,
        Self::UkNino,
        Self::EsDni,
        Self::ItCodiceFiscale,
        Self::BrCpf,
        Self::CnResidentId,
        Self::SePersonnummer,
        Self::InAadhaar,
        Self::PlPesel,
        Self::NlBsn,
        Self::Ipv4,
        Self::Ipv6,
    ];

    /// The kind's name, as written in `redact = [...]`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Email => "email",
            Self::Phone => "phone",
            Self::Iban => "iban",
            Self::Card => "card",
            Self::Ssn => "ssn",
            Self::Credentials => "credentials",
            Self::DeTaxId => "de_tax_id",
            Self::FrNir => "fr_nir",
            Self::UkNino => "uk_nino",
            Self::EsDni => "es_dni",
            Self::ItCodiceFiscale => "it_codice_fiscale",
            Self::BrCpf => "br_cpf",
            Self::CnResidentId => "cn_resident_id",
            Self::SePersonnummer => "se_personnummer",
            Self::InAadhaar => "in_aadhaar",
            Self::PlPesel => "pl_pesel",
            Self::NlBsn => "nl_bsn",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
            Self::Custom(name) => name.as_str(),
        }
    }

    /// The label inside its placeholders: the name, except `credential` for one secret.
    pub fn label(&self) -> &str {
        match self {
            Self::Credentials => "credential",
            other => other.as_str(),
        }
    }

    /// The built-in kind with this name.
    pub fn builtin(name: &str) -> Option<Self> {
        Self::BUILTIN.into_iter().find(|kind| kind.as_str() == name)
    }

    /// Whether this is a built-in kind.
    pub fn is_builtin(&self) -> bool {
        !matches!(self, Self::Custom(_))
    }
}

impl fmt::Display for RedactionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RedactionKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl FromStr for RedactionKind {
    type Err = std::convert::Infallible;

    /// Built-in names map to their kind; any other name is taken as a custom redactor (the policy
    /// loader checks that it is declared).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(Self::builtin(name).unwrap_or_else(|| Self::Custom(RedactorName::new(name))))
    }
}
