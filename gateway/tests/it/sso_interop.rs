//! Single sign-on against a real, independent OpenID provider (the `oidc-provider` npm package,
//! started from `gateway/tests/oidc/`): browser-style logins through the gateway with a cookie
//! jar, identity reaching sites (and nothing spoofed or gateway-owned reaching them), logout,
//! token refresh, key rotation at the provider, and per-site access rules.

use crate::harness::{self, Answer, Seen, reply, send, upstream};
use bytes::Bytes;
use gateway::app::shutdown::Shutdown;
use gateway::app::{self, Running};
use gateway::config::Config;
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

mod sign_out;

const CLIENT_ID: &str = "toolgate-interop";
const CLIENT_SECRET: &str = "interop-secret:/+with punctuation";

/// The provider, running as a child process.
struct Provider {
    issuer: String,
    child: Child,
}

impl Provider {
    /// The provider for a gateway on `localhost:{port}`: its callback, the page it returns to
    /// after a sign-out, and its back-channel logout endpoint are registered.
    async fn start(port: u16) -> Self {
        let gateway = format!("http://localhost:{port}");
        let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oidc");
        assert!(
            directory.join("node_modules/oidc-provider").exists(),
            "the oidc-provider fixture is not installed: run ./test.sh, or `npm ci` in {}",
            directory.display()
        );
        let mut child = Command::new("node")
            .arg("provider.mjs")
            .current_dir(&directory)
            .env("CLIENT_ID", CLIENT_ID)
            .env("CLIENT_SECRET", CLIENT_SECRET)
            .env("REDIRECT_URIS", format!("{gateway}/.toolgate/callback"))
            .env("POST_LOGOUT_REDIRECT_URIS", format!("{gateway}/.toolgate/signed-out"))
            .env("BACKCHANNEL_LOGOUT_URI", format!("{gateway}/.toolgate/backchannel-logout"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect(
                "node runs (the test command installs Node packages; Node itself ships with the machine)",
            );
        let stderr = child.stderr.take().expect("stderr");
        // The provider's last words on stderr, for a failure to start to say why.
        let said = Arc::new(Mutex::new(VecDeque::new()));
        let keep = Arc::clone(&said);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut kept = keep.lock().expect("stderr lines");
                if kept.len() == 40 {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        let last_words = || said.lock().map(|kept| Vec::from(kept.clone()).join("\n")).unwrap_or_default();
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        // A readiness bound, not a timing assertion: Node starts slowly while the whole suite runs
        // on two cores.
        let issuer = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = lines.next_line().await.expect("provider stdout") {
                if let Some(issuer) = line.strip_prefix("oidc-provider listening on ") {
                    return Some(issuer.to_owned());
                }
            }
            None
        })
        .await;
        let issuer = match issuer {
            Ok(Some(issuer)) => issuer,
            Ok(None) => panic!("oidc-provider exited before listening; its stderr:\n{}", last_words()),
            Err(_) => panic!("oidc-provider did not start within 120 s; its stderr:\n{}", last_words()),
        };
        Self { issuer, child }
    }

    fn address(&self) -> SocketAddr {
        self.issuer.trim_start_matches("http://").parse().expect("issuer is http://127.0.0.1:PORT")
    }

    async fn control(&self, path: &str, body: &str) {
        let request = Request::post(path)
            .header("host", self.address().to_string())
            .header("content-type", if body.starts_with('{') { "application/json" } else { "text/plain" })
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        let answer = send(self.address(), request).await;
        assert!(answer.status.is_success(), "{path}: {} {}", answer.status, answer.text());
    }

    async fn next_user(&self, user: &str) {
        self.control("/test/next-user", user).await;
    }
}

/// A gateway in front of one site, signing in with `provider`.
struct Setup {
    gateway: Running,
    site: harness::Upstream,
    port: u16,
    provider: Provider,
}

impl Setup {
    async fn start(site_extra: &str) -> Self {
        let site = upstream(|seen: &Seen| reply("text/plain", format!("site saw {}", seen.uri.path()))).await;
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind gateway");
        let port = listener.local_addr().expect("address").port();
        let provider = Provider::start(port).await;
        let directory = tempfile::tempdir().expect("temp dir");
        let secret = directory.path().join("client-secret");
        std::fs::write(&secret, CLIENT_SECRET).expect("write secret");
        let text = format!(
            "public_url = \"http://localhost:{port}\"\n\
             [server]\nlisten = \"127.0.0.1:{port}\"\nadmin_listen = \"127.0.0.1:0\"\n\
             [sso]\nissuer = \"{issuer}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"file:{secret}\"\n\
             scopes = [\"openid\", \"email\", \"profile\", \"groups\"]\nalgorithms = [\"ES256\"]\n\
             key_refetch_interval = \"1s\"\n\
             [store]\npath = \":memory:\"\n\
             [audit]\nreader_groups = [\"finance-approvers\"]\n\
             [sites.site0]\nhost = \"app.localhost\"\nupstream = \"http://{site}\"\n{site_extra}\n",
            issuer = provider.issuer,
            secret = secret.display(),
            site = site.address,
        );
        let config = Config::parse(&text, "interop.toml").expect("config");
        let admin = TcpListener::bind("127.0.0.1:0").await.expect("bind admin");
        let gateway = app::start(config, listener, admin, Shutdown::new()).await.expect("gateway starts");
        // The secret was read at start-up; the file may go.
        drop(directory);
        Self { gateway, site, port, provider }
    }

    fn site_url(&self, path: &str) -> String {
        format!("http://app.localhost:{}{path}", self.port)
    }

    async fn metric(&self, line_start: &str) -> Option<String> {
        let text = send(self.gateway.admin_address, harness::get("admin", "/metrics")).await.text();
        text.lines().find(|line| line.starts_with(line_start)).map(str::to_owned)
    }
}

/// A minimal browser: a cookie jar per host and redirect following. Every host resolves to
/// 127.0.0.1, as `*.localhost` does in real browsers.
#[derive(Default)]
struct Browser {
    jar: HashMap<String, Vec<(String, String, String)>>,
}

impl Browser {
    /// Opens `url` as a page navigation and follows redirects.
    async fn open(&mut self, url: &str) -> (Answer, Vec<String>) {
        self.open_with(url, &[]).await
    }

    async fn open_with(&mut self, url: &str, extra: &[(&str, &str)]) -> (Answer, Vec<String>) {
        let mut current = url::Url::parse(url).expect("url");
        let mut history = vec![current.to_string()];
        for _ in 0..20 {
            let answer = self.request(Method::GET, &current, extra, None).await;
            if !answer.status.is_redirection() {
                return (answer, history);
            }
            let location = answer.header("location").expect("redirect has a location");
            current = current.join(location).expect("location resolves");
            history.push(current.to_string());
        }
        panic!("redirect loop: {history:#?}");
    }

    /// One request, no redirect following; cookies sent and stored.
    async fn request(
        &mut self,
        method: Method,
        url: &url::Url,
        extra: &[(&str, &str)],
        form: Option<&str>,
    ) -> Answer {
        let host = url.host_str().expect("host").to_owned();
        let port = url.port_or_known_default().expect("port");
        let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", format!("{host}:{port}"))
            .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8");
        let cookies: Vec<String> = self
            .jar
            .get(&host)
            .map(|cookies| {
                cookies
                    .iter()
                    .filter(|(_, _, cookie_path)| url.path().starts_with(cookie_path.as_str()))
                    .map(|(name, value, _)| format!("{name}={value}"))
                    .collect()
            })
            .unwrap_or_default();
        if !cookies.is_empty() {
            request = request.header("cookie", cookies.join("; "));
        }
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        if form.is_some() {
            request = request.header("content-type", "application/x-www-form-urlencoded");
        }
        let request =
            request.body(Full::new(Bytes::from(form.unwrap_or_default().to_owned()))).expect("request");
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().expect("address");
        let answer = send(address, request).await;
        self.store_cookies(&host, &answer);
        answer
    }

    fn store_cookies(&mut self, host: &str, answer: &Answer) {
        for value in answer.headers.get_all("set-cookie").iter().filter_map(|value| value.to_str().ok()) {
            let mut parts = value.split(';');
            let Some((name, cookie_value)) = parts.next().and_then(|pair| pair.split_once('=')) else {
                continue;
            };
            let mut path = "/".to_owned();
            let mut delete = cookie_value.is_empty();
            for attribute in parts {
                let (key, value) = attribute.trim().split_once('=').unwrap_or((attribute.trim(), ""));
                match key.to_ascii_lowercase().as_str() {
                    "path" => path = value.to_owned(),
                    "max-age" => delete |= value == "0",
                    "expires" => delete |= value.contains("1970"),
                    _ => {}
                }
            }
            let cookies = self.jar.entry(host.to_owned()).or_default();
            cookies
                .retain(|(existing, _, existing_path)| !(existing == name.trim() && *existing_path == path));
            if !delete {
                cookies.push((name.trim().to_owned(), cookie_value.trim().to_owned(), path));
            }
        }
    }

    /// Drops every cookie of `host`.
    fn forget(&mut self, host: &str) {
        self.jar.remove(host);
    }

    fn cookie(&self, host: &str, name: &str) -> Option<String> {
        self.jar
            .get(host)?
            .iter()
            .find(|(existing, _, _)| existing == name)
            .map(|(_, value, _)| value.clone())
    }
}

fn last_request(site: &harness::Upstream) -> Seen {
    site.requests().pop().expect("the site received a request")
}

#[tokio::test(flavor = "multi_thread")]
async fn login_through_a_real_provider_reaches_the_site_with_its_identity() {
    let setup = Setup::start("").await;
    setup.provider.next_user("bob").await;
    let mut browser = Browser::default();
    let (answer, history) = browser.open(&setup.site_url("/hello?x=1")).await;
    assert_eq!(answer.status, StatusCode::OK, "{history:#?}\n{}", answer.text());
    assert_eq!(answer.text(), "site saw /hello");
    assert!(
        history.iter().any(|url| url.starts_with(&setup.provider.issuer)),
        "went through the provider: {history:#?}"
    );
    assert!(history.iter().any(|url| url.contains("/.toolgate/callback?")), "{history:#?}");
    assert!(
        history.last().is_some_and(|url| url.ends_with("/hello?x=1")),
        "back where the user started: {history:#?}"
    );

    let seen = last_request(&setup.site);
    assert_eq!(seen.headers["x-forwarded-user"], "bob");
    assert_eq!(seen.headers["x-forwarded-email"], "bob@example.test");
    assert_eq!(seen.headers["x-forwarded-groups"], "finance,finance-approvers");
    assert!(seen.headers.get("cookie").is_none(), "gateway cookies never reach the site: {:?}", seen.headers);

    // The assertion verifies with the keys the gateway publishes, for this site only.
    let jwks = browser.open(&setup.site_url("/.toolgate/jwks.json")).await.0;
    let jwks: jsonwebtoken::jwk::JwkSet = serde_json::from_slice(&jwks.body).expect("jwks");
    let assertion = seen.headers["x-toolgate-assertion"].to_str().expect("ascii");
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwks.keys[0]).expect("key");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&["site0"]);
    validation.set_issuer(&[format!("http://localhost:{}", setup.port)]);
    let claims = jsonwebtoken::decode::<serde_json::Value>(assertion, &key, &validation)
        .expect("assertion verifies")
        .claims;
    assert_eq!(claims["sub"], "bob");
    assert_eq!(claims["groups"], serde_json::json!(["finance", "finance-approvers"]));

    // Spoofed identity headers and the site's own cookies: the first never arrive, the second do.
    let spoofs = [
        ("x-forwarded-user", "admin"),
        ("X_Forwarded_User", "admin"),
        ("x-forwarded-groups", "admins"),
        ("x-toolgate-assertion", "forged"),
        ("x_toolgate_assertion", "forged"),
    ];
    let session_cookie = browser.cookie("app.localhost", "toolgate").expect("session cookie");
    let url = url::Url::parse(&setup.site_url("/again")).expect("url");
    let cookie = format!("app=1; toolgate={session_cookie}");
    let mut extra: Vec<(&str, &str)> = spoofs.to_vec();
    extra.push(("cookie", &cookie));
    let answer = Browser::default().request(Method::GET, &url, &extra, None).await;
    assert_eq!(answer.status, StatusCode::OK);
    let seen = last_request(&setup.site);
    assert_eq!(seen.headers.get_all("x-forwarded-user").iter().collect::<Vec<_>>(), ["bob"]);
    assert_eq!(seen.headers["x-forwarded-groups"], "finance,finance-approvers");
    assert!(seen.headers.iter().all(|(name, _)| !name.as_str().contains('_')), "{:?}", seen.headers);
    assert_ne!(seen.headers["x-toolgate-assertion"], "forged");
    assert_eq!(seen.headers["cookie"], "app=1");

    // A return URL naming another port or scheme cannot redirect the ticket there: the handoff
    // always goes to the site's configured origin.
    for elsewhere in ["http://app.localhost:9/steal", "https://app.localhost/steal"] {
        let login =
            url::Url::parse(&format!("http://localhost:{}/.toolgate/login", setup.port)).expect("url");
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("return", elsewhere)
            .append_pair("bind", "x")
            .finish();
        let login = url::Url::parse(&format!("{login}?{query}")).expect("url");
        let answer = browser.request(Method::GET, &login, &[], None).await;
        let location = answer.header("location").unwrap_or_default();
        assert!(
            location.starts_with(&format!("http://app.localhost:{}/.toolgate/session?ticket=", setup.port)),
            "{elsewhere} → {location}"
        );
    }

    let whoami = browser.open(&setup.site_url("/.toolgate/whoami")).await.0;
    let whoami: serde_json::Value = serde_json::from_slice(&whoami.body).expect("json");
    assert_eq!((whoami["user"].as_str(), whoami["via"].as_str()), (Some("bob"), Some("session")));
    assert!(setup.metric("toolgate_sign_in_events_total{outcome=\"login\"} 1").await.is_some());
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_are_refreshed_before_expiry_and_a_failed_refresh_means_signing_in_again() {
    let mut setup = Setup::start("").await;
    setup.provider.control("/test/ttl", "{\"IdToken\": 4, \"AccessToken\": 4}").await;
    setup.provider.next_user("carol").await;
    let mut browser = Browser::default();
    assert_eq!(browser.open(&setup.site_url("/")).await.0.status, StatusCode::OK);

    // Half-way through the 4 s token the gateway refreshes, transparently.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (answer, history) = browser.open(&setup.site_url("/after-refresh")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(history.len(), 1, "no sign-in round trip: {history:#?}");
    assert_eq!(last_request(&setup.site).headers["x-forwarded-user"], "carol");
    let refreshed = setup.metric("toolgate_sign_in_events_total{outcome=\"refreshed\"}").await;
    assert!(refreshed.is_some_and(|line| !line.ends_with(" 0")), "the refresh counted");

    // With the provider gone, the next refresh fails: the session ends and the user is sent
    // back through sign-in (to a provider that is down), so nothing reaches the site.
    setup.provider.child.kill().await.expect("stop provider");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let requests_before = setup.site.requests().len();
    let url = url::Url::parse(&setup.site_url("/gone")).expect("url");
    let answer = browser.request(Method::GET, &url, &[], None).await;
    assert_eq!(answer.status, StatusCode::FOUND, "sent to sign in again");
    let login = url.join(answer.header("location").expect("location")).expect("login url");
    assert_eq!(login.path(), "/.toolgate/login");
    let answer = browser.request(Method::GET, &login, &[], None).await;
    assert_eq!(answer.status, StatusCode::FOUND);
    assert!(
        answer.header("location").is_some_and(|location| location.starts_with(&setup.provider.issuer)),
        "a fresh login at the provider, not a reuse of the ended session: {:?}",
        answer.header("location")
    );
    assert_eq!(setup.site.requests().len(), requests_before);
    assert!(setup.metric("toolgate_sign_in_events_total{outcome=\"refresh_failed\"} 1").await.is_some());
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_keys_rotated_at_the_provider_are_picked_up() {
    let setup = Setup::start("").await;
    setup.provider.next_user("alice").await;
    let mut first = Browser::default();
    assert_eq!(first.open(&setup.site_url("/")).await.0.status, StatusCode::OK);

    setup.provider.control("/test/rotate-keys", "").await;
    setup.provider.control("/test/drop-old-keys", "").await;
    // Past the refetch interval, a login signed with the new key succeeds.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    setup.provider.next_user("dave").await;
    let mut second = Browser::default();
    let (answer, history) = second.open(&setup.site_url("/rotated")).await;
    assert_eq!(answer.status, StatusCode::OK, "{history:#?}\n{}", answer.text());
    assert_eq!(last_request(&setup.site).headers["x-forwarded-user"], "dave");
    assert_eq!(last_request(&setup.site).headers["x-forwarded-groups"], "", "dave has no groups");
    // Sessions do not depend on the provider's keys.
    assert_eq!(first.open(&setup.site_url("/still")).await.0.status, StatusCode::OK);
    assert_eq!(last_request(&setup.site).headers["x-forwarded-user"], "alice");
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn site_access_rules_admit_only_their_groups_and_every_step_is_audited() {
    let setup = Setup::start("allow_groups = [\"finance\"]").await;
    setup.provider.next_user("dave").await;
    let mut dave = Browser::default();
    let (answer, _) = dave.open(&setup.site_url("/books")).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert!(answer.text().contains("not allowed to open"), "{}", answer.text());
    assert!(setup.site.requests().is_empty());

    setup.provider.next_user("bob").await;
    let mut bob = Browser::default();
    let (answer, _) = bob.open(&setup.site_url("/books")).await;
    assert_eq!(answer.status, StatusCode::OK);

    // Bob is an auditor (finance-approvers); his gateway-host session reads the log.
    let records_url = format!("http://localhost:{}/.toolgate/audit/records", setup.port);
    let (answer, _) = bob.open(&records_url).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let page: serde_json::Value = serde_json::from_slice(&answer.body).expect("json");
    let records = page["records"].as_array().expect("records");
    let kinds: Vec<(&str, &str)> = records
        .iter()
        .map(|record| {
            let event = &record["event"];
            (event["toolgate.event.kind"].as_str().unwrap_or(""), event["user.id"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(kinds, [("login", "dave"), ("access_denied", "dave"), ("login", "bob")], "{page:#}");
    assert!(
        records[0]["event"]["session.id"].as_str().is_some_and(|digest| digest.len() == 64),
        "a digest, not the id"
    );
    assert_eq!(records[1]["event"]["toolgate.site"], "site0");

    let (filtered, _) = bob.open(&format!("{records_url}?kind=login&user=bob")).await;
    let filtered: serde_json::Value = serde_json::from_slice(&filtered.body).expect("json");
    assert_eq!(filtered["records"].as_array().map(Vec::len), Some(1));
    let (first_page, _) = bob.open(&format!("{records_url}?limit=2")).await;
    let first_page: serde_json::Value = serde_json::from_slice(&first_page.body).expect("json");
    assert_eq!(first_page["next"], 2, "paginated by sequence number");

    // Dave is not an auditor.
    let (answer, _) = dave.open(&records_url).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    setup.gateway.stop().await;
}
