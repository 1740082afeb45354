//! Numbering plans: the phone ranges the corpus draws from and the masks they are written in.
//!
//! Each [`Plan`] is a real range of a country (London `20…`, German mobiles `15x…`, Brazilian
//! mobiles `xx 9…`, Indian mobiles `6–9…`) with the national masks (trunk prefix included:
//! `(02) 9876 5432`, `01 23 45 67 89`) and international masks (`+33 1 23 45 67 89`, E.164
//! `+4930123456`) people use. Nothing here is trusted: `values_phone` keeps only what
//! libphonenumber validates.

use super::rng::Rng;

/// A numbering range and how it is written. In masks `#` takes the next digit; national masks
/// take the trunk prefix and the national number, international ones the national number only.
pub struct Plan {
    /// The ISO region the national masks are read in.
    pub region: &'static str,
    /// The country calling code.
    pub cc: &'static str,
    /// The national trunk prefix written before national numbers (`0`, or none).
    pub trunk: &'static str,
    /// `X` any digit, `N` 2–9, `M` 1–9, `[..]` one of, digits literal.
    pub nsn: &'static str,
    /// National masks (take the trunk prefix and the national number).
    pub national: &'static [&'static str],
    /// International masks (take the national number).
    pub international: &'static [&'static str],
}

const fn plan(
    region: &'static str,
    cc: &'static str,
    trunk: &'static str,
    nsn: &'static str,
    national: &'static [&'static str],
    international: &'static [&'static str],
) -> Plan {
    Plan { region, cc, trunk, nsn, national, international }
}

const US_NAT: &[&str] = &["(###) ###-####", "###-###-####", "###.###.####", "(###) ###-####"];
const US_INT: &[&str] = &["+1 ### ### ####", "+1 (###) ###-####", "+1-###-###-####", "+1##########"];

/// The plans with their weights.
#[rustfmt::skip]
pub const PLANS: &[(u32, Plan)] = &[
    (5, plan("US", "1", "", "[2367]12NXXXXXX", US_NAT, US_INT)),
    (4, plan("US", "1", "", "[4689]15NXXXXXX", US_NAT, US_INT)),
    (3, plan("US", "1", "", "[37]0[2-5]NXXXXXX", US_NAT, US_INT)),
    (2, plan("US", "1", "", "[46]1[67]NXXXXXX", US_NAT, US_INT)),
    (4, plan("GB", "44", "0", "20[378]XXXXXXX", &["### #### ####", "(###) #### ####"], &["+44 ## #### ####", "+44 (0)## #### ####", "+44##########"])),
    (4, plan("GB", "44", "0", "7[4-9]XXXXXXXX", &["##### ######", "##### ### ###"], &["+44 #### ######", "+44 #### ### ###", "+44##########"])),
    (2, plan("GB", "44", "0", "1[2-6]1XXXXXXX", &["#### ### ####"], &["+44 ### ### ####"])),
    (3, plan("DE", "49", "0", "[34689]0[1-9]XXXXXX", &["### #######", "###/#######", "###-#######", "(###) #######"], &["+49 ## #######", "+49 (0)## #######", "+49##########"])),
    (2, plan("DE", "49", "0", "[34689]0[1-9]XXXXXXX", &["### ########", "### #### ####"], &["+49 ## ########", "+49 ## #### ####"])),
    (3, plan("DE", "49", "0", "15[12579]XXXXXXXX", &["#### ########", "####-########", "#### #### ####"], &["+49 ### ########", "+49 ### #### ####", "+49###########"])),
    (2, plan("DE", "49", "0", "17[0-9]XXXXXXX", &["#### #######", "####-#######", "####/#######"], &["+49 ### #######", "+49##########"])),
    (4, plan("FR", "33", "0", "[1-5]XXXXXXXX", &["## ## ## ## ##", "##.##.##.##.##", "##########"], &["+33 # ## ## ## ##", "+33 (0)# ## ## ## ##", "+33#########"])),
    (3, plan("FR", "33", "0", "[67]XXXXXXXX", &["## ## ## ## ##", "##.##.##.##.##"], &["+33 # ## ## ## ##", "+33#########"])),
    (3, plan("ES", "34", "", "9[1-8]XXXXXXX", &["### ### ###", "## ### ## ##", "#########"], &["+34 ### ### ###", "+34 ## ### ## ##"])),
    (3, plan("ES", "34", "", "6XXXXXXXX", &["### ### ###", "### ## ## ##"], &["+34 ### ### ###", "+34#########"])),
    (2, plan("IT", "39", "", "0[26]XXXXXXXX", &["## #### ####", "##-########", "## ########"], &["+39 ## #### ####", "+39 ## ########"])),
    (1, plan("IT", "39", "", "0[15]5XXXXXXX", &["### ### ####", "### #######"], &["+39 ### ### ####"])),
    (3, plan("IT", "39", "", "3[2-9]XXXXXXXX", &["### ### ####", "### #######"], &["+39 ### ### ####", "+39 ##########"])),
    (2, plan("NL", "31", "0", "[1-7]0XXXXXXX", &["### ### ####", "###-#######"], &["+31 ## ### ####", "+31 (0)## ### ####"])),
    (2, plan("NL", "31", "0", "6[1-5]XXXXXXX", &["## ########", "##-########", "## ## ## ## ##"], &["+31 # ########", "+31 (0)# ## ## ## ##", "+31#########"])),
    (3, plan("BR", "55", "", "[1-9]19XXXXXXXX", &["(##) #####-####", "## #####-####"], &["+55 ## #####-####", "+55 (##) #####-####", "+55###########"])),
    (2, plan("BR", "55", "", "[1-9]1[2-5]XXXXXXX", &["(##) ####-####", "## ####-####"], &["+55 ## ####-####"])),
    (3, plan("AU", "61", "0", "[2378][3-9]XXXXXXX", &["(##) #### ####", "## #### ####"], &["+61 # #### ####", "+61#########"])),
    (3, plan("AU", "61", "0", "4[0-9]XXXXXXX", &["#### ### ###", "##########"], &["+61 ### ### ###", "+61#########"])),
    (3, plan("IN", "91", "", "[6789]XXXXXXXXX", &["##### #####", "##########", "0##########"], &["+91 ##### #####", "+91-#####-#####", "+91##########"])),
    (1, plan("IN", "91", "0", "[12][12]2XXXXXXX", &["### #### ####"], &["+91 ## #### ####"])),
    (1, plan("CH", "41", "0", "[2-4]4XXXXXXX", &[], &["+41 ## ### ## ##"])),
    (1, plan("CH", "41", "0", "7[5-9]XXXXXXX", &[], &["+41 ## ### ## ##"])),
    (1, plan("AT", "43", "0", "1XXXXXXX", &[], &["+43 # #######", "+43 # ### ####"])),
    (1, plan("AT", "43", "0", "66[048]XXXXXXX", &[], &["+43 ### #######"])),
    (1, plan("SE", "46", "0", "8XXXXXXXX", &[], &["+46 # ### ### ##"])),
    (1, plan("SE", "46", "0", "7[0236]XXXXXXX", &[], &["+46 ## ### ## ##"])),
    (1, plan("JP", "81", "0", "3XXXXXXXX", &[], &["+81 #-####-####", "+81 # #### ####"])),
    (1, plan("JP", "81", "0", "[789]0XXXXXXXX", &[], &["+81 ##-####-####"])),
    (1, plan("MX", "52", "", "55XXXXXXXX", &[], &["+52 ## #### ####"])),
    (1, plan("ZA", "27", "0", "[18][12]XXXXXXX", &[], &["+27 ## ### ####"])),
    (1, plan("IE", "353", "0", "8[3-7]XXXXXXX", &[], &["+353 ## ### ####"])),
    (1, plan("PL", "48", "", "[5-8]XXXXXXXX", &[], &["+48 ### ### ###", "+48 ## ### ## ##"])),
    (1, plan("BE", "32", "0", "4[5-9]XXXXXXX", &[], &["+32 ### ## ## ##"])),
    (1, plan("PT", "351", "", "9[1236]XXXXXXX", &[], &["+351 ### ### ###"])),
    (1, plan("SG", "65", "", "[89]XXXXXXX", &[], &["+65 #### ####"])),
];

/// Fills `mask` with `digits` in order.
pub fn fill(mask: &str, digits: &str) -> String {
    let mut digits = digits.chars();
    mask.chars().map(|c| if c == '#' { digits.next().unwrap_or('0') } else { c }).collect()
}

/// A national number for `pattern`.
pub fn nsn(rng: &mut Rng, pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            'X' => out.push(char::from(b'0' + rng.below(10) as u8)),
            'N' => out.push(char::from(b'2' + rng.below(8) as u8)),
            'M' => out.push(char::from(b'1' + rng.below(9) as u8)),
            '[' => {
                let set: Vec<char> = chars.by_ref().take_while(|c| *c != ']').collect();
                let mut options = Vec::new();
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        options.extend(set[i]..=set[i + 2]);
                        i += 3;
                    } else {
                        options.push(set[i]);
                        i += 1;
                    }
                }
                out.push(*rng.pick(&options));
            }
            digit => out.push(digit),
        }
    }
    out
}
