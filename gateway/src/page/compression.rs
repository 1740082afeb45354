//! Whether a rewritten page goes to the browser compressed, and in which coding. The browser's
//! `Accept-Encoding` q-values choose among the configured codings, ties going to brotli, then
//! zstd, then gzip (`preferred`). A page is never compressed when its upstream forbids
//! transformations (`Cache-Control: no-transform`), when it has no body, or when its upstream
//! says it is tiny (`compression.min_size`); only page bodies are, so images, video, fonts and
//! archives, compressed already, never are (`choose`). A compressed page's headers
//! (`set_headers`): its `Content-Encoding`, no `Content-Length` (the stream has no length known
//! in advance), and `Vary: Accept-Encoding` on every answer that depended on it.
//!
//! The `ETag` needs nothing more: every rewritten page carries a weak one already
//! (`fix_rewritten_headers`), and RFC 9110 §8.8.1 lets semantically equivalent representations,
//! such as a page and its compressed form, share a weak validator, while a strong one would have
//! to differ. A browser's `If-None-Match: W/"…"` still matches at the upstream, which compares
//! weakly (§13.1.2).

use crate::config::CompressionConfig;
use crate::http::accept_encoding::{self, ContentCoding};
use crate::http::content_type::{self, BodyKind};
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderValue};

/// What happens to one rewritten page on its way to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// The answer does not depend on `Accept-Encoding`: it is sent as it is, without `Vary`.
    Never,
    /// Sent uncompressed to this browser, which accepts none of the configured codings (other
    /// browsers get it compressed, hence `Vary: Accept-Encoding`).
    Identity,
    /// Compressed with this coding.
    Encode(ContentCoding),
}

/// The configured coding the browser prefers by its `Accept-Encoding` (`request` holds the
/// browser's request headers); identity when it accepts none of them or prefers identity.
pub fn preferred(config: &CompressionConfig, request: &HeaderMap) -> ContentCoding {
    // In this order: the tie-breaker among codings a browser weighs alike (smallest first).
    let configured = [
        (ContentCoding::Brotli, config.brotli.is_some()),
        (ContentCoding::Zstd, config.zstd.is_some()),
        (ContentCoding::Gzip, config.gzip.is_some()),
    ];
    let mut offered = [ContentCoding::Identity; 3];
    let mut count = 0;
    for (coding, on) in configured {
        if on {
            offered[count] = coding;
            count += 1;
        }
    }
    if count == 0 {
        return ContentCoding::Identity;
    }
    accept_encoding::negotiate(request, &offered[..count])
}

/// Decides what happens to a page the upstream answered with `status` and `headers` (read before
/// the rewrite changes them), for a browser that prefers `preferred`.
pub fn choose(
    config: &CompressionConfig,
    preferred: ContentCoding,
    status: StatusCode,
    headers: &HeaderMap,
) -> Compression {
    let configured = config.brotli.is_some() || config.zstd.is_some() || config.gzip.is_some();
    let bodiless = status.is_informational()
        || matches!(status, StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT | StatusCode::NOT_MODIFIED);
    let page = matches!(content_type::body_kind(headers), BodyKind::Page { .. });
    if !configured || bodiless || !page || forbids_transformation(headers) || is_tiny(config, headers) {
        return Compression::Never;
    }
    match preferred {
        ContentCoding::Identity => Compression::Identity,
        coding => Compression::Encode(coding),
    }
}

/// Sets the headers `compression` asks for on a rewritten page (after `fix_rewritten_headers`,
/// which removed the upstream's `Content-Encoding`).
pub fn set_headers(headers: &mut HeaderMap, compression: Compression) {
    if compression == Compression::Never {
        return;
    }
    vary_on_accept_encoding(headers);
    if let Compression::Encode(coding) = compression
        && let Some(name) = coding.content_encoding()
    {
        headers.remove(header::CONTENT_LENGTH);
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
    }
}

/// `Cache-Control: no-transform` in any field (RFC 9111 §5.2.2.6): intermediaries must not
/// change the content's coding.
fn forbids_transformation(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|directive| directive.trim().eq_ignore_ascii_case("no-transform"))
}

/// An uncompressed upstream body whose `Content-Length` is below `min_size`: compressing it
/// would save less than a packet. (A compressed upstream body's length says little about the
/// page, and a body without a length may be anything.)
fn is_tiny(config: &CompressionConfig, headers: &HeaderMap) -> bool {
    let identity = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .is_none_or(|coding| coding.trim().is_empty() || coding.trim().eq_ignore_ascii_case("identity"));
    let length = crate::http::body::declared_length(headers);
    identity && length.is_some_and(|length| length < config.min_size)
}

/// Adds `Accept-Encoding` to the `Vary` fields unless they name it or `*` already; readable
/// fields are merged into one.
fn vary_on_accept_encoding(headers: &mut HeaderMap) {
    let fields: Vec<&HeaderValue> = headers.get_all(header::VARY).iter().collect();
    let texts: Option<Vec<&str>> = fields.iter().map(|value| value.to_str().ok()).collect();
    let Some(texts) = texts else {
        // A field that is not text is kept as it is; ours goes beside it.
        headers.append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        return;
    };
    let names: Vec<&str> = texts
        .iter()
        .flat_map(|text| text.split(','))
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect();
    if names.iter().any(|name| *name == "*" || name.eq_ignore_ascii_case("accept-encoding")) {
        return;
    }
    let merged = names.into_iter().chain(["Accept-Encoding"]).collect::<Vec<_>>().join(", ");
    let value = HeaderValue::from_str(&merged).unwrap_or(HeaderValue::from_static("Accept-Encoding"));
    headers.insert(header::VARY, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    fn prefers(config: &CompressionConfig, accept_encoding: &'static str) -> ContentCoding {
        preferred(config, &headers(&[("accept-encoding", accept_encoding)]))
    }

    #[test]
    fn the_browser_s_q_values_choose_and_ties_go_to_br_then_zstd_then_gzip() {
        let config = CompressionConfig::default();
        assert_eq!(prefers(&config, "gzip, deflate, br, zstd"), ContentCoding::Brotli, "Chromium");
        assert_eq!(prefers(&config, "gzip, deflate, zstd"), ContentCoding::Zstd);
        assert_eq!(prefers(&config, "br;q=0.5, gzip"), ContentCoding::Gzip);
        assert_eq!(prefers(&config, "gzip;q=0.5, zstd;q=0.9, br;q=0.1"), ContentCoding::Zstd);
        assert_eq!(prefers(&config, "*"), ContentCoding::Brotli);
        assert_eq!(prefers(&config, "br;q=0, *"), ContentCoding::Zstd);
        assert_eq!(prefers(&config, "br;q=0, zstd;q=0, *;q=0.2"), ContentCoding::Gzip);
        assert_eq!(prefers(&config, "x-gzip"), ContentCoding::Gzip);
    }

    #[test]
    fn identity_when_the_browser_accepts_nothing_configured_or_prefers_it() {
        let config = CompressionConfig::default();
        for accept_encoding in
            ["identity", "*;q=0", "", "deflate", "gzip;q=0, identity", "gzip;q=0.5, identity"]
        {
            assert_eq!(prefers(&config, accept_encoding), ContentCoding::Identity, "{accept_encoding:?}");
        }
        assert_eq!(preferred(&config, &HeaderMap::new()), ContentCoding::Identity, "no Accept-Encoding");
        let gzip_only = CompressionConfig { brotli: None, zstd: None, ..config };
        assert_eq!(prefers(&gzip_only, "br, zstd;q=0.9, gzip;q=0.1"), ContentCoding::Gzip);
        assert_eq!(prefers(&gzip_only, "br, zstd"), ContentCoding::Identity);
        let off = CompressionConfig { gzip: None, ..gzip_only };
        assert_eq!(prefers(&off, "gzip, br, zstd, *"), ContentCoding::Identity);
    }

    #[test]
    fn pages_are_compressed_unless_forbidden_bodiless_tiny_or_not_pages() {
        let config = CompressionConfig::default();
        let page = |extra: &[(&'static str, &'static str)]| {
            let mut all = headers(&[("content-type", "text/html; charset=utf-8")]);
            for (name, value) in extra {
                all.append(*name, HeaderValue::from_static(value));
            }
            all
        };
        let ok = StatusCode::OK;
        let brotli = ContentCoding::Brotli;
        assert_eq!(choose(&config, brotli, ok, &page(&[])), Compression::Encode(brotli));
        assert_eq!(choose(&config, brotli, StatusCode::NOT_FOUND, &page(&[])), Compression::Encode(brotli));
        assert_eq!(choose(&config, ContentCoding::Identity, ok, &page(&[])), Compression::Identity);
        let never = |status: StatusCode, headers: &HeaderMap| choose(&config, brotli, status, headers);
        assert_eq!(never(ok, &page(&[("cache-control", "private, No-Transform")])), Compression::Never);
        assert_eq!(
            never(ok, &page(&[("cache-control", "max-age=5"), ("cache-control", "no-transform")])),
            Compression::Never
        );
        assert_eq!(never(StatusCode::NO_CONTENT, &page(&[])), Compression::Never);
        assert_eq!(never(StatusCode::NOT_MODIFIED, &page(&[])), Compression::Never);
        assert_eq!(never(ok, &page(&[("content-length", "1023")])), Compression::Never, "tiny");
        assert_eq!(never(ok, &page(&[("content-length", "1024")])), Compression::Encode(brotli));
        assert_eq!(
            never(ok, &page(&[("content-length", "200"), ("content-encoding", "gzip")])),
            Compression::Encode(brotli),
            "a compressed upstream length says little about the page"
        );
        for media in ["image/png", "video/mp4", "font/woff2", "application/zip", "application/gzip"] {
            let headers = headers(&[("content-type", media)]);
            assert_eq!(never(ok, &headers), Compression::Never, "{media}");
        }
        let off = CompressionConfig { brotli: None, zstd: None, gzip: None, ..config };
        assert_eq!(choose(&off, ContentCoding::Identity, ok, &page(&[])), Compression::Never);
    }

    #[test]
    fn headers_name_the_coding_drop_the_length_and_vary_once() {
        let mut compressed = headers(&[("content-length", "10"), ("vary", "Cookie"), ("vary", "Origin")]);
        set_headers(&mut compressed, Compression::Encode(ContentCoding::Zstd));
        assert_eq!(compressed[header::CONTENT_ENCODING], "zstd");
        assert!(!compressed.contains_key(header::CONTENT_LENGTH));
        assert_eq!(
            compressed.get_all(header::VARY).iter().collect::<Vec<_>>(),
            ["Cookie, Origin, Accept-Encoding"]
        );

        let mut identity = headers(&[("content-length", "10"), ("vary", "accept-encoding")]);
        set_headers(&mut identity, Compression::Identity);
        assert_eq!(identity[header::CONTENT_LENGTH], "10");
        assert!(!identity.contains_key(header::CONTENT_ENCODING));
        assert_eq!(
            identity.get_all(header::VARY).iter().collect::<Vec<_>>(),
            ["accept-encoding"],
            "named once"
        );

        let mut star = headers(&[("vary", "*")]);
        set_headers(&mut star, Compression::Encode(ContentCoding::Gzip));
        assert_eq!(star.get_all(header::VARY).iter().collect::<Vec<_>>(), ["*"]);

        let mut untouched = headers(&[("content-length", "10")]);
        set_headers(&mut untouched, Compression::Never);
        assert_eq!(untouched.len(), 1);
    }
}
