//! Secrets in URLs: the password of `scheme://user:password@host` (RFC 3986 userinfo), the
//! secret path of webhook URLs (`https://hooks.slack.com/services/T…/B…/…`,
//! `https://discord.com/api/webhooks/<id>/<token>`, Microsoft Teams'
//! `https://<org>.webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<secret>/<owner>`),
//! and the signature of a signed URL, which grants its access to whoever holds the URL: Azure's
//! shared access signature (`sig=`), S3's and Google Cloud Storage's presigned URLs
//! (`X-Amz-Signature=`, `X-Goog-Signature=`) and CloudFront's signed URLs (`Signature=`), and a
//! session id carried in the URL (`;jsessionid=`, `?PHPSESSID=`, `sid=`), which signs in whoever
//! opens it. Their other parameters (the AWS key
//! id, a `X-Amz-Security-Token`) are found by their own recognizers.
//!
//! The authority runs from `://` to the first `/`, `?`, `#`, whitespace, quote, `<`, `>` or
//! backslash; its last `@` ends the userinfo (so a password with a raw `@` is taken whole) and its
//! first `:` starts the password. A raw `?` or `#` inside a password (invalid, but common in
//! hand-written connection strings) is tolerated when the user name has none. No password
//! (`https://ci-bot@host/`), no scheme (`git@github.com:org/repo.git`) or a placeholder password
//! (`${DB_PASSWORD}`, `****`) reports nothing.

use super::{placeholder, run};

const MAX_AUTHORITY: usize = 512;

/// How far a URL is read for its query.
const MAX_URL: usize = 8192;

/// The query parameters whose value is a URL's signature (compared without case).
const SIGNATURE_PARAMETERS: [&str; 4] = ["sig", "signature", "x-amz-signature", "x-goog-signature"];

/// The shortest signature taken: Azure's is 32 bytes in base64, AWS's and Google's are hex.
const MIN_SIGNATURE: usize = 16;

/// URL parameters that carry a session id: a URL holding one signs its holder in (Java's
/// `;jsessionid=`, PHP's `PHPSESSID`, ASP's `ASPSESSIONID…`, and the generic names).
const SESSION_PARAMETERS: [&str; 9] = [
    "jsessionid",
    "phpsessid",
    "sid",
    "sessid",
    "sessionid",
    "session_id",
    "session",
    "sessiontoken",
    "session_token",
];

/// The shortest session id taken.
const MIN_SESSION: usize = 8;

/// Handles `://` at `at`; returns where scanning resumes.
pub(super) fn at_scheme_separator(text: &str, at: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let mut scheme = at;
    while scheme > 0
        && at - scheme < 32
        && matches!(bytes[scheme - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'+' | b'.' | b'-')
    {
        scheme -= 1;
    }
    let authority = at + 3;
    if at - scheme < 2 || !bytes[scheme].is_ascii_alphabetic() {
        return authority;
    }
    parameters_in_url(text, authority, out);
    let stops =
        |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\' | b'/');
    let end = run(bytes, authority, MAX_AUTHORITY, |b| !stops(b) && b != b'?' && b != b'#');
    // Passwords are often written with a raw `?` or `#`: look for the `@` past them too.
    let wide_end = run(bytes, authority, MAX_AUTHORITY, |b| !stops(b));
    let Some(at_sign) = text[authority..wide_end].rfind('@').map(|index| authority + index) else {
        return webhook(text, authority, end, out);
    };
    let host_ok = bytes.get(at_sign + 1).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'[');
    // Without a finding, scanning resumes inside the authority: a vendor token written as the
    // user name (`https://ghp_…@github.com`) is still read by its own recognizer.
    let Some(colon) = text[authority..at_sign].find(':').map(|index| authority + index) else {
        return authority;
    };
    if text[authority..colon].contains(['?', '#']) {
        return authority;
    }
    let (start, stop) = (colon + 1, at_sign);
    let password = &text[start..stop];
    if !host_ok || password.is_empty() || placeholder::is_placeholder(password) {
        return authority;
    }
    super::secret(out, start, stop);
    start
}

/// Reports the value of each signature parameter and session id in the URL whose authority
/// starts at `authority`: in its query (from the first `?` to a `#`, parameters split on `&` or
/// `;`) and in its path parameters (`/app;jsessionid=…`). The URL ends where prose or markup would
/// end it.
fn parameters_in_url(text: &str, authority: usize, out: &mut Vec<super::Finding>) {
    let bytes = text.as_bytes();
    let url_end = run(bytes, authority, MAX_URL, |b| {
        !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`' | b'<' | b'>' | b'\\')
    });
    let url = &text[authority..url_end];
    let query_start = url.find('?').map(|index| authority + index + 1);
    let path_end =
        query_start.map_or_else(|| url.find('#').map_or(url_end, |index| authority + index), |q| q - 1);
    // Path parameters: `;name=value` up to the next `/`, `;` or the query.
    let mut at = authority;
    while let Some(offset) = text[at..path_end].find(';') {
        let start = at + offset + 1;
        let end = text[start..path_end].find(['/', ';']).map_or(path_end, |index| start + index);
        parameter(text, start, end, out);
        at = end;
    }
    let Some(query_start) = query_start else {
        return;
    };
    let query_end = text[query_start..url_end].find('#').map_or(url_end, |index| query_start + index);
    let mut start = query_start;
    for piece in text[query_start..query_end].split(['&', ';']) {
        parameter(text, start, start + piece.len(), out);
        start += piece.len() + 1;
    }
}

/// Reports the value of the URL parameter `name=value` at `start..end` when it is a signature
/// (16 characters or more) or a session id (8 or more).
fn parameter(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) {
    let Some((name, value)) = text[start..end].split_once('=') else {
        return;
    };
    let lower = name.to_ascii_lowercase();
    let signature = SIGNATURE_PARAMETERS.contains(&lower.as_str()) && value.len() >= MIN_SIGNATURE;
    let session = (SESSION_PARAMETERS.contains(&lower.as_str()) || lower.starts_with("aspsessionid"))
        && value.len() >= MIN_SESSION;
    if (signature || session) && !placeholder::is_placeholder(value) {
        let value_start = start + name.len() + 1;
        super::secret(out, value_start, end);
    }
}

/// Where the secret part of a Microsoft Teams incoming webhook's path starts (an offset into
/// `path`), when `host` and `path` are one's: `<org>.webhook.office.com/webhookb2/…` or the older
/// `outlook.office.com/webhook/…`, then `<group>@<tenant>/IncomingWebhook/` and the secret (32 hex
/// and the owner's GUID, and a signature part in newer URLs). The group and tenant GUIDs only
/// name where the webhook posts, and stay.
fn teams_secret(host: &str, path: &str) -> Option<usize> {
    let (host, suffix) = (host.as_bytes(), b".webhook.office.com");
    let prefix =
        if host.len() > suffix.len() && host[host.len() - suffix.len()..].eq_ignore_ascii_case(suffix) {
            "/webhookb2/"
        } else if host.eq_ignore_ascii_case(b"outlook.office.com")
            || host.eq_ignore_ascii_case(b"outlook.office365.com")
        {
            "/webhook/"
        } else {
            return None;
        };
    let marker = "/IncomingWebhook/";
    let route = path.strip_prefix(prefix)?;
    let at = prefix.len() + route[..super::floor_boundary(route, 512)].find(marker)?;
    // The group and tenant: no whitespace or markup between the prefix and the marker.
    let ids = &path[prefix.len()..at];
    let in_path = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '@');
    (ids.contains('@') && ids.chars().all(in_path)).then_some(at + marker.len())
}

/// The secret path of a webhook URL whose authority is `authority..end`; returns where scanning
/// resumes: past the path found, past the authority, or inside it when it holds parameters
/// (`jdbc:sqlserver://host;user=sa;password=…`).
fn webhook(text: &str, authority: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    // Parameters in the authority (`;user=sa;password=…`) are read by their own recognizers.
    let resume = if text[authority..end].contains([';', '=']) { authority } else { end };
    let host = &text[authority..end];
    let path = &text[end..];
    let bytes = text.as_bytes();
    let path_chars = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-');
    let (start, stop, look_alike) = if host.eq_ignore_ascii_case("hooks.slack.com") {
        let Some(prefix) =
            ["/services/", "/workflows/", "/triggers/"].into_iter().find(|prefix| path.starts_with(prefix))
        else {
            return resume;
        };
        let start = end + prefix.len();
        let stop = run(bytes, start, 256, path_chars);
        let parts: Vec<&str> = text[start..stop].split('/').collect();
        if parts.len() < 3 || parts.iter().any(|part| part.is_empty()) || parts[parts.len() - 1].len() < 16 {
            return resume;
        }
        // Slack's documentation uses `T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX`.
        let masked = parts.iter().any(|part| placeholder::is_masked(&part[1.min(part.len())..]))
            || placeholder::is_masked(parts[parts.len() - 1]);
        (start, stop, masked)
    } else if ["discord.com", "discordapp.com"].iter().any(|name| host.eq_ignore_ascii_case(name))
        && path.starts_with("/api/webhooks/")
    {
        let id = end + "/api/webhooks/".len();
        let id_end = run(bytes, id, 24, |b| b.is_ascii_digit());
        if id_end == id || bytes.get(id_end) != Some(&b'/') {
            return resume;
        }
        let stop = run(bytes, id_end + 1, 256, |b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if stop - id_end < 40 {
            return resume;
        }
        (id_end + 1, stop, placeholder::is_masked(&text[id_end + 1..stop]))
    } else if let Some(start) = teams_secret(host, path) {
        let start = end + start;
        let mut stop = run(bytes, start, 256, path_chars);
        while stop > start && bytes[stop - 1] == b'/' {
            stop -= 1;
        }
        let hex_end = run(bytes, start, 33, |b| b.is_ascii_hexdigit());
        if hex_end - start != 32 || !matches!(bytes.get(hex_end), Some(b'/')) {
            return resume;
        }
        (start, stop, super::vendors::is_placeholder_body(&text[start..stop]))
    } else {
        return resume;
    };
    if look_alike {
        super::look_alike(out, start, stop);
    } else {
        super::secret(out, start, stop);
    }
    stop
}
