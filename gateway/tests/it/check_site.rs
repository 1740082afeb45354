//! `toolgate check-site`: run against an app that shows every pattern it knows (a redirect to its
//! own address, a cookie for its own host, a sandboxing CSP, a CSRF origin check that refuses the
//! public origin, a host allow-list), it names each one with its fix and exits 1; a well-behaved
//! app gets "no problems found" and exit 0; an unknown site exits 2.

use crate::harness::{self, Seen, reply, upstream};
use http::StatusCode;
use std::net::SocketAddr;

async fn check_site(config: &str, site: &str) -> (Option<i32>, String, String) {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("toolgate.toml");
    std::fs::write(&path, config).expect("write config");
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["check-site", site, "--config"])
        .arg(&path)
        .output()
        .await
        .expect("run toolgate");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// An app with every problem: it redirects to its own address, scopes a cookie to it, sandboxes
/// its login page, and refuses posts whose Origin is not its own.
fn troubled(seen: &Seen, own: &str) -> http::Response<gateway::http::body::ProxyBody> {
    match (seen.method.as_str(), seen.uri.path()) {
        ("GET", "/") => {
            let mut response = reply("text/html", "");
            *response.status_mut() = StatusCode::FOUND;
            let headers = response.headers_mut();
            headers.insert("location", format!("{own}/login/").parse().expect("location"));
            headers.insert("set-cookie", "sid=s3cr3t; Domain=127.0.0.1; Path=/".parse().expect("cookie"));
            response
        }
        ("GET", "/login/") => {
            let mut response = reply(
                "text/html; charset=utf-8",
                "<title>Sign in</title><form method=\"post\"><input type=\"hidden\" name=\"csrf\" value=\"t0k\">\
                 <input name=\"user\"><button>Sign in</button></form>",
            );
            response
                .headers_mut()
                .insert("content-security-policy", "sandbox allow-scripts".parse().expect("csp"));
            response
        }
        ("POST", "/login/") => {
            let origin = seen.headers.get("origin").and_then(|value| value.to_str().ok());
            let with_token = String::from_utf8_lossy(&seen.body).contains("csrf=t0k");
            let status =
                if origin == Some(own) && with_token { StatusCode::OK } else { StatusCode::FORBIDDEN };
            let mut response = reply("text/html", "<title>Sign in</title>");
            *response.status_mut() = status;
            response
        }
        _ => reply("text/html", "<p>none</p>"),
    }
}

fn config(sites: &[(&str, SocketAddr)], site_table: &str) -> String {
    format!("{}{site_table}", harness::config_text(sites, ""))
}

#[tokio::test]
async fn every_known_problem_is_named_with_its_fix() {
    let slot = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let own = slot.clone();
    let app = upstream(move |seen| troubled(seen, own.get().map_or("", String::as_str))).await;
    slot.set(format!("http://{}", app.address)).expect("origin");
    let (code, stdout, stderr) = check_site(&config(&[("hr.test", app.address)], ""), "site0").await;
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for needle in [
        &format!("GET / redirects to the upstream's own address: http://{}/login/", app.address),
        "the cookie `sid` is scoped to the upstream's host (127.0.0.1)",
        "GET /login/ is sandboxed by its CSP",
        "a form post to /login/ is refused from the public origin http://hr.test but not from the app's own",
        "fix: make the app trust the public origin",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("s3cr3t") && !stdout.contains("t0k"), "no cookie or field values: {stdout}");
    // What the app received looked like the gateway's requests.
    let first = &app.requests()[0];
    assert_eq!(first.headers.get("x-forwarded-host").and_then(|v| v.to_str().ok()), Some("hr.test"));
}

#[tokio::test]
async fn a_well_behaved_app_passes_and_a_host_allow_list_is_named() {
    let app = upstream(|seen| match seen.headers.get("host").and_then(|value| value.to_str().ok()) {
        Some("hr.test") => {
            let mut response = reply("text/plain", "Invalid HTTP_HOST header");
            *response.status_mut() = StatusCode::BAD_REQUEST;
            response
        }
        _ => reply("text/html", "<title>Home</title><form method=\"post\" action=\"/search\"></form>"),
    })
    .await;
    let sites = [("hr.test", app.address)];
    let (code, stdout, _) = check_site(&config(&sites, ""), "site0").await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.trim_end().ends_with("no problems found"), "{stdout}");
    assert!(stdout.contains("POST /search (Origin http://hr.test) → 200"), "{stdout}");

    let preserved = config(&sites, "preserve_host = true\n");
    let (code, stdout, _) = check_site(&preserved, "site0").await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("the app refuses the Host the gateway sends (hr.test): a host allow-list"),
        "{stdout}"
    );

    let (code, _, stderr) = check_site(&config(&sites, ""), "nosuch").await;
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no site `nosuch`"), "{stderr}");
}
