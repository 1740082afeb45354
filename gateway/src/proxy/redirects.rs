//! The upstream's own address in response headers, rewritten to the site's public origin as
//! nginx's `proxy_redirect default` and `proxy_cookie_domain` do: an app behind the gateway that
//! builds absolute URLs from the address it listens on (`Location: http://127.0.0.1:8000/admin/`)
//! would otherwise send the browser around the gateway, or set cookies the browser drops.
//!
//! - `Location`, `Content-Location` and the URL of `Refresh` (`5; url=…`) are rewritten when
//!   their scheme and authority are the upstream's (default ports and letter case aside, and
//!   scheme-relative `//host:port/…` too); path, query and fragment are kept byte for byte.
//!   Relative references and other hosts' URLs are left alone.
//! - A `Set-Cookie` whose `Domain` names the upstream's host loses that attribute, so the cookie
//!   belongs to the site host the browser talks to. Upstreams are origins without a base path,
//!   so a cookie's `Path` never names the upstream and is kept.

use crate::config::Upstream;
use crate::http::client::default_port;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// Rewrites what in `headers` points at `upstream` to `public` (`https://tasks.example`, the
/// scheme and authority the browser used).
pub fn rewrite_to_public(headers: &mut HeaderMap, upstream: &Upstream, public: &str) {
    // One pass over the names present first: most responses carry none of these, and looking
    // each up costs a hash and a probe.
    let rewritten = [&header::LOCATION, &header::CONTENT_LOCATION, &REFRESH, &header::SET_COOKIE];
    if !headers.keys().any(|name| rewritten.contains(&name)) {
        return;
    }
    for name in [header::LOCATION, header::CONTENT_LOCATION] {
        rewrite_each(headers, &name, |value| public_url(value, upstream, public));
    }
    rewrite_each(headers, &REFRESH, |value| refresh(value, upstream, public));
    rewrite_each(headers, &header::SET_COOKIE, |value| cookie_without_upstream_domain(value, upstream));
}

/// `Refresh`, named once.
const REFRESH: HeaderName = HeaderName::from_static("refresh");

/// Replaces every value of `name` for which `rewrite` gives a new text (values that are not
/// valid UTF-8, or whose new text is not a valid header value, are kept as they were).
fn rewrite_each(headers: &mut HeaderMap, name: &HeaderName, rewrite: impl Fn(&str) -> Option<String>) {
    let values: Vec<HeaderValue> = headers.get_all(name).iter().cloned().collect();
    if values.is_empty() {
        return;
    }
    let mut changed = false;
    let rewritten: Vec<HeaderValue> = values
        .into_iter()
        .map(|value| {
            let new =
                value.to_str().ok().and_then(&rewrite).and_then(|text| HeaderValue::from_str(&text).ok());
            changed |= new.is_some();
            new.unwrap_or(value)
        })
        .collect();
    if changed {
        headers.remove(name);
        for value in rewritten {
            headers.append(name.clone(), value);
        }
    }
}

/// `url` with `public` in place of the upstream's scheme and authority, if it names them.
fn public_url(url: &str, upstream: &Upstream, public: &str) -> Option<String> {
    let trimmed = url.trim();
    let (scheme, rest) = match trimmed.strip_prefix("//") {
        Some(rest) => (upstream.scheme.as_str(), rest),
        None => {
            let (scheme, rest) = trimmed.split_once("://")?;
            (scheme, rest)
        }
    };
    if !scheme.eq_ignore_ascii_case(upstream.scheme.as_str()) {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    same_authority(authority, upstream).then(|| format!("{public}{}", &rest[end..]))
}

/// Whether `authority` (from a header) is the upstream's: no user info, the same host in any
/// case, the same port with the scheme's default filled in.
fn same_authority(authority: &str, upstream: &Upstream) -> bool {
    if authority.contains('@') {
        return false;
    }
    let Ok(parsed) = authority.parse::<http::uri::Authority>() else { return false };
    let default = default_port(upstream.scheme == http::uri::Scheme::HTTPS);
    parsed.host().eq_ignore_ascii_case(upstream.authority.host())
        && parsed.port_u16().unwrap_or(default) == upstream.authority.port_u16().unwrap_or(default)
}

/// `Refresh: 5; url=http://upstream/next` with the URL made public.
fn refresh(value: &str, upstream: &Upstream, public: &str) -> Option<String> {
    let lower = value.to_ascii_lowercase();
    let at = lower.find("url=")? + "url=".len();
    let target = &value[at..];
    let quote = target.chars().next().filter(|c| *c == '\'' || *c == '"');
    let inner = match quote {
        Some(quote) => target[1..].strip_suffix(quote).unwrap_or(&target[1..]),
        None => target,
    };
    let rewritten = public_url(inner, upstream, public)?;
    Some(match quote {
        Some(quote) => format!("{}{quote}{rewritten}{quote}", &value[..at]),
        None => format!("{}{rewritten}", &value[..at]),
    })
}

/// The cookie without a `Domain` attribute that names the upstream's host.
fn cookie_without_upstream_domain(value: &str, upstream: &Upstream) -> Option<String> {
    let host = upstream.authority.host();
    let mut parts = value.split(';');
    let first = parts.next()?;
    let mut removed = false;
    let kept: Vec<&str> = parts
        .filter(|attribute| {
            let (name, domain) = attribute.split_once('=').unwrap_or((attribute, ""));
            let upstream_domain = name.trim().eq_ignore_ascii_case("domain")
                && domain.trim().trim_start_matches('.').eq_ignore_ascii_case(host);
            removed |= upstream_domain;
            !upstream_domain
        })
        .collect();
    removed.then(|| std::iter::once(first).chain(kept).collect::<Vec<_>>().join(";"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(url: &str) -> Upstream {
        let uri: http::Uri = url.parse().expect("uri");
        Upstream {
            scheme: uri.scheme().cloned().expect("scheme"),
            authority: uri.authority().cloned().expect("authority"),
        }
    }

    fn rewritten(name: &str, value: &str, upstream_url: &str) -> Vec<String> {
        let mut headers = HeaderMap::new();
        headers.append(HeaderName::from_bytes(name.as_bytes()).expect("name"), value.parse().expect("value"));
        rewrite_to_public(&mut headers, &upstream(upstream_url), "https://tasks.example");
        headers.get_all(name).iter().map(|v| v.to_str().expect("text").to_owned()).collect()
    }

    #[test]
    fn locations_at_the_upstream_become_public() {
        let up = "http://127.0.0.1:18801";
        for (location, expected) in [
            ("http://127.0.0.1:18801/admin/?next=%2F#top", "https://tasks.example/admin/?next=%2F#top"),
            ("HTTP://127.0.0.1:18801", "https://tasks.example"),
            ("//127.0.0.1:18801/x", "https://tasks.example/x"),
            ("/admin/login/", "/admin/login/"),
            ("http://127.0.0.1:18802/other-port", "http://127.0.0.1:18802/other-port"),
            ("https://127.0.0.1:18801/other-scheme", "https://127.0.0.1:18801/other-scheme"),
            ("http://user@127.0.0.1:18801/userinfo", "http://user@127.0.0.1:18801/userinfo"),
            (
                "http://sso.example/login?next=http://127.0.0.1:18801/",
                "http://sso.example/login?next=http://127.0.0.1:18801/",
            ),
        ] {
            assert_eq!(rewritten("location", location, up), [expected], "{location}");
            assert_eq!(rewritten("content-location", location, up), [expected], "{location}");
        }
        // Default ports and host case.
        assert_eq!(
            rewritten("location", "http://App.Internal:80/a", "http://app.internal"),
            ["https://tasks.example/a"]
        );
        assert_eq!(
            rewritten("location", "https://app.internal/a", "https://app.internal:443"),
            ["https://tasks.example/a"]
        );
    }

    #[test]
    fn refresh_urls_become_public() {
        let up = "http://10.0.0.5:8080";
        assert_eq!(
            rewritten("refresh", "5; url=http://10.0.0.5:8080/next", up),
            ["5; url=https://tasks.example/next"]
        );
        assert_eq!(
            rewritten("refresh", "0;URL='http://10.0.0.5:8080/q?a=1'", up),
            ["0;URL='https://tasks.example/q?a=1'"]
        );
        assert_eq!(rewritten("refresh", "30", up), ["30"]);
        assert_eq!(rewritten("refresh", "1; url=/relative", up), ["1; url=/relative"]);
    }

    #[test]
    fn cookies_scoped_to_the_upstream_host_become_host_only() {
        let up = "http://app.internal:8000";
        let mut headers = HeaderMap::new();
        for cookie in [
            "sessionid=abc; Domain=app.internal; Path=/; HttpOnly",
            "csrftoken=x; domain=.APP.internal; Secure",
            "theme=dark; Domain=example.com; Path=/",
            "plain=1; Path=/admin",
        ] {
            headers.append(header::SET_COOKIE, cookie.parse().expect("value"));
        }
        rewrite_to_public(&mut headers, &upstream(up), "https://tasks.example");
        let cookies: Vec<&str> =
            headers.get_all(header::SET_COOKIE).iter().map(|v| v.to_str().expect("text")).collect();
        assert_eq!(
            cookies,
            [
                "sessionid=abc; Path=/; HttpOnly",
                "csrftoken=x; Secure",
                "theme=dark; Domain=example.com; Path=/",
                "plain=1; Path=/admin"
            ]
        );
    }
}
