//! The client's `Accept-Encoding` (RFC 9110 §12.5.3): which of the content codings a body is
//! offered in the client prefers. The runtime script (copies compressed at build time) and
//! rewritten pages (compressed in the stream, `page/compression.rs`) are sent this way.
//!
//! q-values decide; among equal ones the server's order does (smallest first, say). Identity is
//! the fallback whenever nothing offered is acceptable.

use http::HeaderMap;
use http::header::ACCEPT_ENCODING;

/// A content coding a body can be sent in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentCoding {
    /// `br`.
    Brotli,
    /// `gzip` (also accepted when the client spells it `x-gzip`).
    Gzip,
    /// `zstd` (RFC 8878; rewritten pages, compressed in the stream).
    Zstd,
    /// The body as it is, without `Content-Encoding`.
    Identity,
}

impl ContentCoding {
    /// The `Content-Encoding` value to send; none for identity, which is never labelled.
    pub fn content_encoding(self) -> Option<&'static str> {
        match self {
            Self::Brotli => Some("br"),
            Self::Gzip => Some("gzip"),
            Self::Zstd => Some("zstd"),
            Self::Identity => None,
        }
    }

    fn is_named(self, token: &str) -> bool {
        match self {
            Self::Brotli => token.eq_ignore_ascii_case("br"),
            Self::Gzip => token.eq_ignore_ascii_case("gzip") || token.eq_ignore_ascii_case("x-gzip"),
            Self::Zstd => token.eq_ignore_ascii_case("zstd"),
            Self::Identity => token.eq_ignore_ascii_case("identity"),
        }
    }
}

/// The coding to send a body in, out of `offered` (in the server's order of preference) and
/// identity.
///
/// The client's highest q-value wins, ties going to the earlier offer. A coding is acceptable when
/// the client names it, or names `*` and not it, with a q-value above 0. Identity competes only
/// when the client names it (or `*`): `br;q=0.5` alone still gets brotli. With no header, an
/// empty one, or nothing offered acceptable, the answer is identity (RFC 9110 lets a server send
/// identity rather than 406 even when the client refused it).
pub fn negotiate(headers: &HeaderMap, offered: &[ContentCoding]) -> ContentCoding {
    let accepted = Accepted::read(headers);
    let mut chosen: Option<(ContentCoding, Weight)> = None;
    for &coding in offered {
        let weight = accepted.weight(coding).unwrap_or(0);
        if weight > 0 && chosen.is_none_or(|(_, best)| weight > best) {
            chosen = Some((coding, weight));
        }
    }
    let identity = accepted.weight(ContentCoding::Identity).unwrap_or(0);
    match chosen {
        Some((coding, weight)) if weight >= identity => coding,
        _ => ContentCoding::Identity,
    }
}

/// A q-value in thousandths: `q=0.5` is 500, no q-value is 1000.
type Weight = u16;

/// The codings the client listed, with their weights, in its order.
struct Accepted {
    entries: Vec<(String, Weight)>,
}

impl Accepted {
    fn read(headers: &HeaderMap) -> Self {
        let entries = headers
            .get_all(ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(entry)
            .collect();
        Self { entries }
    }

    /// The weight the client gave `coding`: its own entry (the first, if it is named twice), else
    /// the `*` entry; `None` when it gave none.
    fn weight(&self, coding: ContentCoding) -> Option<Weight> {
        let named = self.entries.iter().find(|(token, _)| coding.is_named(token));
        let any = || self.entries.iter().find(|(token, _)| token == "*");
        named.or_else(any).map(|(_, weight)| *weight)
    }
}

/// One list element, `coding *( OWS ";" OWS parameter )`. An element with a malformed q-value is
/// left out whole: guessing its weight could send a coding the client cannot read.
fn entry(element: &str) -> Option<(String, Weight)> {
    let mut pieces = element.split(';');
    let token = pieces.next()?.trim();
    if token.is_empty() {
        return None;
    }
    let mut weight = 1000;
    for parameter in pieces {
        let Some((name, value)) = parameter.split_once('=') else {
            continue;
        };
        if name.trim().eq_ignore_ascii_case("q") {
            weight = q_value(value.trim())?;
        }
    }
    Some((token.to_owned(), weight))
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn q_value(text: &str) -> Option<Weight> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<Weight>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ContentCoding::{Brotli, Gzip, Identity};
    use http::HeaderValue;

    const OFFERED: [ContentCoding; 2] = [Brotli, Gzip];

    fn choose(values: &[&'static str]) -> ContentCoding {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(ACCEPT_ENCODING, HeaderValue::from_static(value));
        }
        negotiate(&headers, &OFFERED)
    }

    #[test]
    fn browsers_get_brotli_and_older_clients_gzip() {
        assert_eq!(choose(&["gzip, deflate, br, zstd"]), Brotli, "Chromium");
        assert_eq!(choose(&["gzip, deflate"]), Gzip);
        assert_eq!(choose(&["x-gzip"]), Gzip);
        assert_eq!(choose(&["GZIP, BR"]), Brotli, "tokens are case-insensitive");
        assert_eq!(choose(&["deflate", "br"]), Brotli, "every field counts");
    }

    #[test]
    fn q_values_decide_and_ties_go_to_the_server_order() {
        assert_eq!(choose(&["br;q=0.5, gzip;q=0.8"]), Gzip);
        assert_eq!(choose(&["br ; q=0.9 , gzip ; Q=0.8"]), Brotli);
        assert_eq!(choose(&["gzip;q=1.0, br;q=1"]), Brotli);
        assert_eq!(choose(&["br;q=0.001"]), Brotli, "identity competes only when named");
        assert_eq!(choose(&["br;q=0.5, identity"]), Identity);
        assert_eq!(choose(&["*;q=0.3, gzip;q=0.4"]), Gzip, "`*` covers br at 0.3");
        assert_eq!(choose(&["*"]), Brotli);
        assert_eq!(choose(&["br, gzip;q=0.9, *;q=0"]), Brotli);
    }

    #[test]
    fn refused_or_unknown_codings_fall_back_to_identity() {
        assert_eq!(choose(&[]), Identity, "no header");
        assert_eq!(choose(&[""]), Identity, "an empty header asks for no coding");
        assert_eq!(choose(&["identity"]), Identity);
        assert_eq!(choose(&["zstd, deflate"]), Identity);
        assert_eq!(choose(&["br;q=0, gzip;q=0"]), Identity);
        assert_eq!(choose(&["*;q=0"]), Identity, "nothing acceptable: identity anyway, not 406");
        assert_eq!(choose(&["br;q=0, *"]), Gzip, "br refused by name, gzip through `*`");
        assert_eq!(choose(&["identity;q=0, gzip;q=0.2"]), Gzip);
    }

    #[test]
    fn malformed_q_values_leave_their_coding_out() {
        assert_eq!(choose(&["br;q=2, gzip"]), Gzip);
        assert_eq!(choose(&["br;q=high"]), Identity);
        assert_eq!(choose(&["br;q=0.0001, gzip;q=0.1"]), Gzip);
        assert_eq!(choose(&["br;q=1.5, gzip;q=-1"]), Identity);
        assert_eq!(choose(&["br;level=5"]), Brotli, "other parameters are ignored");
    }

    #[test]
    fn q_values_read_as_thousandths() {
        assert_eq!(q_value("0"), Some(0));
        assert_eq!(q_value("0.5"), Some(500));
        assert_eq!(q_value("0.25"), Some(250));
        assert_eq!(q_value("0.125"), Some(125));
        assert_eq!(q_value("1.000"), Some(1000));
        assert_eq!(q_value("1."), Some(1000));
        for bad in ["1.001", "0.1234", ".5", "", "2", "0.x", "+0.5"] {
            assert_eq!(q_value(bad), None, "{bad}");
        }
    }
}
