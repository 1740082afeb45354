//! IP addresses, valid and look-alike.
//!
//! IPv4: private and public unicast (loopback, `0.0.0.0` and broadcast are left out: neither
//! side of the line), sometimes with a port. Look-alikes: `v`-prefixed and three-part versions,
//! SNMP OIDs, five-part build numbers, out-of-range octets.
//! IPv6: full, compressed, link-local with a zone, IPv4-mapped, bracketed with a port.
//! Look-alikes: MAC addresses, MD5 key fingerprints, times, C++/Rust paths, ISO timestamps.

use policy::RedactionKind;

use super::Planted;
use super::rng::{DIGITS, HEX, Rng};

/// A host IPv4 address.
pub fn ipv4(rng: &mut Rng) -> Planted {
    let (octets, form) = match rng.below(6) {
        0 => ([10, rng.below(256), rng.below(256), rng.range(1, 254)], "private 10/8"),
        1 => ([172, rng.range(16, 31), rng.below(256), rng.range(1, 254)], "private 172.16/12"),
        2 => ([192, 168, rng.below(256), rng.range(1, 254)], "private 192.168/16"),
        3 => (*rng.pick(&[[192, 0, 2, 0], [198, 51, 100, 0], [203, 0, 113, 0]]), "documentation"),
        _ => {
            let mut first = rng.range(1, 223);
            while [10, 127, 172, 192].contains(&first) {
                first = rng.range(1, 223);
            }
            ([first, rng.below(256), rng.below(256), rng.range(1, 254)], "public")
        }
    };
    let mut octets = octets;
    if form == "documentation" {
        octets[3] = rng.range(1, 254);
    }
    let text = format!("{}.{}.{}.{}", octets[0], octets[1], octets[2], octets[3]);
    let planted = Planted::new(RedactionKind::Ipv4, true, text, form);
    if rng.chance(0.2) {
        planted.around("", format!(":{}", rng.pick(&[22, 443, 5432, 8080, 8443, 6379])))
    } else {
        planted
    }
}

/// A dotted number that is no IPv4 address.
pub fn ipv4_look_alike(rng: &mut Rng) -> Planted {
    let (text, form, key) = match rng.below(5) {
        0 => (
            format!("v{}.{}.{}.{}", rng.range(1, 12), rng.below(20), rng.below(30), rng.below(200)),
            "v-version",
            "version",
        ),
        1 => (
            format!("{}.{}.{}", rng.range(1, 30), rng.below(40), rng.below(300)),
            "3-part version",
            "version",
        ),
        2 => (
            format!("1.3.6.1.4.1.{}.{}.{}", rng.range(300, 60000), rng.range(1, 30), rng.range(1, 9)),
            "snmp oid",
            "oid",
        ),
        3 => {
            (format!("10.0.{}.{}", rng.range(10240, 26100), rng.range(1000, 5000)), "windows build", "build")
        }
        _ => (
            format!("{}.{}.{}.{}", rng.range(256, 999), rng.below(256), rng.below(256), rng.below(256)),
            "octet > 255",
            "value",
        ),
    };
    Planted::new(RedactionKind::Ipv4, false, text, form).key(key)
}

/// A host IPv6 address.
pub fn ipv6(rng: &mut Rng) -> Planted {
    let prefix = *rng.pick(&["2001:db8", "2a00:1450", "2600:1f18", "2a02:8108", "fd12:3456", "2001:41d0"]);
    let groups: Vec<String> = (0..6).map(|_| format!("{:x}", rng.below(0x10000))).collect();
    let (text, form) = match rng.below(7) {
        0 => {
            let full: Vec<String> = prefix
                .split(':')
                .map(|g| format!("{:0>4}", g))
                .chain(groups.iter().map(|g| format!("{g:0>4}")))
                .collect();
            (full.join(":"), "full")
        }
        1 => (format!("{prefix}:{}", groups.join(":")), "no leading zeros"),
        2 | 3 => (format!("{prefix}::{}", groups[3..].join(":")), "compressed"),
        4 => (format!("fe80::{}", groups[2..].join(":")), "link-local"),
        5 => (
            format!(
                "::ffff:{}.{}.{}.{}",
                rng.range(1, 223),
                rng.below(256),
                rng.below(256),
                rng.range(1, 254)
            ),
            "ipv4-mapped",
        ),
        _ => (format!("{prefix}:{}::{}", groups[0], groups[5]), "compressed middle"),
    };
    let text = if rng.chance(0.1) { text.to_uppercase() } else { text };
    let planted = Planted::new(RedactionKind::Ipv6, true, text, form);
    match rng.below(8) {
        0 => planted.around("[", format!("]:{}", rng.pick(&[443, 8443, 5432]))),
        1 if form == "link-local" => planted.around("", "%eth0"),
        _ => planted,
    }
}

/// Colon-separated things that are no IPv6 address.
pub fn ipv6_look_alike(rng: &mut Rng) -> Planted {
    let pairs = |rng: &mut Rng, n: usize| (0..n).map(|_| rng.string(HEX, 2)).collect::<Vec<_>>().join(":");
    let (text, form, key) = match rng.below(5) {
        0 => (pairs(rng, 6), "mac address", "mac"),
        1 => (format!("MD5:{}", pairs(rng, 16)), "md5 fingerprint", "fingerprint"),
        2 => (
            format!(
                "{:02}:{:02}:{:02}.{}",
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.string(DIGITS, 3)
            ),
            "time",
            "time",
        ),
        3 => (
            format!(
                "{}::{}::{}",
                rng.pick(&["std", "tokio", "serde"]),
                rng.pick(&["io", "sync", "json"]),
                rng.pick(&["Error", "Result", "Mutex", "Value"])
            ),
            "code path",
            "symbol",
        ),
        _ => (
            format!(
                "20{:02}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
                rng.range(15, 26),
                rng.range(1, 12),
                rng.range(1, 28),
                rng.below(24),
                rng.below(60),
                rng.below(60)
            ),
            "iso datetime",
            "timestamp",
        ),
    };
    Planted::new(RedactionKind::Ipv6, false, text, form).key(key)
}
