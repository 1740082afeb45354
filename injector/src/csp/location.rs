//! The runtime script's absolute URL, split for CSP source matching.
//!
//! Matching follows CSP3 §6.7.2 closely enough to never claim a match the browser would refuse:
//! scheme (with the http → https upgrade), exact host or `*.` wildcard, port (explicit, default or
//! `*`), and path (prefix when the source ends in `/`, exact otherwise). Anything this code is
//! unsure about is "no match", which only costs an extra nonce.

/// Scheme, host, port and path of the runtime script URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ScriptLocation {
    scheme: String,
    host: String,
    port: Option<u16>,
    path: String,
}

impl ScriptLocation {
    /// Parses an absolute `http(s)` URL; `None` for anything else (the caller then relies on
    /// nonces only).
    pub(super) fn parse(url: &str) -> Option<Self> {
        let (scheme, rest) = url.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, after_authority) = rest.split_at(authority_end);
        if authority.contains('@') {
            // Credentials in the runtime URL would be a gateway bug; refuse to reason about it.
            return None;
        }
        let (host, port) = split_host_port(authority)?;
        let path_end = after_authority.find(['?', '#']).unwrap_or(after_authority.len());
        let path = match &after_authority[..path_end] {
            "" => "/",
            path => path,
        };
        Some(Self { scheme, host: host.to_ascii_lowercase(), port, path: path.to_owned() })
    }

    /// Whether a location source expression (`*`, `scheme:`, or host-source) admits this URL.
    pub(super) fn matches(&self, expression: &str) -> bool {
        if expression == "*" {
            // `*` covers every network scheme, and the runtime URL is always http(s).
            return true;
        }
        if let Some(scheme) = expression.strip_suffix(':')
            && !scheme.contains([':', '/'])
        {
            return self.scheme_matches(scheme);
        }
        self.matches_host_source(expression)
    }

    fn matches_host_source(&self, expression: &str) -> bool {
        let (scheme, rest) = match expression.split_once("://") {
            Some((scheme, rest)) => (Some(scheme), rest),
            None => (None, expression),
        };
        // Without a scheme the source means "the page's scheme"; the runtime is same-origin with
        // the page, so its own scheme is the page's.
        if scheme.is_some_and(|scheme| !self.scheme_matches(scheme)) {
            return false;
        }
        let path_start = rest.find('/').unwrap_or(rest.len());
        let (authority, path) = rest.split_at(path_start);
        let (host, port) = match split_source_host_port(authority) {
            Some(parts) => parts,
            None => return false,
        };
        self.host_matches(host) && self.port_matches(port) && self.path_matches(path)
    }

    fn scheme_matches(&self, scheme: &str) -> bool {
        let scheme = scheme.to_ascii_lowercase();
        scheme == self.scheme || (scheme == "http" && self.scheme == "https")
    }

    fn host_matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        if host == "*" {
            return true;
        }
        match host.strip_prefix("*.") {
            Some(suffix) => {
                self.host.strip_suffix(suffix).is_some_and(|label| label.len() > 1 && label.ends_with('.'))
            }
            None => host == self.host,
        }
    }

    fn port_matches(&self, port: SourcePort) -> bool {
        let effective = self.port.unwrap_or(self.default_port());
        match port {
            SourcePort::Any => true,
            SourcePort::Number(number) => number == effective,
            // A source without a port admits the default port of the URL's scheme.
            SourcePort::Default => effective == self.default_port(),
        }
    }

    fn path_matches(&self, source_path: &str) -> bool {
        if source_path.is_empty() || source_path == "/" {
            return true;
        }
        if source_path.ends_with('/') { self.path.starts_with(source_path) } else { self.path == source_path }
    }

    fn default_port(&self) -> u16 {
        if self.scheme == "https" { 443 } else { 80 }
    }
}

/// The port part of a host-source.
#[derive(Clone, Copy, Debug)]
enum SourcePort {
    Default,
    Any,
    Number(u16),
}

fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = split_port_text(authority);
    if host.is_empty() {
        return None;
    }
    match port {
        None => Some((host, None)),
        Some(port) => Some((host, Some(port.parse().ok()?))),
    }
}

fn split_source_host_port(authority: &str) -> Option<(&str, SourcePort)> {
    let (host, port) = split_port_text(authority);
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None => SourcePort::Default,
        Some("*") => SourcePort::Any,
        Some(number) => SourcePort::Number(number.parse().ok()?),
    };
    Some((host, port))
}

/// Splits `host:port`, keeping bracketed IPv6 literals whole.
fn split_port_text(authority: &str) -> (&str, Option<&str>) {
    let host_end = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |index| index + 1)
    } else {
        authority.find(':').unwrap_or(authority.len())
    };
    let (host, rest) = authority.split_at(host_end);
    (host, rest.strip_prefix(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(url: &str) -> ScriptLocation {
        match ScriptLocation::parse(url) {
            Some(location) => location,
            None => panic!("{url} should parse"),
        }
    }

    #[test]
    fn parses_scheme_host_port_path() {
        let parsed = location("HTTPS://Tasks.Corp.Example:8443/.toolgate/runtime.js?x#y");
        assert_eq!(parsed.scheme, "https");
        assert_eq!(parsed.host, "tasks.corp.example");
        assert_eq!(parsed.port, Some(8443));
        assert_eq!(parsed.path, "/.toolgate/runtime.js");
        assert!(ScriptLocation::parse("/relative.js").is_none());
        assert!(ScriptLocation::parse("ftp://host/x").is_none());
        assert!(ScriptLocation::parse("https://user@host/x").is_none());
        assert!(ScriptLocation::parse("https://host:99999/x").is_none());
    }

    #[test]
    fn scheme_sources() {
        let script = location("https://tasks.corp.example/r.js");
        assert!(script.matches("https:"));
        assert!(script.matches("HTTP:"));
        assert!(!script.matches("data:"));
        assert!(script.matches("*"));
        assert!(!location("http://tasks.corp.example/r.js").matches("https:"));
    }

    #[test]
    fn host_sources() {
        let script = location("https://tasks.corp.example/.toolgate/runtime.js");
        assert!(script.matches("tasks.corp.example"));
        assert!(script.matches("https://TASKS.corp.example"));
        assert!(script.matches("http://tasks.corp.example"));
        assert!(script.matches("*.corp.example"));
        assert!(script.matches("https://*.example"));
        assert!(!script.matches("*.tasks.corp.example"));
        assert!(!script.matches("corp.example"));
        assert!(!script.matches("evil-tasks.corp.example"));
        assert!(!script.matches("wss://tasks.corp.example"));
    }

    #[test]
    fn wildcard_needs_a_whole_label() {
        let script = location("https://xcorp.example/r.js");
        assert!(!script.matches("*.corp.example"));
    }

    #[test]
    fn ports() {
        let script = location("https://tasks.corp.example/r.js");
        assert!(script.matches("tasks.corp.example:443"));
        assert!(script.matches("tasks.corp.example:*"));
        assert!(!script.matches("tasks.corp.example:8443"));
        let custom = location("https://tasks.corp.example:8443/r.js");
        assert!(!custom.matches("tasks.corp.example"));
        assert!(custom.matches("tasks.corp.example:8443"));
    }

    #[test]
    fn paths() {
        let script = location("https://tasks.corp.example/.toolgate/runtime.js");
        assert!(script.matches("https://tasks.corp.example/"));
        assert!(script.matches("https://tasks.corp.example/.toolgate/"));
        assert!(script.matches("https://tasks.corp.example/.toolgate/runtime.js"));
        assert!(!script.matches("https://tasks.corp.example/static/"));
        assert!(!script.matches("https://tasks.corp.example/.toolgate"));
    }
}
