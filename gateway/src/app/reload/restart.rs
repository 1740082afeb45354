//! Which settings a running gateway cannot take over from a reloaded file. Their new values are
//! replaced by the running ones (and named, so the operator reads "restart needed for X"):
//! listeners and their certificate files, the store, sign-in, the audit key, where the policy
//! comes from, logging and the dashboard. Everything else takes effect for new requests.

use crate::config::Config;

/// Puts the running value of every restart-only setting into `next`; returns the names of the
/// settings whose value in the file differed.
pub fn keep_running_values(running: &Config, next: &mut Config) -> Vec<&'static str> {
    let mut kept = Vec::new();
    let mut keep = |name: &'static str, differs: bool| {
        if differs {
            kept.push(name);
        }
        differs
    };
    if keep("public_url", running.public_url != next.public_url) {
        next.public_url = running.public_url.clone();
    }
    if keep("server.listen", running.server.listen != next.server.listen) {
        next.server.listen = running.server.listen;
    }
    if keep("server.admin_listen", running.server.admin_listen != next.server.admin_listen) {
        next.server.admin_listen = running.server.admin_listen;
    }
    if keep("server.log_format", running.server.log_format != next.server.log_format) {
        next.server.log_format = running.server.log_format;
    }
    match (&running.server.tls, &mut next.server.tls) {
        (Some(old), Some(new)) => {
            // The files' contents reload on their own; which files, and the versions offered,
            // are fixed when the listener starts. HSTS is read per response and does reload.
            if keep("server.tls.cert", old.cert != new.cert || old.key != new.key) {
                (new.cert, new.key) = (old.cert.clone(), old.key.clone());
            }
            if keep("server.tls.min_version", old.min_version != new.min_version) {
                new.min_version = old.min_version;
            }
        }
        (None, None) => {}
        (_, new) => {
            keep("server.tls", true);
            *new = running.server.tls.clone();
        }
    }
    if keep("store", running.store != next.store) {
        next.store = running.store.clone();
    }
    if keep("sso", running.sso != next.sso) {
        next.sso = running.sso.clone();
    }
    if keep("audit.key", running.audit.key != next.audit.key) {
        next.audit.key = running.audit.key.clone();
    }
    let policy_source = (&running.policy_file, running.policy_in_store);
    if keep("policy.file", policy_source != (&next.policy_file, next.policy_in_store)) {
        (next.policy_file, next.policy_in_store) = (running.policy_file.clone(), running.policy_in_store);
    }
    if keep("dashboard", running.dashboard != next.dashboard) {
        next.dashboard = running.dashboard.clone();
    }
    next.embedded_policy = running.embedded_policy;
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str, upstream_port: u16) -> Config {
        let text = format!(
            "public_url = \"http://g.test\"\n[server]\nlisten = \"127.0.0.1:8080\"\nadmin_listen = \"127.0.0.1:9090\"\n\
             insecure_no_sso = true\n{extra}\n[store]\npath = \"data\"\n\
             [sites.tasks]\nhost = \"tasks.test\"\nupstream = \"http://127.0.0.1:{upstream_port}\"\n"
        );
        Config::parse(&text, "test.toml").expect("config")
    }

    #[test]
    fn restart_only_settings_keep_their_running_values_and_are_named() {
        let running = config("", 1);
        let mut next = config("", 2);
        next.server.listen = "127.0.0.1:8081".parse().expect("address");
        next.store = crate::config::StoreLocation::Memory;
        let kept = keep_running_values(&running, &mut next);
        assert_eq!(kept, ["server.listen", "store"]);
        assert_eq!(next.server.listen, running.server.listen, "the running listener stays");
        assert_eq!(next.store, running.store);
        assert_eq!(next.sites[0].upstream.authority.port_u16(), Some(2), "sites take the new value");
    }

    #[test]
    fn an_unchanged_file_needs_no_restart() {
        let running = config("[timeouts]\nbody_idle = \"5s\"", 1);
        let mut next = config("[timeouts]\nbody_idle = \"7s\"", 1);
        assert!(keep_running_values(&running, &mut next).is_empty());
        assert_eq!(next.timeouts.body_idle.as_secs(), 7, "timeouts reload");
    }

    #[test]
    fn tls_on_or_off_and_certificate_paths_need_a_restart_but_hsts_does_not() {
        let tls =
            |cert: &str, hsts: &str| format!("[server.tls]\ncert = \"{cert}\"\nkey = \"key.pem\"\n{hsts}");
        let running = config(&tls("cert.pem", ""), 1);
        let mut next = config(&tls("other.pem", "hsts_max_age = \"365d\""), 1);
        assert_eq!(keep_running_values(&running, &mut next), ["server.tls.cert"]);
        let next_tls = next.server.tls.as_ref().expect("tls");
        assert_eq!(next_tls.cert, std::path::PathBuf::from("cert.pem"));
        assert_eq!(next_tls.hsts.as_ref().map(|value| value.to_str().ok()), Some(Some("max-age=31536000")));

        let mut plain = config("", 1);
        assert_eq!(keep_running_values(&running, &mut plain), ["server.tls"]);
        assert!(plain.server.tls.is_some(), "the running listener keeps TLS");
    }
}
