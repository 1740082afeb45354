//! Conversions of single configuration values (durations, addresses, URLs, names).
//!
//! Each returns the typed value or a message saying what was expected; the caller adds the
//! line and key.

use super::{LogFormat, Upstream};
use http::uri::Scheme;
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Whether a host name (as a URL spells it: IPv6 in brackets) is this machine.
pub(super) fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

pub(super) fn public_url(text: &str) -> Result<http::Uri, String> {
    let uri: http::Uri = text.parse().map_err(|_| "not a URL".to_owned())?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(_)) => Ok(uri),
        _ => Err("must be an absolute http:// or https:// URL".into()),
    }
}

pub(super) fn socket_addr(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| format!("`{text}` is not an address like 127.0.0.1:8080 or [::]:443"))
}

pub(super) fn ip_net(text: &str) -> Result<IpNet, String> {
    if let Ok(net) = text.parse::<IpNet>() {
        return Ok(net);
    }
    text.parse::<IpAddr>()
        .map(IpNet::from)
        .map_err(|_| format!("`{text}` is not an IP address or CIDR range"))
}

/// An HTTP header name, lower-cased (`_` kept: the proxy reads it as `-` too).
pub(super) fn header_name(text: &str) -> Result<String, String> {
    let name = text.trim().to_ascii_lowercase();
    match http::HeaderName::from_bytes(name.as_bytes()) {
        Ok(_) if !name.is_empty() => Ok(name.replace('_', "-")),
        _ => Err(format!("`{text}` is not a header name")),
    }
}

pub(super) fn log_format(text: &str) -> Result<LogFormat, String> {
    match text {
        "json" => Ok(LogFormat::Json),
        "pretty" => Ok(LogFormat::Pretty),
        other => Err(format!("`{other}` is not a log format; use \"json\" or \"pretty\"")),
    }
}

pub(super) fn absolute_or_relative_path(text: &str) -> Result<PathBuf, String> {
    if text.trim().is_empty() {
        return Err("must not be empty".into());
    }
    Ok(PathBuf::from(text))
}

/// Durations as `humantime` reads them: `250ms`, `10s`, `5m`, `1h30m`, `30d`; zero is refused
/// (a zero timeout is a typo), and so is a number without its unit.
pub(super) fn duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text)
        .map_err(|_| format!("`{text}` is not a duration like 250ms, 10s, 5m, 1h30m or 30d"))?;
    if duration.is_zero() {
        return Err("must be longer than zero".into());
    }
    Ok(duration)
}

/// Site ids appear in policy files, metric labels and URLs: keep them plain.
pub(super) fn site_id(text: &str) -> Result<(), String> {
    let valid = !text.is_empty()
        && text.len() <= 64
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err("site ids use lower-case letters, digits, `-` and `_` (at most 64)".into())
    }
}

pub(super) fn host_name(text: &str) -> Result<String, String> {
    let host = text.to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if valid { Ok(host) } else { Err(format!("`{text}` is not a host name (no scheme, port or path)")) }
}

pub(super) fn upstream(text: &str) -> Result<Upstream, String> {
    let uri: http::Uri = text.parse().map_err(|_| format!("`{text}` is not a URL"))?;
    let scheme = match uri.scheme_str() {
        Some("http") => Scheme::HTTP,
        Some("https") => Scheme::HTTPS,
        _ => return Err("must start with http:// or https://".into()),
    };
    let authority = uri.authority().cloned().ok_or("must name a host")?;
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err("must be an origin without path or query, like http://10.0.0.5:8080".into());
    }
    if authority.as_str().contains('@') {
        return Err("must not carry credentials".into());
    }
    Ok(Upstream { scheme, authority })
}
