//! The typed `[dashboard]` section (its own host and the groups of its three roles) and where
//! the policy is managed (`[policy] managed_by`).

use super::{Problem, raw};
use std::path::PathBuf;
use toml::Spanned;

/// The policy administration dashboard's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DashboardConfig {
    /// The dashboard's own host (lower case, no port), never a site's or the gateway's.
    pub host: String,
    /// Groups whose members administer: every page, policy edits, inventory rules, approvals.
    pub admin_groups: Vec<String>,
    /// Groups whose members read everything an admin sees but change nothing.
    pub auditor_groups: Vec<String>,
    /// Groups whose members see the approvals queue (and decide the calls their groups may).
    pub approver_groups: Vec<String>,
}

impl super::Checker<'_> {
    pub(super) fn dashboard(&mut self, raw: &raw::RawDashboard, sso: bool) -> Option<DashboardConfig> {
        let host = self.check(&raw.host, "dashboard.host", |text| {
            let host = text.trim().to_ascii_lowercase();
            let valid = !host.is_empty()
                && host.len() <= 253
                && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            if valid {
                Ok(host)
            } else {
                Err("must be a host name (letters, digits, '-' and '.'), without a port".to_owned())
            }
        });
        if raw.admin_groups.get_ref().is_empty() {
            self.problem(
                &raw.admin_groups,
                "dashboard.admin_groups",
                "name at least one group of administrators",
            );
        }
        if !sso {
            self.problems.push(Problem {
                line: None,
                key: "dashboard".into(),
                message: "the dashboard needs single sign-on: it cannot be combined with `insecure_no_sso`"
                    .into(),
            });
        }
        let names = |groups: &[Spanned<String>]| groups.iter().map(|group| group.get_ref().clone()).collect();
        Some(DashboardConfig {
            host: host?,
            admin_groups: names(raw.admin_groups.get_ref()),
            auditor_groups: names(&raw.auditor_groups),
            approver_groups: names(&raw.approver_groups),
        })
    }

    /// The dashboard's host must be neither the gateway's (sign-in) nor a site's: a script a
    /// site serves must never share the dashboard's origin.
    pub(super) fn dashboard_host_is_its_own(
        &mut self,
        config: &DashboardConfig,
        raw: &raw::RawDashboard,
        public_url: Option<&http::Uri>,
        sites: &[super::Site],
    ) {
        let gateway_host = public_url.and_then(|url| url.host()).map(str::to_ascii_lowercase);
        if sites.iter().any(|site| site.host == config.host) || gateway_host.as_deref() == Some(&config.host)
        {
            self.problem(
                &raw.host,
                "dashboard.host",
                "must be a host of its own: not the gateway's (public_url) and not a site's, so no \
                 site's scripts share its origin",
            );
        }
    }

    /// The policy file and whether the dashboard manages the policy (then the file, if any, only
    /// seeds the first stored version).
    pub(super) fn policy_source(&mut self, raw: Option<&raw::RawPolicy>) -> Option<(Option<PathBuf>, bool)> {
        let Some(raw) = raw else { return Some((None, false)) };
        let file = match &raw.file {
            Some(file) => self.check(file, "policy.file", super::values::absolute_or_relative_path).map(Some),
            None => Some(None),
        };
        let in_store = match &raw.managed_by {
            None => Some(false),
            Some(value) => self.check(value, "policy.managed_by", |text| match text {
                "file" => Ok(false),
                "dashboard" => Ok(true),
                _ => Err("must be \"file\" or \"dashboard\"".to_owned()),
            }),
        };
        Some((file?, in_store?))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    const BASE: &str = r#"
public_url = "https://gateway.example"
[server]
listen = "127.0.0.1:8080"
admin_listen = "127.0.0.1:9090"
[sso]
issuer = "https://idp.example"
client_id = "toolgate"
client_secret = "env:SECRET"
[sites.tasks]
host = "tasks.example"
upstream = "http://127.0.0.1:3000"
"#;

    fn problems(extra: &str) -> String {
        match Config::parse(&format!("{BASE}{extra}"), "t.toml") {
            Ok(_) => String::new(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn a_dashboard_gets_its_host_and_role_groups() {
        let text = format!(
            "{BASE}[dashboard]\nhost = \"Admin.Example\"\nadmin_groups = [\"admins\"]\nauditor_groups = [\"audit\"]\n\
             [policy]\nmanaged_by = \"dashboard\"\n"
        );
        let config = Config::parse(&text, "t.toml").expect("valid");
        let dashboard = config.dashboard.expect("dashboard");
        assert_eq!(dashboard.host, "admin.example");
        assert_eq!(
            (dashboard.admin_groups, dashboard.auditor_groups),
            (vec!["admins".into()], vec!["audit".into()])
        );
        assert!(dashboard.approver_groups.is_empty());
        assert!(config.policy_in_store && config.policy_file.is_none());
    }

    #[test]
    fn the_dashboard_host_is_never_shared_and_needs_admins() {
        let shared = problems("[dashboard]\nhost = \"tasks.example\"\nadmin_groups = [\"a\"]\n");
        assert!(shared.contains("dashboard.host") && shared.contains("host of its own"), "{shared}");
        let gateway = problems("[dashboard]\nhost = \"gateway.example\"\nadmin_groups = [\"a\"]\n");
        assert!(gateway.contains("dashboard.host"), "{gateway}");
        let nobody = problems("[dashboard]\nhost = \"admin.example\"\nadmin_groups = []\n");
        assert!(nobody.contains("dashboard.admin_groups"), "{nobody}");
        let port = problems("[dashboard]\nhost = \"admin.example:8443\"\nadmin_groups = [\"a\"]\n");
        assert!(port.contains("without a port"), "{port}");
    }

    #[test]
    fn policy_management_is_file_or_dashboard() {
        assert!(problems("[policy]\nmanaged_by = \"git\"\n").contains("policy.managed_by"));
        let config = Config::parse(BASE, "t.toml").expect("valid");
        assert!(!config.policy_in_store, "files by default");
    }

    #[test]
    fn no_dashboard_without_single_sign_on() {
        let text = "public_url = \"https://g.example\"\n[server]\nlisten = \"127.0.0.1:1\"\nadmin_listen = \"127.0.0.1:2\"\n\
                    insecure_no_sso = true\n[dashboard]\nhost = \"admin.example\"\nadmin_groups = [\"a\"]\n";
        let error = Config::parse(text, "t.toml").expect_err("refused").to_string();
        assert!(error.contains("needs single sign-on"), "{error}");
    }
}
