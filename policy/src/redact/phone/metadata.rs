//! libphonenumber's rules for one region, compiled once from the `phonenumber` crate's metadata.
//!
//! The crate's own `parse`/`is_valid` compile their patterns into a small shared cache behind a
//! global lock; with several regions in use the cache thrashes and every check recompiles
//! regexes (a 64 KB page took 14 ms). Here each region's patterns are compiled once per process
//! with `regex` and the checks follow libphonenumber's definitions:
//! - the national prefix for parsing is stripped (with its transform rule where the region has
//!   one), and kept only when the rest still fits the region's general pattern;
//! - a number is valid when it matches the general pattern and one of the number types
//!   (premium rate, toll free, shared cost, VoIP, personal, pager, UAN, voicemail, fixed line,
//!   mobile), each with its possible lengths;
//! - a format requires the trunk prefix when its national-prefix formatting rule writes it and
//!   does not say it is optional.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, OnceLock, RwLock};

use phonenumber::metadata::{DATABASE, Descriptor, Metadata};
use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

/// A number type's pattern and possible lengths.
struct Pattern {
    regex: Regex,
    lengths: Vec<usize>,
}

impl Pattern {
    fn compile(descriptor: &Descriptor) -> Option<Self> {
        Some(Self {
            regex: anchored(descriptor.national_number().as_str(), true)?,
            lengths: descriptor.possible_length().iter().map(|&length| usize::from(length)).collect(),
        })
    }

    /// Whether a number of this length can match (checked before any regex runs).
    fn fits_length(&self, national: &str) -> bool {
        self.lengths.is_empty() || self.lengths.contains(&national.len())
    }

    fn matches(&self, national: &str) -> bool {
        self.fits_length(national) && self.regex.is_match(national)
    }
}

/// A region's number types (premium rate … mobile) as one pattern per number length: a number
/// is of some type when the pattern for its length matches, one regex search instead of one per
/// type.
struct Types {
    /// Indexed by the national number's length; `None` where no type has that length.
    by_length: Vec<Option<Regex>>,
}

impl Types {
    /// One pattern per length a checked number can have (at most `MAX_DIGITS + 2` digits); the
    /// lengths whose types are the same share one compiled pattern.
    fn compile(descriptors: &[&Descriptor]) -> Option<Self> {
        let mut compiled: HashMap<String, Regex> = HashMap::new();
        let mut by_length = Vec::new();
        for length in 0..=super::MAX_DIGITS + 2 {
            let sources: Vec<String> = descriptors
                .iter()
                .filter(|d| {
                    d.possible_length().is_empty()
                        || d.possible_length().iter().any(|&l| usize::from(l) == length)
                })
                .map(|d| format!("(?:{})", d.national_number().as_str()))
                .collect();
            if sources.is_empty() {
                by_length.push(None);
                continue;
            }
            let source = sources.join("|");
            let regex = match compiled.get(&source) {
                Some(regex) => regex.clone(),
                None => {
                    let regex = anchored(&source, true)?;
                    compiled.insert(source, regex.clone());
                    regex
                }
            };
            by_length.push(Some(regex));
        }
        Some(Self { by_length })
    }

    fn any_matches(&self, national: &str) -> bool {
        self.by_length
            .get(national.len())
            .and_then(Option::as_ref)
            .is_some_and(|regex| regex.is_match(national))
    }
}

/// One region's rules.
pub(super) struct RegionRules {
    /// ISO 3166 code (`"US"`), or `"001"` for non-geographic codes.
    pub(super) id: String,
    /// The country calling code, and its regions once looked up.
    code: u16,
    calling_code: OnceLock<Arc<CallingCode>>,
    /// Whether it is the main region of its code (`US` for +1), whose parsing rules apply to
    /// numbers written with the code.
    main: bool,
    /// For a region sharing its code: the leading digits that pick it (NANP area codes).
    leading: Option<Regex>,
    trunk: Option<String>,
    prefix_for_parsing: Option<Regex>,
    transform: Option<String>,
    general: Pattern,
    types: Types,
    /// Leading digits (anchored at the start), whole pattern, and whether the trunk prefix must
    /// be written with numbers of this format.
    formats: Vec<(Option<Regex>, Regex, bool)>,
    /// What callers in the region dial before a country code instead of `+` (`011` in the
    /// NANP, `00` in most of the world, `0011` in Australia), anchored at the start.
    pub(super) exit_prefix: Option<Regex>,
}

impl RegionRules {
    fn compile(meta: &Metadata) -> Option<Self> {
        let descriptors = meta.descriptors();
        let types = [
            descriptors.premium_rate(),
            descriptors.toll_free(),
            descriptors.shared_cost(),
            descriptors.voip(),
            descriptors.personal_number(),
            descriptors.pager(),
            descriptors.uan(),
            descriptors.voicemail(),
            descriptors.fixed_line(),
            descriptors.mobile(),
        ];
        let formats = meta
            .formats()
            .iter()
            .filter_map(|format| {
                let leading = match format.leading_digits().last() {
                    Some(leading) => Some(anchored(leading.as_str(), false)?),
                    None => None,
                };
                let trunk_required = format.national_prefix().is_some_and(|rule| rule.contains("$NP"))
                    && !format.is_national_prefix_optional();
                Some((leading, anchored(format.pattern().as_str(), true)?, trunk_required))
            })
            .collect();
        Some(Self {
            id: meta.id().to_owned(),
            code: meta.country_code(),
            calling_code: OnceLock::new(),
            main: meta.is_main_country_for_code(),
            leading: match meta.leading_digits() {
                Some(pattern) => Some(anchored(pattern.as_str(), false)?),
                None => None,
            },
            trunk: meta.national_prefix().map(str::to_owned),
            // Without its own pattern, the national prefix is what is stripped.
            prefix_for_parsing: match (meta.national_prefix_for_parsing(), meta.national_prefix()) {
                (Some(pattern), _) => Some(anchored(pattern.as_str(), false)?),
                (None, Some(prefix)) => Some(anchored(&regex::escape(prefix), false)?),
                (None, None) => None,
            },
            transform: meta.national_prefix_transform_rule().map(str::to_owned),
            exit_prefix: match meta.international_prefix() {
                Some(pattern) => Some(anchored(pattern.as_str(), false)?),
                None => None,
            },
            general: Pattern::compile(descriptors.general())?,
            types: Types::compile(&types.into_iter().flatten().collect::<Vec<_>>())?,
            formats,
        })
    }

    /// The national significant number of `digits` (written without the country code), and
    /// whether a national prefix was written and stripped.
    fn national<'a>(&self, digits: &'a str) -> (std::borrow::Cow<'a, str>, bool) {
        let Some(prefix) = &self.prefix_for_parsing else {
            return (digits.into(), false);
        };
        // Captures are only needed for a transform rule; a plain match is much cheaper.
        let (matched, stripped): (usize, std::borrow::Cow<'a, str>) = match &self.transform {
            None => match prefix.find(digits) {
                Some(found) => (found.end(), digits[found.end()..].into()),
                None => return (digits.into(), false),
            },
            Some(rule) => {
                let Some(captures) = prefix.captures(digits) else {
                    return (digits.into(), false);
                };
                let matched = captures.get(0).map_or(0, |m| m.end());
                if captures.get(1).is_some() {
                    let mut replaced = String::new();
                    captures.expand(rule, &mut replaced);
                    (matched, format!("{replaced}{}", &digits[matched..]).into())
                } else {
                    (matched, digits[matched..].into())
                }
            }
        };
        // As libphonenumber: keep the stripped form only when it still fits the region.
        if matched > 0 && self.general.matches(&stripped) { (stripped, true) } else { (digits.into(), false) }
    }

    /// Whether `digits`, written without a country code, is a valid number of this region's
    /// code, written as the region writes it. As libphonenumber does, the region's own parsing
    /// rules find the national number, which any region sharing the code may own (a Canadian
    /// number read with the US rules is valid).
    pub(super) fn accepts_national(&self, digits: &str) -> bool {
        let (national, trunk_written) = self.national(digits);
        self.calling_code.get_or_init(|| CallingCode::of(self.code)).any_owner(&national, |region| {
            region.is_valid(&national) && (trunk_written || !region.trunk_required(&national))
        })
    }

    /// Whether the national significant number is a valid number of this region.
    fn is_valid(&self, national: &str) -> bool {
        self.general.matches(national) && self.types.any_matches(national)
    }

    /// Whether this region's format for `national` writes the trunk prefix, without saying it
    /// is optional.
    fn trunk_required(&self, national: &str) -> bool {
        self.trunk.is_some()
            && self
                .formats
                .iter()
                .find(|(leading, pattern, _)| {
                    leading.as_ref().is_none_or(|leading| leading.is_match(national))
                        && pattern.is_match(national)
                })
                .is_some_and(|(_, _, required)| *required)
    }
}

/// The rules of a region by its ISO code (`"US"`), compiled on first use and kept.
pub(super) fn region(id: &str) -> Option<Arc<RegionRules>> {
    static REGIONS: LazyLock<RwLock<HashMap<String, Option<Arc<RegionRules>>>>> =
        LazyLock::new(Default::default);
    if let Some(found) = REGIONS.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(id) {
        return found.clone();
    }
    let compiled = DATABASE.by_id(id).and_then(RegionRules::compile).map(Arc::new);
    REGIONS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(id.to_owned(), compiled.clone());
    compiled
}

/// The regions of one calling code, and which of them may own a national number: as
/// libphonenumber picks a region of a shared code, a region with a leading-digits pattern owns
/// only the numbers it matches (the NANP's area codes), one without owns any.
struct CallingCode {
    regions: Vec<Arc<RegionRules>>,
    /// The leading-digits patterns of the regions that have one, searched in one pass;
    /// `leading_of[i]` is the index in `regions` of pattern `i`.
    leading: RegexSet,
    leading_of: Vec<usize>,
}

impl CallingCode {
    /// The regions of `code`, compiled on first use and kept.
    fn of(code: u16) -> Arc<CallingCode> {
        static CODES: LazyLock<RwLock<HashMap<u16, Arc<CallingCode>>>> = LazyLock::new(Default::default);
        if let Some(found) = CODES.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(&code) {
            return found.clone();
        }
        let regions: Vec<Arc<RegionRules>> =
            DATABASE.region(&code).unwrap_or_default().into_iter().filter_map(region).collect();
        let with_leading: Vec<(usize, &Regex)> = regions
            .iter()
            .enumerate()
            .filter_map(|(index, region)| region.leading.as_ref().map(|leading| (index, leading)))
            .collect();
        // Each pattern already compiled alone, so the set compiles too; a set that does not
        // (it never should) leaves only the regions without a pattern as owners.
        let sources: Vec<&str> = with_leading.iter().map(|(_, leading)| leading.as_str()).collect();
        let leading = anchored_set(&sources).unwrap_or_else(|_| RegexSet::empty());
        let leading_of = match leading.is_empty() {
            true => Vec::new(),
            false => with_leading.iter().map(|(index, _)| *index).collect(),
        };
        let compiled = Arc::new(CallingCode { regions, leading, leading_of });
        CODES.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(code, compiled.clone());
        compiled
    }

    /// The main region of the code (whose parsing rules apply to international numbers).
    fn main(&self) -> Option<&Arc<RegionRules>> {
        self.regions.iter().find(|region| region.main).or(self.regions.first())
    }

    /// Whether `accepts` holds for a region that may own `national`: first the regions without
    /// a leading-digits pattern, then, only if none accepted, those whose pattern matches.
    fn any_owner(&self, national: &str, mut accepts: impl FnMut(&RegionRules) -> bool) -> bool {
        if self.regions.iter().filter(|region| region.leading.is_none()).any(|region| accepts(region)) {
            return true;
        }
        !self.leading.is_empty()
            && self.regions.iter().any(|region| region.general.fits_length(national))
            && self
                .leading
                .matches(national)
                .iter()
                .any(|matched| accepts(&self.regions[self.leading_of[matched]]))
    }
}

/// Whether `digits` (country code first, no `+`) is a valid international number: the code's
/// main region's parsing rules give the national number, and a region of the code owns it.
pub(super) fn is_valid_international(digits: &str) -> bool {
    (1..=3).any(|length| is_valid_with_code(digits, length))
}

/// Whether `digits` are a valid international number whose country code is their first
/// `length` digits.
pub(super) fn is_valid_with_code(digits: &str, length: usize) -> bool {
    if digits.len() <= length {
        return false;
    }
    let Ok(code) = digits[..length].parse::<u16>() else { return false };
    let code = CallingCode::of(code);
    let Some(main) = code.main() else { return false };
    let (national, _) = main.national(&digits[length..]);
    code.any_owner(&national, |region| region.is_valid(&national))
}

/// A metadata pattern as a `regex`, anchored at the start (and at the end when `whole`).
///
/// Compiled with ASCII classes (`\d` is `[0-9]`): every text these patterns see is ASCII digits
/// (`Recognizer::valid` keeps only those, and a transform rule writes only digits), on which the
/// ASCII and the Unicode classes agree. Unicode's `\d` (some 60 ranges of UTF-8 sequences)
/// made the compiled patterns of a few regions hold about 35 MB. A pattern that does not
/// compile without Unicode is compiled with it, as before.
fn anchored(source: &str, whole: bool) -> Option<Regex> {
    let source = if whole { format!("^(?:{source})$") } else { format!("^(?:{source})") };
    ascii_classes_first(|unicode| RegexBuilder::new(&source).ignore_whitespace(true).unicode(unicode).build())
        .ok()
}

/// The set of `patterns` (already compiled alone by [`anchored`]), with the same choice of
/// classes.
fn anchored_set(patterns: &[&str]) -> Result<RegexSet, regex::Error> {
    ascii_classes_first(|unicode| {
        RegexSetBuilder::new(patterns).ignore_whitespace(true).unicode(unicode).build()
    })
}

/// `build` with ASCII classes, or with Unicode ones when the pattern needs them.
fn ascii_classes_first<T>(build: impl Fn(bool) -> Result<T, regex::Error>) -> Result<T, regex::Error> {
    build(false).or_else(|_| build(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_region_of_every_calling_code_compiles() {
        // A region whose rules fail to compile would validate none of its numbers, and its
        // numbers would reach the model unredacted.
        let mut regions = 0;
        for code in 1..=999_u16 {
            for id in DATABASE.region(&code).unwrap_or_default() {
                assert!(region(id).is_some(), "region {id} (+{code}) does not compile");
                regions += 1;
            }
            assert!(
                CallingCode::of(code).regions.len() == DATABASE.region(&code).unwrap_or_default().len(),
                "+{code}: a region is missing from its calling code"
            );
        }
        assert!(regions > 200, "only {regions} regions in the metadata");
    }

    #[test]
    fn ascii_classes_match_ascii_digits_as_unicode_classes_do() {
        let unicode = RegexBuilder::new(r"^(?:\d{2}[1-9]\d{3})$").build().expect("pattern");
        let ascii = anchored(r"\d{2}[1-9]\d{3}", true).expect("pattern");
        for text in ["123456", "120456", "12345", "1234567", "12a456", "٣٤1456"] {
            assert_eq!(ascii.is_match(text), unicode.is_match(text) && text.is_ascii(), "{text}");
        }
        // A pattern that needs Unicode still compiles, with Unicode.
        assert!(anchored(r"\p{Greek}", true).is_some_and(|regex| regex.is_match("λ")));
    }
}
