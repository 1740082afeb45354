//! Words of the carrier texts: labels per kind and language, sentence templates, names, filler.
//!
//! Filler never contains personal data or secrets of its own (no unplanted addresses, phone
//! numbers or IPs): everything that must be redacted is a planted value, so a placeholder that
//! lands on filler is a false positive. Filler does contain the numbers real documents are full
//! of (timestamps, ids, durations, sizes, percentages), which is the point.

use policy::RedactionKind;

use super::rng::{HEX, Rng};
use super::{Lang, Planted};

/// The human label for a planted value in `lang` (`E-Mail`, `numéro de carte`, `password`).
pub fn label(planted: &Planted, lang: Lang) -> String {
    let i = lang as usize;
    let pick = |words: [&str; 7]| words[i].to_owned();
    // `iban_2` (a second value of one item) has the label of `iban`.
    let key = match planted.key.rsplit_once('_') {
        Some((base, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => base,
        _ => planted.key.as_str(),
    };
    match (&planted.kind, key) {
        (_, "order_id") => {
            pick(["order", "Bestellung", "commande", "pedido", "ordine", "bestelling", "pedido"])
        }
        (_, "invoice_no") => {
            pick(["invoice", "Rechnung", "facture", "factura", "fattura", "factuur", "fatura"])
        }
        (_, "date") => pick(["date", "Datum", "date", "fecha", "data", "datum", "data"]),
        (_, "time") => pick(["time", "Uhrzeit", "heure", "hora", "ora", "tijd", "hora"]),
        (_, "amount") => pick(["amount", "Betrag", "montant", "importe", "importo", "bedrag", "valor"]),
        (_, "password" | "passwd" | "pwd" | "db_password" | "smtp_password") => {
            pick(["password", "Passwort", "mot de passe", "contraseña", "password", "wachtwoord", "senha"])
        }
        (RedactionKind::Email, "email") => {
            pick(["email", "E-Mail", "e-mail", "correo", "email", "e-mail", "e-mail"])
        }
        (RedactionKind::Phone, "phone") => {
            pick(["phone", "Telefon", "téléphone", "teléfono", "telefono", "telefoon", "telefone"])
        }
        (RedactionKind::Iban, _) => "IBAN".into(),
        (RedactionKind::Card, _) => pick([
            "card number",
            "Kartennummer",
            "numéro de carte",
            "número de tarjeta",
            "numero di carta",
            "kaartnummer",
            "número do cartão",
        ]),
        (RedactionKind::Ssn, _) => "SSN".into(),
        (RedactionKind::DeTaxId, _) => {
            pick(["tax ID", "Steuer-ID", "Steuer-ID", "Steuer-ID", "Steuer-ID", "Steuer-ID", "Steuer-ID"])
        }
        (RedactionKind::FrNir, _) => {
            pick(["NIR", "Sozialversicherungsnr.", "n° de sécurité sociale", "NIR", "NIR", "NIR", "NIR"])
        }
        (RedactionKind::UkNino, _) => {
            pick(["NI number", "NI-Nummer", "NI number", "NI number", "NI number", "NI-nummer", "NI number"])
        }
        (RedactionKind::EsDni, _) => "DNI/NIE".into(),
        (RedactionKind::ItCodiceFiscale, _) => pick([
            "fiscal code",
            "Codice fiscale",
            "code fiscal",
            "código fiscal",
            "codice fiscale",
            "fiscale code",
            "código fiscal",
        ]),
        (RedactionKind::BrCpf, _) => "CPF".into(),
        (RedactionKind::CnResidentId, _) => pick([
            "resident ID",
            "chinesische Ausweisnummer",
            "numéro d'identité chinois",
            "documento chino",
            "documento cinese",
            "Chinees identiteitsnummer",
            "identidade chinesa",
        ]),
        (RedactionKind::SePersonnummer, _) => pick([
            "Swedish ID",
            "schwedische ID",
            "ID suédois",
            "ID sueco",
            "ID svedese",
            "Zweeds ID",
            "ID sueco",
        ]),
        (RedactionKind::InAadhaar, _) => "Aadhaar".into(),
        (RedactionKind::PlPesel | RedactionKind::NlBsn, _) => {
            pick(["no.", "Nr.", "n°", "n.º", "n.", "nr.", "nº"])
        }
        (RedactionKind::Ipv4 | RedactionKind::Ipv6, "client_ip" | "client_ipv6") => pick([
            "IP address",
            "IP-Adresse",
            "adresse IP",
            "dirección IP",
            "indirizzo IP",
            "IP-adres",
            "endereço IP",
        ]),
        (_, key) => key.replace('_', " "),
    }
}

/// A sentence about a value, with `{label}` and `{value}` slots and a `{name}`.
pub fn sentence(rng: &mut Rng, lang: Lang) -> &'static str {
    let options: &[&str] = match lang {
        Lang::En => &[
            "Please use {label} {value} for this request.",
            "{name} ({label}: {value}) joined the team last spring.",
            "The {label} on file is {value}; update it in the portal if it changed.",
            "As discussed, {label} {value} will be used from now on.",
            "Can you double-check {value}? It is listed as the {label} for {name}.",
        ],
        Lang::De => &[
            "Bitte verwenden Sie für diesen Antrag {label} {value}.",
            "{name} ({label}: {value}) ist seit dem Frühjahr im Team.",
            "Hinterlegt ist {label} {value}; bitte im Portal ändern, falls veraltet.",
            "Wie besprochen gilt ab sofort {label} {value}.",
        ],
        Lang::Fr => &[
            "Merci d'utiliser {label} {value} pour cette demande.",
            "{name} ({label} : {value}) a rejoint l'équipe au printemps.",
            "Le {label} enregistré est {value} ; mettez-le à jour si besoin.",
            "Comme convenu, {label} {value} sera utilisé désormais.",
        ],
        Lang::Es => &[
            "Por favor, use {label} {value} para esta solicitud.",
            "{name} ({label}: {value}) se unió al equipo en primavera.",
            "El dato registrado ({label}) es {value}; actualícelo si cambió.",
        ],
        Lang::It => &[
            "Si prega di usare {label} {value} per questa richiesta.",
            "{name} ({label}: {value}) è entrato nel team in primavera.",
            "Il dato registrato ({label}) è {value}; aggiornalo se è cambiato.",
        ],
        Lang::Nl => &[
            "Gebruik {label} {value} voor deze aanvraag.",
            "{name} ({label}: {value}) kwam dit voorjaar bij het team.",
            "Het geregistreerde gegeven ({label}) is {value}; pas het aan als het veranderd is.",
        ],
        Lang::Pt => &[
            "Por favor, use {label} {value} para esta solicitação.",
            "{name} ({label}: {value}) entrou na equipe na primavera.",
            "O dado cadastrado ({label}) é {value}; atualize se mudou.",
        ],
    };
    rng.word(options)
}

/// A sentence of filler with everyday numbers and no personal data.
pub fn filler(rng: &mut Rng, lang: Lang) -> String {
    let date = super::values_decoys::date(rng);
    let n = rng.range(2, 480);
    let pct = rng.range(1, 99);
    let ticket = rng.range(1000, 99999);
    match (lang, rng.below(4)) {
        (Lang::De, 0) => format!("Die Migration ist für den {date} geplant und betrifft {n} Konten."),
        (Lang::De, 1) => format!("Ticket #{ticket} wurde geschlossen; {pct} % der Fälle sind erledigt."),
        (Lang::De, _) => format!(
            "Stand {date}: Version 3.{} ist ausgerollt, Budget {}.",
            rng.below(20),
            super::values_decoys::price(rng)
        ),
        (Lang::Fr, 0) => format!("La migration est prévue le {date} et concerne {n} comptes."),
        (Lang::Fr, 1) => format!("Le ticket n° {ticket} est clos ; {pct} % des cas sont traités."),
        (Lang::Fr, _) => format!(
            "Au {date}, la version 3.{} est déployée, budget {}.",
            rng.below(20),
            super::values_decoys::price(rng)
        ),
        (Lang::Es | Lang::Pt, 0) => format!("La migración está prevista para el {date} ({n} cuentas)."),
        (Lang::It, 0) => format!("La migrazione è prevista per il {date} ({n} account)."),
        (Lang::Nl, 0) => format!("De migratie staat gepland op {date} en raakt {n} accounts."),
        (_, 0) => format!("The migration is scheduled for {date} and affects {n} accounts."),
        (_, 1) => format!(
            "Ticket #{ticket} was closed; {pct}% of the cases are done (build {}).",
            rng.string(HEX, 7)
        ),
        (_, 2) => format!(
            "Order {} shipped on {date}, total {}.",
            rng.range(10_000, 999_999),
            super::values_decoys::price(rng)
        ),
        _ => format!(
            "Release 2.{}.{} went out at {}; p95 latency {} ms.",
            rng.below(30),
            rng.below(10),
            super::values_decoys::time(rng),
            rng.range(20, 900)
        ),
    }
}

/// A person's name (names are not a built-in kind; they stay in the text).
pub fn name(rng: &mut Rng) -> String {
    let first =
        ["Jane", "Lukas", "Chloé", "Marco", "Sanne", "Priya", "João", "Hannah", "Pablo", "Ingrid", "Ahmed"];
    let last = [
        "Doe", "Weber", "Martin", "Rossi", "de Vries", "Sharma", "Silva", "Fischer", "García", "Berg",
        "Haddad",
    ];
    format!("{} {}", rng.pick(&first), rng.pick(&last))
}

/// A log timestamp.
pub fn timestamp(rng: &mut Rng) -> String {
    format!(
        "20{}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        rng.range(22, 26),
        rng.range(1, 12),
        rng.range(1, 28),
        rng.below(24),
        rng.below(60),
        rng.below(60),
        rng.below(1000)
    )
}
