//! `toolgate check-site <id> --config <file>`: asks a site's upstream what the gateway would ask
//! it, with the configuration's own upstream client (TLS settings included) and forwarding
//! headers, and reports what gets in the way of running the app behind Toolgate:
//!
//! - a redirect to the upstream's own address (the gateway rewrites `Location`, but the app's
//!   links carry the same address);
//! - a cookie scoped to the upstream's host;
//! - a CSP `sandbox` without `allow-same-origin` (no runtime, no page tools there);
//! - a refusal of the `Host` the gateway sends (a host allow-list);
//! - a form post refused for its foreign `Origin` (a CSRF origin check that does not know the
//!   public origin), told apart by posting the page's first POST form from both origins.
//!
//! It follows redirects on the site (at most 5) from the start page (`--path`, `/` by default),
//! then posts the first POST form it finds (its hidden fields and the cookies the site set, no
//! other value: a login fails, which is fine). Exit 0: nothing found; 1: problems found; 2: the
//! check could not run. Nothing here logs a cookie or a field value.

use crate::config::{Config, Site};
use crate::http::body::{self, ProxyBody};
use crate::http::client::{self, ClientInfo};
use crate::net::upstream::UpstreamClients;
use crate::proxy::forwarding;
use anyhow::Context as _;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Limited};
use std::path::PathBuf;
use std::process::ExitCode;

/// Redirects followed on the site.
const MAX_REDIRECTS: usize = 5;
/// Most of a page read.
const MAX_PAGE: usize = 1024 * 1024;

/// `toolgate check-site`'s arguments.
#[derive(Debug, clap::Args)]
pub struct CheckSiteArgs {
    /// The site's id (`[sites.<id>]`).
    site: String,
    /// The TOML configuration file.
    #[arg(long, short)]
    config: PathBuf,
    /// The page to start from.
    #[arg(long, default_value = "/")]
    path: String,
}

/// One problem found.
struct Finding {
    what: String,
    fix: &'static str,
}

/// Runs the check; prints what it did and found.
pub fn execute(args: &CheckSiteArgs) -> ExitCode {
    let outcome = (|| {
        let config = Config::load(&args.config)?;
        let site = config
            .sites
            .iter()
            .find(|site| site.id.as_str() == args.site)
            .with_context(|| format!("no site `{}` in {}", args.site, args.config.display()))?
            .clone();
        if !args.path.starts_with('/') {
            anyhow::bail!("--path must start with /");
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(check(&config, &site, &args.path))
    })();
    match outcome {
        Ok(findings) if findings.is_empty() => {
            println!("no problems found");
            ExitCode::SUCCESS
        }
        Ok(findings) => {
            println!("problems:");
            for finding in &findings {
                println!("- {}\n  fix: {}", finding.what, finding.fix);
            }
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("toolgate check-site: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// The browser's view of the site: its origin as users open it.
struct Public {
    scheme: &'static str,
    /// Host and port as the browser sends them in `Host`.
    host: String,
}

impl Public {
    fn of(config: &Config, site: &Site) -> Self {
        let scheme = if config.public_url.scheme_str() == Some("https") { "https" } else { "http" };
        let host = client::host_with_port(&site.host, config.public_url.port_u16(), scheme == "https");
        Self { scheme, host }
    }

    fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.host)
    }
}

async fn check(config: &Config, site: &Site, start: &str) -> anyhow::Result<Vec<Finding>> {
    let clients = UpstreamClients::new(config).context("the upstream client cannot be built")?;
    let public = Public::of(config, site);
    let upstream_origin = format!("{}://{}", site.upstream.scheme, site.upstream.authority);
    println!("check-site {} (upstream {upstream_origin}, public {})", site.id, public.origin());
    let mut findings = Vec::new();
    let mut cookies: Vec<String> = Vec::new();
    let mut path = start.to_owned();
    let mut page = None;
    for hop in 0..=MAX_REDIRECTS {
        let request = upstream_request(site, &public, Method::GET, &path, &cookies, Bytes::new());
        let response = clients.send(&site.id, request).await.map_err(|error| {
            anyhow::anyhow!("GET {path}: the upstream did not answer ({})", error.reason())
        })?;
        let status = response.status();
        let location = header_text(response.headers(), header::LOCATION);
        println!(
            "GET {path} → {}{}",
            status.as_u16(),
            location.as_deref().map(|to| format!(" {to}")).unwrap_or_default()
        );
        inspect(site, &upstream_origin, &path, &response, &mut findings, &mut cookies);
        if hop == 0 && matches!(status, StatusCode::BAD_REQUEST | StatusCode::MISDIRECTED_REQUEST) {
            findings.push(Finding {
                what: format!(
                    "the app refuses the Host the gateway sends ({}): a host allow-list",
                    sent_host(site, &public)
                ),
                fix: "add that host to the app's allowed hosts, or change `preserve_host` (docs/apps.md)",
            });
        }
        match (status.is_redirection(), location) {
            (true, Some(location)) => match on_site(&upstream_origin, &public, &path, &location) {
                Some(next) => path = next,
                None => {
                    println!("  (leaves the site; not followed)");
                    break;
                }
            },
            _ => {
                page = Some((path.clone(), read_page(response).await));
                break;
            }
        }
    }
    if let Some((page_path, Some(html))) = page {
        post_first_form(
            &clients,
            site,
            &public,
            &upstream_origin,
            &page_path,
            &html,
            &cookies,
            &mut findings,
        )
        .await;
    }
    Ok(findings)
}

/// Looks at one response's headers for the patterns that get in the way.
fn inspect(
    site: &Site,
    upstream_origin: &str,
    path: &str,
    response: &Response<ProxyBody>,
    findings: &mut Vec<Finding>,
    cookies: &mut Vec<String>,
) {
    let headers = response.headers();
    if let Some(location) = header_text(headers, header::LOCATION)
        && names_upstream(site, upstream_origin, &location)
    {
        findings.push(Finding {
            what: format!("GET {path} redirects to the upstream's own address: {location}"),
            fix: "tell the app its public URL (the gateway rewrites Location headers, but links the app writes into \
                  pages keep this address): trusted origins, X-Forwarded-Host, or `preserve_host` (docs/apps.md)",
        });
    }
    let upstream_host = site.upstream.authority.host().to_ascii_lowercase();
    for value in headers.get_all(header::SET_COOKIE).iter().filter_map(|value| value.to_str().ok()) {
        let mut parts = value.split(';');
        let pair = parts.next().unwrap_or_default().trim();
        if let Some((name, value)) = pair.split_once('=')
            && !cookies.iter().any(|known| known.split('=').next() == Some(name))
        {
            cookies.push(format!("{name}={value}"));
        }
        let domain =
            parts.filter_map(|attribute| attribute.trim().split_once('=')).find_map(|(key, value)| {
                key.trim()
                    .eq_ignore_ascii_case("domain")
                    .then(|| value.trim().trim_start_matches('.').to_ascii_lowercase())
            });
        if let Some(domain) = domain
            && domain == upstream_host
        {
            let name = pair.split('=').next().unwrap_or_default();
            findings.push(Finding {
                what: format!("the cookie `{name}` is scoped to the upstream's host ({domain})"),
                fix: "drop the cookie's Domain, or set it to the public host (the gateway rewrites it, but the app \
                      should not name its own address)",
            });
        }
    }
    let policies: Vec<injector::CspHeader> = headers
        .get_all(header::CONTENT_SECURITY_POLICY)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(|value| injector::CspHeader { report_only: false, value: value.to_owned() })
        .collect();
    if injector::sandboxes_origin(&policies) {
        findings.push(Finding {
            what: format!("GET {path} is sandboxed by its CSP (`sandbox` without `allow-same-origin`)"),
            fix: "nothing to change for browsing; such pages get no runtime and no agent tools (docs/apps.md, Jupyter)",
        });
    }
}

/// Posts the page's first POST form twice, from the public origin and from the app's own, and
/// reports an Origin refusal when only the public origin is refused.
#[allow(clippy::too_many_arguments)]
async fn post_first_form(
    clients: &UpstreamClients,
    site: &Site,
    public: &Public,
    upstream_origin: &str,
    page_path: &str,
    html: &Bytes,
    cookies: &[String],
    findings: &mut Vec<Finding>,
) {
    let Some(form) = page_forms(html).into_iter().find(|form| form.method == "post") else {
        println!("  (no POST form on {page_path}: the Origin check was not tried)");
        return;
    };
    let action = injector::resolve_action_path(page_path, form.action.as_deref());
    let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(&form.hidden).finish();
    let mut refused = Vec::new();
    for origin in [public.origin(), upstream_origin.to_owned()] {
        let mut request =
            upstream_request(site, public, Method::POST, &action, cookies, Bytes::from(body.clone()));
        let headers = request.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
        if let Ok(value) = HeaderValue::from_str(&origin) {
            headers.insert(header::ORIGIN, value);
        }
        match clients.send(&site.id, request).await {
            Ok(response) => {
                println!("POST {action} (Origin {origin}) → {}", response.status().as_u16());
                refused.push(matches!(
                    response.status(),
                    StatusCode::FORBIDDEN | StatusCode::UNPROCESSABLE_ENTITY
                ));
            }
            Err(error) => {
                println!("POST {action} (Origin {origin}): no answer ({})", error.reason());
                return;
            }
        }
    }
    match refused[..] {
        [true, false] => findings.push(Finding {
            what: format!("a form post to {action} is refused from the public origin {} but not from the app's own", public.origin()),
            fix: "make the app trust the public origin: Django CSRF_TRUSTED_ORIGINS (or USE_X_FORWARDED_HOST), Rails and \
                  Spring read X-Forwarded-Host (docs/apps.md)",
        }),
        [true, true] => println!("  (refused from both origins: a CSRF token check; the Origin check could not be told apart)"),
        _ => {}
    }
}

/// The forms of a page, as the answer probe reads them.
fn page_forms(html: &Bytes) -> Vec<injector::FormSeen> {
    let probe = injector::AnswerProbe::new(Vec::new());
    let settings = injector::PageSettings {
        script_src: String::new(),
        integrity: String::new(),
        nonce: String::new(),
        script_url: String::new(),
        declared_charset: None,
        memory_limit: 4 * MAX_PAGE,
        inject: false,
    };
    let mut rewriter = injector::PageRewriter::new(settings).with_answer_probe(probe.clone());
    let mut sink = Vec::new();
    if rewriter.write(html, &mut sink).is_err() || rewriter.end(&mut sink).is_err() {
        return Vec::new();
    }
    probe.answer().forms
}

/// The request the gateway would send: the upstream's URI, its `Host` or the public one with
/// `preserve_host`, the forwarding headers of a browser on loopback, and the cookies so far.
fn upstream_request(
    site: &Site,
    public: &Public,
    method: Method,
    path: &str,
    cookies: &[String],
    body: Bytes,
) -> Request<ProxyBody> {
    let uri = format!("{}://{}{path}", site.upstream.scheme, site.upstream.authority);
    let mut request = Request::new(body::full(body));
    *request.method_mut() = method;
    *request.uri_mut() = uri.parse().unwrap_or_default();
    let headers = request.headers_mut();
    if site.preserve_host
        && let Ok(host) = HeaderValue::from_str(&public.host)
    {
        headers.insert(header::HOST, host);
    }
    headers.insert(header::ACCEPT, HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"));
    let client = ClientInfo { peer: std::net::IpAddr::from([127, 0, 0, 1]), tls: public.scheme == "https" };
    forwarding::set_forwarded(headers, client, false, &public.host);
    if !cookies.is_empty()
        && let Ok(value) = HeaderValue::from_str(&cookies.join("; "))
    {
        headers.insert(header::COOKIE, value);
    }
    request
}

/// The Host the gateway sends for this site.
fn sent_host(site: &Site, public: &Public) -> String {
    if site.preserve_host { public.host.clone() } else { site.upstream.authority.to_string() }
}

/// Whether `location` is an absolute URL naming the upstream's own authority.
fn names_upstream(site: &Site, upstream_origin: &str, location: &str) -> bool {
    let authority = site.upstream.authority.as_str().to_ascii_lowercase();
    let lower = location.trim().to_ascii_lowercase();
    lower.starts_with(&format!("{}/", upstream_origin.to_ascii_lowercase()))
        || lower == upstream_origin.to_ascii_lowercase()
        || lower.starts_with(&format!("//{authority}/"))
        || lower == format!("//{authority}")
}

/// The path to follow for a redirect that stays on the site (relative, or naming the upstream or
/// the public origin); `None` when it leaves (a sign-in provider, another app).
fn on_site(upstream_origin: &str, public: &Public, current: &str, location: &str) -> Option<String> {
    let base = url::Url::parse(upstream_origin).ok()?.join(current).ok()?;
    let target = base.join(location.trim()).ok()?;
    let public_origin = url::Url::parse(&public.origin()).ok()?;
    let stays = target.origin() == base.origin() || target.origin() == public_origin.origin();
    stays.then(|| match target.query() {
        Some(query) => format!("{}?{query}", target.path()),
        None => target.path().to_owned(),
    })
}

async fn read_page(response: Response<ProxyBody>) -> Option<Bytes> {
    let is_html = header_text(response.headers(), header::CONTENT_TYPE)
        .is_some_and(|value| value.to_ascii_lowercase().contains("html"));
    if !is_html {
        return None;
    }
    Limited::new(response.into_body(), MAX_PAGE).collect().await.ok().map(|collected| collected.to_bytes())
}

fn header_text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_owned)
}
