//! `toolgate check-config`: `ok` for good files (every sample configuration in deploy/), and every problem
//! with its line and key for bad ones, with a non-zero exit.

use std::process::Command;

fn check_config(path: &std::path::Path) -> (bool, String, String) {
    check_config_with(path, &[], &[])
}

fn check_config_with(path: &std::path::Path, flags: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("check-config")
        .args(flags)
        .arg(path)
        .envs(env.iter().copied())
        .output()
        .expect("run toolgate");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_sample_config_in_deploy_passes() {
    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let mut checked = 0;
    for entry in std::fs::read_dir(&deploy).expect("deploy/ exists") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        // Gateway configurations are `toolgate*.toml`; the policies they name are checked
        // through them.
        if name.starts_with("toolgate") && name.ends_with(".toml") {
            // The samples name secrets that live on the target machine, not here.
            let (ok, stdout, stderr) = check_config_with(&path, &["--skip-secrets"], &[]);
            assert!(ok && stdout.trim() == "ok", "{}: {stdout}{stderr}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 1, "deploy/ must hold at least one sample config");
}

#[test]
fn bad_config_lists_every_problem_and_fails() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("bad.toml");
    std::fs::write(
        &path,
        "public_url = \"gateway\"\n[server]\nlisten = \"nowhere\"\nadmin_listen = \"127.0.0.1:9090\"\ninsecure_no_sso = true\n\
         [timeouts]\nbody_idle = \"forever\"\n[sites.app]\nhost = \"app.example\"\nupstream = \"http://10.0.0.1:80/app\"\n",
    )
    .expect("write");
    let (ok, stdout, stderr) = check_config(&path);
    assert!(!ok, "{stdout}");
    let expected = [
        "bad.toml: line 1: public_url: must be an absolute http:// or https:// URL",
        "bad.toml: line 3: server.listen: `nowhere` is not an address",
        "bad.toml: line 7: timeouts.body_idle: `forever` is not a duration",
        "bad.toml: line 10: sites.app.upstream: must be an origin without path or query",
    ];
    for line in expected {
        assert!(stderr.contains(line), "missing {line:?} in:\n{stderr}");
    }
    assert_eq!(stderr.lines().count(), 4, "{stderr}");
}

#[test]
fn a_form_rule_without_a_path_is_a_warning_not_a_failure() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("forms.toml");
    let base = "public_url = \"https://g.example\"\n[server]\nlisten = \"127.0.0.1:1\"\nadmin_listen = \"127.0.0.1:2\"\n\
                insecure_no_sso = true\n[sites.app]\nhost = \"app.example\"\nupstream = \"http://10.0.0.1\"\n\
                [[sites.app.forms.rule]]\nselector = \"form#a\"\nname = \"everywhere\"\ndescription = \"d\"\n\
                [[sites.app.forms.rule]]\nselector = \"form#b\"\nname = \"scoped\"\ndescription = \"d\"\npath = \"/b/*\"\n";
    std::fs::write(&path, base).expect("write");
    let (ok, stdout, stderr) = check_config(&path);
    assert!(ok && stdout.trim() == "ok", "{stdout}{stderr}");
    assert!(stderr.contains("warning: sites.app: the form rule \"everywhere\" has no `path`"), "{stderr}");
    assert!(!stderr.contains("\"scoped\""), "a scoped rule is not warned about: {stderr}");
}

#[test]
fn unknown_key_is_reported_with_line_and_key() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("typo.toml");
    std::fs::write(&path, "public_url = \"https://g.example\"\n[server]\nlisten = \"127.0.0.1:1\"\nadmin_listen = \"127.0.0.1:2\"\ninsecure_no_sso = true\nlog_fromat = \"json\"\n").expect("write");
    let (ok, _, stderr) = check_config(&path);
    assert!(!ok);
    assert!(stderr.contains("line 6: server.log_fromat: unknown field `log_fromat`"), "{stderr}");
}

#[test]
fn missing_tls_files_are_reported() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("tls.toml");
    std::fs::write(
        &path,
        "public_url = \"https://g.example\"\n[server]\nlisten = \"127.0.0.1:1\"\nadmin_listen = \"127.0.0.1:2\"\ninsecure_no_sso = true\n\
         [server.tls]\ncert = \"/nonexistent/cert.pem\"\nkey = \"/nonexistent/key.pem\"\n[sites.a]\nhost = \"a.example\"\nupstream = \"http://127.0.0.1:3\"\n",
    )
    .expect("write");
    let (ok, _, stderr) = check_config(&path);
    assert!(!ok);
    assert!(
        stderr.contains("server.tls.cert: cannot load certificates from /nonexistent/cert.pem"),
        "{stderr}"
    );
}

/// check-config reads every secret the file names, as `run` will: an unset variable, a missing
/// file and a malformed key are each reported (by reference, never by value), and good ones pass.
#[test]
fn check_config_reads_and_parses_every_secret() {
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("toolgate.toml");
    std::fs::write(directory.path().join("short.key"), "c2hvcnQ=").expect("key");
    std::fs::write(
        &path,
        "public_url = \"https://gateway.example\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
         [sso]\nissuer = \"https://sso.example\"\nclient_id = \"toolgate\"\nclient_secret = \"env:CHECK_CONFIG_TEST_SECRET\"\n\
         session_keys = [\"file:short.key\"]\nassertion_keys = [\"file:missing.pem\"]\n\
         [audit]\nkey = \"env:CHECK_CONFIG_TEST_AUDIT_KEY\"\n\
         [sites.app]\nhost = \"app.example\"\nupstream = \"http://127.0.0.1:1\"\n",
    )
    .expect("write");
    let (ok, stdout, stderr) = check_config_with(&path, &[], &[]);
    assert!(!ok, "{stdout}");
    for needle in [
        "sso.client_secret: environment variable CHECK_CONFIG_TEST_SECRET is not set",
        "sso.session_keys",
        "short.key",
        "sso.assertion_keys",
        "missing.pem",
        "audit.key: environment variable CHECK_CONFIG_TEST_AUDIT_KEY is not set",
    ] {
        assert!(stderr.contains(needle), "missing {needle:?} in:\n{stderr}");
    }
    assert!(!stderr.contains("c2hvcnQ"), "never a secret's value: {stderr}");
    let (ok, stdout, _) = check_config_with(&path, &["--skip-secrets"], &[]);
    assert!(ok && stdout.trim() == "ok", "{stdout}");

    let good_key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    std::fs::write(directory.path().join("short.key"), good_key).expect("key");
    let fixed = std::fs::read_to_string(&path)
        .expect("read")
        .replace("assertion_keys = [\"file:missing.pem\"]\n", "");
    std::fs::write(&path, fixed).expect("write");
    let env = [
        ("CHECK_CONFIG_TEST_SECRET", "s3cret"),
        ("CHECK_CONFIG_TEST_AUDIT_KEY", "an audit key of some length"),
    ];
    let (ok, stdout, stderr) = check_config_with(&path, &[], &env);
    assert!(ok && stdout.trim() == "ok", "{stdout}{stderr}");
}
