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
    /// IPv4 addresses.
    Ipv4,
    /// IPv6 addresses.
    Ipv6,
    /// An admin `[[redactor]]`.
    Custom(RedactorName),
}

impl RedactionKind {
    /// Every built-in kind: what `redact = ["all"]` stands for.
    pub const BUILTIN: [RedactionKind; 11] = [
        Self::Email,
        Self::Phone,
        Self::Iban,
        Self::Card,
        Self::Ssn,
        Self::Credentials,
        Self::DeTaxId,
        Self::FrNir,
        Self::UkNino,
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
