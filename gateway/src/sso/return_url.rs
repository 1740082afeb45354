//! Where to send the browser after login. Only two shapes are accepted: an absolute URL on a
//! configured site host (for the gateway's own login endpoint), and a same-origin path (for
//! the final hop on the site). Everything else — other hosts, `//evil`, `/\evil`, control
//! characters, encoded tricks — falls back to `/`.

use crate::http::percent_decode;

/// A path (and query) that stays on the current origin, or `/`.
pub fn same_origin_path(candidate: &str) -> String {
    if is_safe_path(candidate) { candidate.to_owned() } else { "/".to_owned() }
}

/// A return target on a configured site host: `(origin, path)`, or `None`.
pub fn site_target(candidate: &str, site_hosts: &[String]) -> Option<(String, String)> {
    if candidate.len() > 4096 || candidate.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\\') {
        return None;
    }
    let url = url::Url::parse(candidate).ok()?;
    if !matches!(url.scheme(), "http" | "https") || !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    let host = url.host_str()?.to_ascii_lowercase();
    if !site_hosts.contains(&host) {
        return None;
    }
    let origin = url.origin().ascii_serialization();
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    Some((origin, same_origin_path(&path)))
}

fn is_safe_path(path: &str) -> bool {
    let bytes = path.as_bytes();
    if path.len() > 4096 || bytes.first() != Some(&b'/') {
        return false;
    }
    // `//host` and `/\host` are protocol-relative in browsers; control characters and
    // backslashes are stripped or turned into `/` by URL parsers, so refuse them anywhere.
    if matches!(bytes.get(1), Some(b'/' | b'\\')) || path.chars().any(|c| c.is_control() || c == '\\') {
        return false;
    }
    // Encoded variants of the same tricks must not survive a decoding step further along.
    // Twice: a double-encoded `%252F%252F` becomes `//` after two decodings.
    let decoded = percent_decode(path, 2);
    !(decoded.starts_with("//")
        || decoded.starts_with("/\\")
        || decoded.chars().any(|c| c.is_control() || c == '\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_paths_pass_and_tricks_fall_back() {
        for good in ["/", "/tasks?id=3", "/a/b#frag", "/search?next=https://x.example"] {
            assert_eq!(same_origin_path(good), good);
        }
        for bad in [
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "https://evil.example",
            "evil.example",
            "/%2F%2Fevil.example",
            "/%2fevil",
            "/%5Cevil",
            "/%252F%252Fevil",
            "/%09/evil",
            "javascript:alert(1)",
            "",
            "/\r\nSet-Cookie:x",
            "\\\\evil",
        ] {
            assert_eq!(same_origin_path(bad), "/", "{bad:?}");
        }
    }

    #[test]
    fn site_targets_only_on_configured_hosts() {
        let hosts = vec!["tasks.example".to_owned()];
        assert_eq!(
            site_target("https://tasks.example:8443/a?b=1", &hosts),
            Some(("https://tasks.example:8443".into(), "/a?b=1".into()))
        );
        for bad in [
            "https://evil.example/",
            "https://tasks.example.evil.example/",
            "https://user@tasks.example/",
            "javascript://tasks.example/%0aalert(1)",
            "https://tasks.example\\@evil.example/",
            "//tasks.example/",
        ] {
            assert_eq!(site_target(bad, &hosts), None, "{bad:?}");
        }
    }

    /// Prefixes that turn a path into another origin in some parser, raw and encoded.
    const PREFIXES: [&str; 30] = [
        "//",
        "/\\",
        "\\\\",
        "/\t/",
        "/%2F",
        "/%2f/",
        "%2F%2F",
        "/%5C",
        "/%5c%5c",
        "/%252F%252F",
        "///",
        "/.//",
        "/..//",
        "/%2e%2e//",
        "https:",
        "http:",
        "https://",
        "http:/",
        "https:\\\\",
        "javascript:",
        "data:",
        "\t//",
        " //",
        "/%09/",
        "/%0d%0a/",
        "\\/",
        "/\\/",
        "／／",
        "/／",
        "＼",
    ];
    /// Hosts an attacker wants to land on, with tricks to look like the site.
    const HOSTS: [&str; 12] = [
        "evil.example",
        "evil.example@app.localhost",
        "app.localhost.evil.example",
        "app.localhost%2F@evil.example",
        "app.localhost@evil.example",
        "evil.example#@app.localhost",
        "[::1]",
        "0x7f000001",
        "2130706433",
        "／／evil.example",
        "＼evil",
        "evil。example",
    ];
    const SITE: &str = "http://app.localhost:8080";

    fn payloads() -> Vec<String> {
        let mut payloads = Vec::new();
        for prefix in PREFIXES {
            for host in HOSTS {
                for suffix in ["", "/path?next=/x"] {
                    payloads.push(format!("{prefix}{host}{suffix}"));
                }
            }
        }
        payloads
    }

    /// Where a browser on the site lands when the gateway redirects to `path`.
    fn landing_origin(path: &str) -> Option<String> {
        let base = url::Url::parse(&format!("{SITE}/x")).expect("base URL");
        base.join(path).ok().map(|landing| landing.origin().ascii_serialization())
    }

    #[test]
    fn open_redirect_payloads_never_leave_the_site() {
        let payloads = payloads();
        assert!(payloads.len() >= 300, "only {} payloads", payloads.len());
        let hosts = vec!["app.localhost".to_owned()];
        let mut accepted_targets = 0;
        for payload in &payloads {
            let path = same_origin_path(payload);
            assert_eq!(landing_origin(&path).as_deref(), Some(SITE), "{payload:?} became {path:?}");
            for candidate in [payload.clone(), format!("{SITE}{payload}")] {
                let Some((origin, path)) = site_target(&candidate, &hosts) else { continue };
                accepted_targets += 1;
                let parsed = url::Url::parse(&origin).expect("origin is a URL");
                assert_eq!(parsed.host_str(), Some("app.localhost"), "{candidate:?} gave {origin}");
                if candidate.starts_with(SITE) {
                    assert_eq!(origin, SITE, "{candidate:?}");
                }
                assert_eq!(same_origin_path(&path), path, "{candidate:?} gave an unsafe path {path:?}");
                assert_eq!(landing_origin(&path).as_deref(), Some(SITE), "{candidate:?} gave {path:?}");
            }
        }
        // The site-prefixed payloads that parse as site URLs must still come back as targets;
        // without any, the checks above would pass vacuously.
        assert!(accepted_targets > 0, "no payload was accepted as a site target");
    }

    #[test]
    fn payloads_concatenated_to_the_site_origin_keep_it() {
        let hosts = vec!["app.localhost".to_owned()];
        for payload in payloads() {
            let candidate = format!("{SITE}{payload}");
            if let Some((origin, path)) = site_target(&candidate, &hosts) {
                assert_eq!(origin, SITE, "{candidate:?}");
                let landing = url::Url::parse(&origin).and_then(|origin| origin.join(&path)).expect("joins");
                assert_eq!(landing.origin().ascii_serialization(), SITE, "{candidate:?} gave {path:?}");
            }
            let path = same_origin_path(&candidate);
            assert_eq!(path, "/", "an absolute URL is never a same-origin path: {candidate:?}");
        }
    }
}
