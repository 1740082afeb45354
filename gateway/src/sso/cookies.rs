//! The gateway's cookies: names (with the `__Host-` prefix and `Secure` when the browser uses
//! HTTPS), `Set-Cookie` values, reading them from requests, and removing them from requests
//! that go to sites (a site must never see a gateway cookie).

use http::HeaderMap;
use http::header::{self, HeaderValue};

/// Which gateway cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieKind {
    /// Points to the server-side session.
    Session,
    /// Binds a login in progress to the browser that started it (gateway host).
    Login,
    /// Binds a handoff ticket to the browser that asked to sign in (site host).
    Pending,
    /// Marks an agent's form submission (set by the runtime, `outcomes::mark`).
    Submission,
    /// Marks the request that follows a redirect of an agent's submission (set by the proxy).
    Landing,
}

impl CookieKind {
    const ALL: [CookieKind; 5] = [Self::Session, Self::Login, Self::Pending, Self::Submission, Self::Landing];

    fn base_name(self) -> &'static str {
        match self {
            Self::Session => "toolgate",
            Self::Login => "toolgate-login",
            Self::Pending => "toolgate-pending",
            Self::Submission => "toolgate-submit",
            Self::Landing => "toolgate-landing",
        }
    }

    /// The cookie's name: `__Host-` prefixed over HTTPS (the browser then guarantees Secure,
    /// Path=/ and no Domain), plain over HTTP (development).
    pub fn name(self, secure: bool) -> String {
        format!("{}{}", name_prefix(secure), self.base_name())
    }

    /// Whether `candidate` is [`CookieKind::name`], compared in place (nothing is built).
    fn is_name(self, candidate: &str, secure: bool) -> bool {
        candidate.strip_prefix(name_prefix(secure)).is_some_and(|rest| rest == self.base_name())
    }

    /// The purpose string values of this cookie are sealed for.
    pub fn purpose(self) -> &'static str {
        self.base_name()
    }
}

/// What a gateway cookie's name starts with: `__Host-` over HTTPS, nothing over HTTP.
fn name_prefix(secure: bool) -> &'static str {
    if secure { "__Host-" } else { "" }
}

/// A `Set-Cookie` value; `max_age` zero deletes the cookie.
pub fn set_cookie(kind: CookieKind, secure: bool, value: &str, max_age_seconds: u64) -> Option<HeaderValue> {
    let secure_attribute = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_seconds}{secure_attribute}",
        kind.name(secure)
    ))
    .ok()
}

/// The value of a gateway cookie in a request. Over HTTPS only the `__Host-` name counts: a
/// plain-named cookie can be planted by a sibling subdomain (cookie tossing), which would let an
/// attacker sign a victim into the attacker's session.
pub fn read(headers: &HeaderMap, kind: CookieKind, secure: bool) -> Option<String> {
    // Most requests carry no gateway cookie: the name is compared in place, not built.
    pairs(headers).find(|(candidate, _)| kind.is_name(candidate, secure)).map(|(_, value)| value.to_owned())
}

/// Removes every gateway cookie from a request on its way to a site, keeping the site's own.
pub fn strip_gateway_cookies(headers: &mut HeaderMap) {
    if !headers.contains_key(header::COOKIE) {
        return;
    }
    let gateway_names: Vec<String> =
        CookieKind::ALL.iter().flat_map(|kind| [kind.name(true), kind.name(false)]).collect();
    let kept: Vec<String> = pairs(headers)
        .filter(|(name, _)| !gateway_names.iter().any(|gateway| gateway.eq_ignore_ascii_case(name)))
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    headers.remove(header::COOKIE);
    if !kept.is_empty()
        && let Ok(value) = HeaderValue::from_str(&kept.join("; "))
    {
        headers.insert(header::COOKIE, value);
    }
}

/// Removes `Set-Cookie` headers of an upstream response that would set a gateway cookie: a
/// site must not be able to swap the browser's gateway session.
pub fn strip_gateway_set_cookies(headers: &mut HeaderMap) {
    if !headers.contains_key(header::SET_COOKIE) {
        return;
    }
    let gateway_names: Vec<String> =
        CookieKind::ALL.iter().flat_map(|kind| [kind.name(true), kind.name(false)]).collect();
    let kept: Vec<HeaderValue> = headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter(|value| {
            let name = value.to_str().ok().and_then(|text| text.split('=').next()).unwrap_or_default().trim();
            !gateway_names.iter().any(|gateway| gateway.eq_ignore_ascii_case(name))
        })
        .cloned()
        .collect();
    headers.remove(header::SET_COOKIE);
    for value in kept {
        headers.append(header::SET_COOKIE, value);
    }
}

fn pairs(headers: &HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            Some((name.trim(), value.trim()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_cookies_never_reach_sites() {
        let mut headers = HeaderMap::new();
        headers
            .append(header::COOKIE, HeaderValue::from_static("app=1; toolgate=secret; __Host-toolgate=s2"));
        headers.append(header::COOKIE, HeaderValue::from_static("TOOLGATE-pending=x; theme=dark"));
        strip_gateway_cookies(&mut headers);
        assert_eq!(headers.get_all(header::COOKIE).iter().collect::<Vec<_>>(), ["app=1; theme=dark"]);
        let mut only_ours = HeaderMap::new();
        only_ours.insert(header::COOKIE, HeaderValue::from_static("toolgate=secret"));
        strip_gateway_cookies(&mut only_ours);
        assert!(only_ours.get(header::COOKIE).is_none());
    }

    #[test]
    fn sites_cannot_set_gateway_cookies() {
        let mut headers = HeaderMap::new();
        headers
            .append(header::SET_COOKIE, HeaderValue::from_static("__Host-toolgate=attacker; Path=/; Secure"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("TOOLGATE-PENDING=x"));
        headers.append(header::SET_COOKIE, HeaderValue::from_static("app=1; Path=/"));
        strip_gateway_set_cookies(&mut headers);
        assert_eq!(headers.get_all(header::SET_COOKIE).iter().collect::<Vec<_>>(), ["app=1; Path=/"]);
    }

    #[test]
    fn over_https_only_host_prefixed_cookies_count() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_static("toolgate=planted"));
        assert_eq!(read(&headers, CookieKind::Session, true), None, "a tossed cookie is ignored");
        assert_eq!(read(&headers, CookieKind::Session, false).as_deref(), Some("planted"));
        headers.insert(header::COOKIE, HeaderValue::from_static("toolgate=planted; __Host-toolgate=real"));
        assert_eq!(read(&headers, CookieKind::Session, true).as_deref(), Some("real"));
    }

    #[test]
    fn secure_cookies_use_the_host_prefix() {
        let value = set_cookie(CookieKind::Session, true, "v", 60).expect("value");
        assert_eq!(value, "__Host-toolgate=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure");
        let plain = set_cookie(CookieKind::Session, false, "v", 0).expect("value");
        assert!(!plain.to_str().unwrap_or_default().contains("Secure"));
    }
}
