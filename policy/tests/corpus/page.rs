//! A typical intranet page as text, for the speed figure.
//!
//! What the gateway mostly redacts is ordinary page text: headings, prose, tables flattened to
//! text by `textContent`, dates, prices, order and ticket numbers, versions, and only a few
//! personal values. [`typical_page`] writes such a page of about `bytes` bytes, deterministic for
//! a seed, with a handful of planted values of every kind (1 to 2 per KB).

use policy::RedactionKind;

use super::labels::{filler, name, timestamp};
use super::rng::Rng;
use super::values_decoys::{date, price};
use super::{Channel, LANGS, draw};

/// A page of roughly `bytes` bytes for `seed`.
pub fn typical_page(seed: u64, bytes: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut page = String::with_capacity(bytes + 512);
    let mut section = 0;
    while page.len() < bytes {
        section += 1;
        let lang = *rng.pick(&LANGS);
        page.push_str(&format!(
            "\n{section}. {}\n",
            rng.pick(&["Overview", "Team", "Orders", "Billing", "Release notes", "On-call", "Kontakt"])
        ));
        for _ in 0..rng.range(2, 4) {
            page.push_str(&filler(&mut rng, lang));
            page.push(' ');
        }
        page.push('\n');
        match rng.below(3) {
            0 => order_table(&mut rng, &mut page),
            1 => release_notes(&mut rng, &mut page),
            _ => {
                let kind = rng.pick(&RedactionKind::BUILTIN).clone();
                for value in draw(&mut rng, &kind, true, Channel::Plain) {
                    let person = name(&mut rng);
                    page.push_str(&format!(
                        "Contact {person}: {}{}{} (since {}).\n",
                        value.before,
                        value.text,
                        value.after,
                        date(&mut rng)
                    ));
                }
            }
        }
    }
    page
}

/// A table as `textContent` flattens it: cells separated by tabs, rows by newlines.
fn order_table(rng: &mut Rng, page: &mut String) {
    page.push_str("Order\tDate\tItems\tTotal\tStatus\n");
    for _ in 0..rng.range(4, 10) {
        page.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            rng.range(100_000, 999_999),
            date(rng),
            rng.range(1, 40),
            price(rng),
            rng.pick(&["shipped", "open", "cancelled", "versandt", "livré"])
        ));
    }
}

fn release_notes(rng: &mut Rng, page: &mut String) {
    for _ in 0..rng.range(3, 6) {
        page.push_str(&format!(
            "- v{}.{}.{} ({}): {} #{} — build {} at {}\n",
            rng.range(1, 9),
            rng.below(20),
            rng.below(30),
            date(rng),
            rng.pick(&[
                "fixed the export of large reports",
                "faster search",
                "new approval flow",
                "updated dependencies"
            ]),
            rng.range(100, 9999),
            rng.range(1000, 99999),
            timestamp(rng)
        ));
    }
}
