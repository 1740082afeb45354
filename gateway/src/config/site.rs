//! The `[sites.<id>]` tables: one internal web site each, checked and converted (host, upstream,
//! who may open it, content capture, form rules and their scopes, upstream TLS).

use super::raw::RawConfig;
use super::{Problem, SiteId, UpstreamTls, forms, values};
use http::uri::{Authority, Scheme};
use std::sync::Arc;
use std::time::Duration;

/// One internal web site.
#[derive(Debug, Clone)]
pub struct Site {
    /// Short stable identifier (`tasks`), used in policy, metrics and logs.
    pub id: SiteId,
    /// The host name users open, lower-case, without port.
    pub host: String,
    /// Where requests go.
    pub upstream: Upstream,
    /// Send the user's `Host` to the upstream instead of the upstream's own authority.
    pub preserve_host: bool,
    /// Groups allowed to open the site at all; `None` means every signed-in user.
    pub allow_groups: Option<Vec<String>>,
    /// How long the texts of this site's audit records are kept; `None`: digests only.
    pub capture_content: Option<Duration>,
    /// Whether pages of this site may offer tools and contexts to agents at all.
    pub page_tools: bool,
    /// The site's legacy-form rules, compiled.
    pub forms: Arc<injector::FormRules>,
    /// For each form rule (same order): its tool name and the pages it applies to.
    pub form_scopes: Vec<forms::FormScope>,
    /// TLS to the upstream (private CA, client certificate); `None`: system roots.
    pub tls: Option<UpstreamTls>,
}

impl Site {
    /// The error selectors of the form rules that apply on the page at `path` (for reading the
    /// site's answer to a submission there).
    pub fn error_selectors(&self, path: &str) -> Vec<String> {
        self.form_scopes
            .iter()
            .filter(|scope| scope.applies_to(path))
            .filter_map(|scope| scope.error_selector.clone())
            .collect()
    }
}

/// An upstream origin: scheme and authority, no path.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// Host and port.
    pub authority: Authority,
}

impl super::Checker<'_> {
    /// The `[sites.<id>]` tables, each checked whole; every problem is recorded.
    pub(super) fn sites(&mut self, raw: &RawConfig) -> Vec<Site> {
        let mut sites: Vec<Site> = Vec::new();
        for (id, site) in &raw.sites {
            let key = format!("sites.{}", id.get_ref());
            if let Err(message) = values::site_id(id.get_ref()) {
                self.problem(id, &key, &message);
            }
            let host = self.check(&site.host, &format!("{key}.host"), values::host_name);
            let upstream = self.check(&site.upstream, &format!("{key}.upstream"), values::upstream);
            if let Some(host) = &host
                && sites.iter().any(|other| &other.host == host)
            {
                self.problem(&site.host, &format!("{key}.host"), "another site already uses this host");
            }
            let allow_groups = site
                .allow_groups
                .as_ref()
                .map(|groups| groups.iter().map(|group| group.get_ref().clone()).collect::<Vec<_>>());
            let capture_content = match &site.capture_content {
                None => Some(None),
                Some(value) => {
                    self.check(value, &format!("{key}.capture_content"), values::duration).map(Some)
                }
            };
            let forms = self.forms(&key, site.forms.as_ref());
            let tls = self.site_tls(&key, site.tls.as_ref());
            if let (
                Some(host),
                Some(upstream),
                Some(capture_content),
                Some((forms, form_scopes)),
                Some(tls),
            ) = (host, upstream, capture_content, forms, tls)
            {
                sites.push(Site {
                    id: SiteId::new(id.get_ref().clone()),
                    host,
                    upstream,
                    preserve_host: site.preserve_host,
                    allow_groups,
                    capture_content,
                    page_tools: site.page_tools,
                    forms,
                    form_scopes,
                    tls,
                });
            }
        }
        if raw.sites.is_empty() {
            self.problems.push(Problem {
                line: None,
                key: "sites".into(),
                message: "no site is configured; add at least one [sites.<id>] table".into(),
            });
        }
        sites
    }
}
