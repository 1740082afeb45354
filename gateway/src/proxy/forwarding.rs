//! Headers on the way through: hop-by-hop stripping (both directions), the `X-Forwarded-*`
//! headers the gateway builds, and the `Accept-Encoding` it asks upstreams for.
//!
//! Client-sent forwarding headers are believed only from configured trusted proxies; from
//! anyone else they are dropped and rebuilt from what the gateway itself saw.

use crate::http::client::{ClientInfo, single_token};
use crate::page::decode;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use std::io::Write;
use std::net::IpAddr;

/// Headers that describe one connection, never the message (RFC 9110 §7.6.1), plus the legacy
/// `Proxy-Connection` and `Keep-Alive`. `Proxy-Authorization` is a credential meant for us.
/// `Upgrade` too: the WebSocket path puts back what it needs. Names as `http` stores them
/// (lower case), compared as text: cheaper than building and dropping `HeaderName`s.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The headers the gateway writes, named once (a name spelled at each use is parsed each time).
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
const X_FORWARDED_USER: HeaderName = HeaderName::from_static("x-forwarded-user");
const X_FORWARDED_EMAIL: HeaderName = HeaderName::from_static("x-forwarded-email");
const X_FORWARDED_GROUPS: HeaderName = HeaderName::from_static("x-forwarded-groups");
const X_TOOLGATE_ASSERTION: HeaderName = HeaderName::from_static("x-toolgate-assertion");

/// Forwarding headers a client could spoof; rebuilt by the gateway.
const FORWARDING: [&str; 5] =
    ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip"];

/// Removes hop-by-hop headers, including every header the `Connection` header names.
///
/// One pass over the names present, then a removal for each found: most messages carry none or
/// one of them, and a removal by name costs a hash and a probe even when it finds nothing. The
/// names `Connection` lists are read once and compared with the names present, never parsed
/// into names of their own; those already hop-by-hop are not kept, so the usual
/// `Connection: keep-alive` lists nothing and allocates nothing.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let listed: Vec<&str> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|token| !token.is_empty() && !HOP_BY_HOP.iter().any(|hop| token.eq_ignore_ascii_case(hop)))
        .collect();
    let doomed: Vec<HeaderName> = headers
        .keys()
        .filter(|name| {
            let name = name.as_str();
            HOP_BY_HOP.contains(&name) || listed.iter().any(|token| token.eq_ignore_ascii_case(name))
        })
        .cloned()
        .collect();
    for name in doomed {
        headers.remove(name);
    }
}

/// Sets `X-Forwarded-For/Proto/Host`. From a trusted proxy the chain is extended and its proto
/// and host are kept; from anyone else every client-sent forwarding header is replaced.
pub fn set_forwarded(headers: &mut HeaderMap, client: ClientInfo, trusted: bool, host: &str) {
    let mut written = [0; MAX_ADDRESS];
    let peer = address_text(client.peer, &mut written);
    let our_proto = if client.tls { "https" } else { "http" };
    if trusted {
        let chain: Vec<&str> =
            headers.get_all(&X_FORWARDED_FOR).iter().filter_map(|value| value.to_str().ok()).collect();
        let forwarded_for =
            if chain.is_empty() { peer.to_owned() } else { format!("{}, {peer}", chain.join(", ")) };
        let proto = single_token(headers, "x-forwarded-proto")
            .filter(|proto| *proto == "http" || *proto == "https")
            .unwrap_or(our_proto)
            .to_owned();
        let forwarded_host = single_token(headers, "x-forwarded-host").unwrap_or(host).to_owned();
        insert(headers, X_FORWARDED_FOR, &forwarded_for);
        insert(headers, X_FORWARDED_PROTO, &proto);
        insert(headers, X_FORWARDED_HOST, &forwarded_host);
    } else {
        // Every spelling, `_` for `-` included (some frameworks map one to the other).
        let spoofed: Vec<HeaderName> = headers
            .keys()
            .filter(|name| FORWARDING.iter().any(|forwarding| reads_as(name.as_str(), forwarding)))
            .cloned()
            .collect();
        for name in spoofed {
            headers.remove(name);
        }
        insert(headers, X_FORWARDED_FOR, peer);
        headers.insert(X_FORWARDED_PROTO, HeaderValue::from_static(our_proto));
        insert(headers, X_FORWARDED_HOST, host);
    }
}

/// The longest text of an IP address (an IPv6 address with an embedded IPv4 one).
const MAX_ADDRESS: usize = 45;

/// `address` as text in `buffer`: an IPv4 address written digit by digit (it goes on every
/// request, and `Display` with its formatter cost a request more than a thousand instructions),
/// an IPv6 one by its `Display`.
fn address_text(address: IpAddr, buffer: &mut [u8; MAX_ADDRESS]) -> &str {
    let mut length = 0;
    match address {
        IpAddr::V4(v4) => {
            for (index, octet) in v4.octets().into_iter().enumerate() {
                if index > 0 {
                    buffer[length] = b'.';
                    length += 1;
                }
                let digits = [octet / 100, octet / 10 % 10, octet % 10];
                let skip = if octet >= 100 {
                    0
                } else if octet >= 10 {
                    1
                } else {
                    2
                };
                for digit in &digits[skip..] {
                    buffer[length] = b'0' + digit;
                    length += 1;
                }
            }
        }
        IpAddr::V6(v6) => {
            let mut cursor = std::io::Cursor::new(&mut buffer[..]);
            // 45 bytes hold every IPv6 address's text.
            let _ = write!(cursor, "{v6}");
            length = usize::try_from(cursor.position()).unwrap_or(0);
        }
    }
    std::str::from_utf8(&buffer[..length]).unwrap_or_default()
}

/// Whether the header `name` (lower case, as `http` stores it) reads as `target` once `_` is
/// taken for `-`, as CGI and WSGI frameworks take it. Allocation-free: it runs for every header
/// of every request.
fn reads_as(name: &str, target: &str) -> bool {
    name.len() == target.len()
        && name
            .bytes()
            .zip(target.bytes())
            .all(|(byte, wanted)| byte == wanted || (byte == b'_' && wanted == b'-'))
}

/// The gateway's own header namespace.
const NAMESPACE: &str = "x-toolgate-";

/// Identity headers the gateway sets; clients may never send them, in any spelling.
const IDENTITY_HEADERS: [&str; 4] =
    ["x-forwarded-user", "x-forwarded-email", "x-forwarded-groups", "x-toolgate-assertion"];

/// Headers that frame or route a message: spelled with `_`, they are not framing to the gateway
/// but become framing to an upstream that maps `_` to `-` (WSGI, CGI), which then reads a
/// second, hidden request.
const FRAMING: [&str; 3] = ["content-length", "transfer-encoding", "host"];

/// Removes every client-sent identity header: the gateway's own and the `others` configured
/// (`server.identity_headers`, lower case): any case, `_` for `-`, repeated, and anything in
/// the gateway's own `x-toolgate-` namespace. Frameworks that map `_` to `-` (CGI, WSGI) must
/// not see a spoofed `X_Forwarded_User` either.
pub fn strip_identity_headers(headers: &mut HeaderMap, others: &[String]) {
    let spoofed: Vec<HeaderName> = headers
        .keys()
        .filter(|name| {
            let name = name.as_str();
            IDENTITY_HEADERS.iter().any(|identity| reads_as(name, identity))
                || name.get(..NAMESPACE.len()).is_some_and(|prefix| reads_as(prefix, NAMESPACE))
                || others.iter().any(|other| reads_as(name, other))
        })
        .cloned()
        .collect();
    for name in spoofed {
        headers.remove(name);
    }
}

/// Removes headers spelled with `_` that read as a hop-by-hop, framing or `Host` header once
/// `_` is taken for `-` (`Transfer_Encoding`, `Content_Length`, `Host_`… never reach a site).
pub fn strip_underscore_lookalikes(headers: &mut HeaderMap) {
    let lookalikes: Vec<HeaderName> = headers
        .keys()
        .filter(|name| {
            let name = name.as_str();
            name.contains('_')
                && (FRAMING.iter().any(|framing| reads_as(name, framing))
                    || HOP_BY_HOP.iter().any(|hop| reads_as(name, hop)))
        })
        .cloned()
        .collect();
    for name in lookalikes {
        headers.remove(name);
    }
}

/// Adds the signed-in user's identity for the site (values header-encoded, see
/// `sso::identity::header_encode`) and the signed assertion.
pub fn set_identity_headers(
    headers: &mut HeaderMap,
    identity: &crate::sso::identity::Identity,
    assertion: Option<&str>,
) {
    use crate::sso::identity::header_encode;
    insert(headers, X_FORWARDED_USER, &header_encode(&identity.user));
    if let Some(email) = &identity.email {
        insert(headers, X_FORWARDED_EMAIL, &header_encode(email));
    }
    let groups: Vec<String> = identity.groups.iter().map(|group| header_encode(group)).collect();
    insert(headers, X_FORWARDED_GROUPS, &groups.join(","));
    if let Some(assertion) = assertion {
        insert(headers, X_TOOLGATE_ASSERTION, assertion);
    }
}

/// Restricts `Accept-Encoding` to what the rewriter can decode (gzip, deflate, br, zstd), so any
/// answer can still be filtered should it turn out to be a page; everything else passes through
/// in whichever of them the upstream chose, which the browser asked for. Page navigations (which
/// accept `text/html`) ask for `identity`: the gateway compresses the rewritten page itself
/// (`page::compression`), and an upstream's compression would only cost a decoding first.
pub fn restrict_accept_encoding(headers: &mut HeaderMap) {
    let navigation = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    let kept = if navigation {
        None
    } else {
        let codings: Vec<&str> = headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .filter(|coding| decode::is_decodable(coding.split(';').next().unwrap_or_default().trim()))
            .collect();
        (!codings.is_empty()).then(|| codings.join(", "))
    };
    headers.remove(header::ACCEPT_ENCODING);
    match kept {
        Some(codings) => insert(headers, header::ACCEPT_ENCODING, &codings),
        None => {
            headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        }
    }
}

fn insert(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    // Values here are IP addresses, schemes and host names the gateway already validated or
    // produced; a value that still fails is dropped rather than forwarded malformed.
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(name, value);
    } else {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::client::browser_scheme;
    use std::net::IpAddr;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn hop_by_hop_and_connection_named_headers_are_removed() {
        let mut headers = map(&[
            ("connection", "keep-alive, X-Secret-Hop"),
            ("connection", "close"),
            ("x-secret-hop", "1"),
            ("keep-alive", "timeout=5"),
            ("te", "trailers"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "h2c"),
            ("proxy-authorization", "Basic x"),
            ("x-kept", "yes"),
            ("close", "a header named by the second field"),
        ]);
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.len(), 1, "{headers:?}");
        assert_eq!(headers["x-kept"], "yes");
        // Names in any case and spacing; a `Connection` that is not text names nothing.
        let mut headers = map(&[("connection", " X-Hop ,,KEEP-ALIVE"), ("x-hop", "1"), ("x-kept", "yes")]);
        headers.append(header::CONNECTION, HeaderValue::from_bytes(b"x-kept\xff").expect("opaque"));
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.keys().map(HeaderName::as_str).collect::<Vec<_>>(), ["x-kept"]);
    }

    #[test]
    fn untrusted_forwarding_headers_are_replaced() {
        let mut headers = map(&[
            ("x-forwarded-for", "6.6.6.6"),
            ("x_forwarded_for", "6.6.6.7"),
            ("x_forwarded_proto", "https"),
            ("x-forwarded-proto", "https"),
            ("x-forwarded-host", "evil.example"),
            ("forwarded", "for=6.6.6.6"),
            ("x-real-ip", "6.6.6.6"),
        ]);
        let client =
            ClientInfo { peer: "127.0.0.9".parse().unwrap_or(IpAddr::from([0, 0, 0, 0])), tls: false };
        set_forwarded(&mut headers, client, false, "tasks.example");
        assert_eq!(headers["x-forwarded-for"], "127.0.0.9");
        assert_eq!(headers["x-forwarded-proto"], "http");
        assert_eq!(headers["x-forwarded-host"], "tasks.example");
        assert!(headers.get("forwarded").is_none() && headers.get("x-real-ip").is_none());
        assert!(headers.get("x_forwarded_for").is_none() && headers.get("x_forwarded_proto").is_none());
    }

    #[test]
    fn addresses_are_written_as_display_writes_them() {
        let mut buffer = [0; MAX_ADDRESS];
        for octets in [[0, 0, 0, 0], [127, 0, 0, 1], [9, 10, 99, 100], [255, 255, 255, 255], [10, 200, 3, 40]]
        {
            let address = IpAddr::from(octets);
            assert_eq!(address_text(address, &mut buffer), address.to_string());
        }
        for text in [
            "::1",
            "2001:db8::8a2e:370:7334",
            "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
            "::ffff:10.0.0.1",
        ] {
            let address: IpAddr = text.parse().expect("an address");
            assert_eq!(address_text(address, &mut buffer), address.to_string());
        }
    }

    #[test]
    fn trusted_proxy_chain_is_extended() {
        let mut headers = map(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "5.6.7.8"),
            ("x-forwarded-proto", "https"),
        ]);
        let client = ClientInfo { peer: IpAddr::from([10, 0, 0, 1]), tls: false };
        set_forwarded(&mut headers, client, true, "tasks.example");
        assert_eq!(headers["x-forwarded-for"], "1.2.3.4, 5.6.7.8, 10.0.0.1");
        assert_eq!(headers["x-forwarded-proto"], "https");
        assert_eq!(browser_scheme(&headers, client, true), "https");
        assert_eq!(browser_scheme(&headers, client, false), "http");
    }

    /// One header of each name, as a client spelled it.
    fn headers_named(names: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for name in names {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).expect("name"),
                HeaderValue::from_static("x"),
            );
        }
        headers
    }

    #[test]
    fn identity_headers_are_dropped_in_every_spelling() {
        let mut headers = headers_named(&[
            "X-Forwarded-User",
            "x_forwarded_user",
            "X_FORWARDED_EMAIL",
            "x-forwarded-groups",
            "x-toolgate-assertion",
            "x_toolgate_anything",
        ]);
        headers.append("x-forwarded-user", HeaderValue::from_static("root"));
        headers.insert("x-kept", HeaderValue::from_static("1"));
        strip_identity_headers(&mut headers, &[]);
        assert_eq!(headers.len(), 1, "{headers:?}");
    }

    #[test]
    fn other_proxies_identity_headers_are_dropped_as_configured() {
        let defaults: Vec<String> =
            crate::config::DEFAULT_IDENTITY_HEADERS.iter().map(|name| (*name).to_owned()).collect();
        let mut headers = headers_named(&[
            "Remote-User",
            "X-Remote-User",
            "x_auth_request_user",
            "X-Auth-Request-Email",
            "X-Auth-Request-Groups",
            "X-Forwarded-Preferred-Username",
            "X-Webauth-User",
        ]);
        headers.insert("x-kept", HeaderValue::from_static("1"));
        let mut kept_by_config = headers.clone();
        strip_identity_headers(&mut headers, &defaults);
        assert_eq!(headers.len(), 1, "{headers:?}");
        // A site that wants `Remote-User` from its own front end lists only what it drops.
        strip_identity_headers(&mut kept_by_config, &["x-webauth-user".to_owned()]);
        assert!(kept_by_config.contains_key("remote-user") && !kept_by_config.contains_key("x-webauth-user"));
    }

    #[test]
    fn underscore_spellings_of_framing_headers_never_pass() {
        let mut headers = headers_named(&[
            "Transfer_Encoding",
            "content_length",
            "HOST_",
            "Host_",
            "connection_",
            "te_",
            "keep_alive",
            "upgrade_",
        ]);
        headers.append(HeaderName::from_static("x_request_id"), HeaderValue::from_static("kept"));
        headers.append(HeaderName::from_static("keep_alive"), HeaderValue::from_static("x"));
        strip_underscore_lookalikes(&mut headers);
        let mut left: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        left.sort_unstable();
        assert_eq!(
            left,
            ["connection_", "host_", "te_", "upgrade_", "x_request_id"],
            "only exact lookalikes go"
        );
    }

    #[test]
    fn accept_encoding_is_restricted() {
        let mut navigation = map(&[("accept", "text/html,*/*"), ("accept-encoding", "gzip, br, zstd")]);
        restrict_accept_encoding(&mut navigation);
        assert_eq!(navigation["accept-encoding"], "identity");
        let mut fetch = map(&[
            ("accept", "application/json"),
            ("accept-encoding", "zstd, compress, gzip;q=0.8, br, dcb, *"),
        ]);
        restrict_accept_encoding(&mut fetch);
        assert_eq!(fetch["accept-encoding"], "zstd, gzip;q=0.8, br", "only what the gateway can decode");
        let mut only_unknown = map(&[("accept-encoding", "compress, dcz")]);
        restrict_accept_encoding(&mut only_unknown);
        assert_eq!(only_unknown["accept-encoding"], "identity");
    }
}
