//! Phone numbers in national and international formats, checked with libphonenumber's metadata.
//!
//! Numbers are drawn from the real numbering ranges and masks of `phone_plans`. Every generated
//! number is parsed with the `phonenumber` crate (the national form with its
//! region, the international form without) and kept only when `is_valid`; otherwise it is drawn
//! again. Look-alikes are phone-shaped digit runs, order numbers, dates, times, prices and other
//! numbers that are checked to be invalid in every default region (US GB DE FR ES IT NL BR AU IN).
//! Both are drawn into pools once per process (from a fixed seed) and items pick from them.

use std::str::FromStr;
use std::sync::LazyLock;

use phonenumber::country::Id;
use policy::RedactionKind;

use super::Planted;
use super::phone_plans::{PLANS, fill, nsn};
use super::rng::Rng;

/// The default regions of the redactor.
pub const DEFAULT_REGIONS: [&str; 10] = ["US", "GB", "DE", "FR", "ES", "IT", "NL", "BR", "AU", "IN"];

/// True when libphonenumber accepts `text` as a valid number, read in `region` (None: it must
/// carry its own `+` country code).
pub fn valid_in(text: &str, region: Option<&str>) -> bool {
    let id = match region {
        Some(region) => match Id::from_str(region) {
            Ok(id) => Some(id),
            Err(_) => return false,
        },
        None => None,
    };
    phonenumber::parse(id, text).map(|number| phonenumber::is_valid(&number)).unwrap_or(false)
}

/// True when `text` is a valid number in any default region (or internationally).
pub fn valid_anywhere(text: &str) -> bool {
    valid_in(text, None) || DEFAULT_REGIONS.iter().any(|region| valid_in(text, Some(region)))
}

/// The part of a phone value that libphonenumber checks (the extension cut off).
pub fn without_extension(text: &str) -> &str {
    [" x", " ext", ", ext"].iter().filter_map(|marker| text.find(marker)).min().map_or(text, |at| &text[..at])
}

/// The region a phone of this corpus is to be read in (None for `+` numbers).
pub fn region_of(form: &str) -> Option<&str> {
    let region = form.split(' ').next()?;
    (!form.contains("international")).then_some(region)
}

/// For each of `texts`, whether it is valid in any default region or internationally. Checks
/// region by region: libphonenumber's regex cache holds 100 patterns, so walking the texts
/// region-major keeps it warm (text-major recompiles, which is slow in debug builds).
pub fn valid_anywhere_batch(texts: &[String]) -> Vec<bool> {
    let mut valid = vec![false; texts.len()];
    for region in std::iter::once(None).chain(DEFAULT_REGIONS.iter().map(|r| Some(*r))) {
        for (text, valid) in texts.iter().zip(valid.iter_mut()) {
            *valid = *valid || valid_in(text, region);
        }
    }
    valid
}

/// Valid numbers (text, form) drawn plan by plan, and phone-shaped look-alikes (text, form, key)
/// that no default region accepts. Built once per process from a fixed seed, plan by plan and
/// region by region for the regex cache's sake; items draw from these pools.
struct Pools {
    valid: Vec<(String, String)>,
    spaced: Vec<usize>,
    look_alikes: Vec<(String, &'static str, &'static str)>,
}

static POOLS: LazyLock<Pools> = LazyLock::new(build_pools);

const POOL_SEED: u64 = 0x0050_4F4E_E5EE_D001;

fn build_pools() -> Pools {
    let mut rng = Rng::new(POOL_SEED);
    let mut valid = Vec::new();
    for (weight, plan) in PLANS {
        let target = *weight as usize * 40;
        let mut made = 0;
        let mut attempts = 0;
        while made < target && attempts < target * 10 {
            attempts += 1;
            let international = plan.national.is_empty() || rng.chance(0.4);
            let mask = *rng.pick(if international { plan.international } else { plan.national });
            let number = nsn(&mut rng, plan.nsn);
            let text = if international {
                fill(mask, &number)
            } else {
                fill(mask, &format!("{}{number}", plan.trunk))
            };
            if !valid_in(&text, (!international).then_some(plan.region)) {
                continue;
            }
            let mut form =
                format!("{} {}", plan.region, if international { "international" } else { "national" });
            if !mask.contains([' ', '-', '.', '/', '(']) {
                form.push_str(" compact");
            }
            valid.push((text, form));
            made += 1;
        }
    }
    let spaced = (0..valid.len()).filter(|&i| valid[i].0.contains(' ')).collect();
    let candidates: Vec<(String, &'static str, &'static str)> =
        (0..1000).map(|_| look_alike_candidate(&mut rng)).collect();
    let texts: Vec<String> = candidates.iter().map(|c| c.0.clone()).collect();
    let look_alikes = candidates
        .into_iter()
        .zip(valid_anywhere_batch(&texts))
        .filter(|(_, v)| !v)
        .map(|(c, _)| c)
        .collect();
    Pools { valid, spaced, look_alikes }
}

/// A valid phone number; `grouped` asks for one with spaces.
pub fn phone(rng: &mut Rng, grouped: bool) -> Planted {
    let pools = &*POOLS;
    let index = if grouped { *rng.pick(&pools.spaced) } else { rng.below(pools.valid.len()) };
    let (mut text, mut form) = pools.valid[index].clone();
    if form.starts_with("US") && rng.chance(0.25) {
        text.push_str(&match rng.below(4) {
            0 => format!(" x{}", rng.range(10, 9999)),
            1 => format!(" ext. {}", rng.range(10, 999)),
            2 => format!(" ext {}", rng.range(100, 9999)),
            _ => format!(", ext. {}", rng.range(1, 99)),
        });
        form.push_str(" extension");
    }
    Planted::new(RedactionKind::Phone, true, text, form)
}

/// Phone-shaped masks for look-alikes.
const LOOK_ALIKE_MASKS: &[&str] = &[
    "(1##) ###-####",
    "(0##) ###-####",
    "1##-###-####",
    "0## ### ## ##",
    "00 ## ## ## ##",
    "+0 ### ### ####",
    "+## 0 ## ## ##",
    "0#### ###",
    "### ### ### ###",
    "#### #### ##",
];

fn look_alike_candidate(rng: &mut Rng) -> (String, &'static str, &'static str) {
    match rng.below(12) {
        0..=3 => {
            let mask = *rng.pick(LOOK_ALIKE_MASKS);
            (fill(mask, &rng.digits(16)), "phone-shaped", "phone")
        }
        4 => (format!("0{}", rng.digits(9)), "order number", "order_id"),
        5 => (format!("{}", rng.range(1_000_000, 99_999_999)), "invoice number", "invoice_no"),
        6 => (super::values_decoys::date(rng), "date", "date"),
        7 => (super::values_decoys::time(rng), "time", "time"),
        8 => (super::values_decoys::price(rng), "price", "amount"),
        9 => (super::values_decoys::isbn(rng), "isbn", "isbn"),
        10 => (format!("1Z{}", rng.string(super::rng::UPPER_DIGITS, 16)), "tracking number", "tracking"),
        _ => (format!("{}-{}-{}", rng.digits(3), rng.digits(4), rng.digits(4)), "reference", "reference"),
    }
}

/// A number that looks like a phone number but is none in any default region.
pub fn phone_look_alike(rng: &mut Rng) -> Planted {
    let (text, form, key) = rng.pick(&POOLS.look_alikes).clone();
    Planted::new(RedactionKind::Phone, false, text, form).key(key)
}
