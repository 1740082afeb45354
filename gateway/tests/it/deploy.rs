//! The deployment artifacts in deploy/, checked without a container engine or a cluster: every
//! sample configuration passes `check-config` (the ones inside both Kubernetes ConfigMaps, the
//! ones the Helm chart renders from its accepted value sets, and the systemd one in its
//! installed layout); the manifests parse and everything they reference exists (keys, ports,
//! volumes, the config's secret files and store), and the store decides their shape
//! (`kubernetes.rs`); the Dockerfile copies what exists and agrees with the manifests; the
//! systemd unit passes `systemd-analyze`; and `toolgate health`, the image's health check, tells
//! a live admin listener from a dead one. deploy/helm/check.sh lints and renders the chart and
//! both kustomizations with Helm and kustomize themselves (test.sh runs it).

mod kubernetes;

use kubernetes::{Cluster, EMBEDDED, REPLICAS};
use serde_yaml_ng::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn list(value: &Value) -> &[Value] {
    value.as_sequence().map_or(&[], Vec::as_slice)
}

/// `toolgate check-config --skip-secrets` on `toolgate.toml` in `directory` (the samples name
/// secrets that live on the target machine).
fn check_config(directory: &Path, what: &str) {
    let output = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["check-config", "--skip-secrets"])
        .arg(directory.join("toolgate.toml"))
        .output()
        .expect("run toolgate");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.trim() == "ok",
        "{what}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every `file:/…` secret reference in a configuration text.
fn secret_files(config: &str) -> Vec<PathBuf> {
    config.split("\"file:").skip(1).filter_map(|rest| rest.split('"').next()).map(PathBuf::from).collect()
}

#[test]
fn sample_configs_in_deploy_subdirectories_pass_check_config() {
    // Each ConfigMap's configuration and policy, as the pod sees them in /etc/toolgate.
    for name in [REPLICAS, EMBEDDED] {
        let cluster = Cluster::load(name);
        let map = cluster.named("ConfigMap", "toolgate-config");
        let pod_view = tempfile::tempdir().expect("temp dir");
        for (key, value) in map["data"].as_mapping().expect("data") {
            std::fs::write(pod_view.path().join(text(key)), text(value)).expect("write");
        }
        check_config(pod_view.path(), &format!("deploy/{name}/configmap.yaml"));
    }

    // The systemd configuration in its installed layout (the unit's comment): the sample policy
    // beside it as policy.toml.
    let installed = tempfile::tempdir().expect("temp dir");
    std::fs::copy(deploy().join("systemd/toolgate.toml"), installed.path().join("toolgate.toml"))
        .expect("copy");
    std::fs::copy(deploy().join("policy.example.toml"), installed.path().join("policy.toml")).expect("copy");
    check_config(installed.path(), "deploy/systemd/toolgate.toml");

    // No configuration file anywhere under deploy/ escapes a check (the top-level ones are in
    // cli.rs; the chart's configuration is rendered from values.yaml, see the next test).
    let mut unchecked = Vec::new();
    let mut directories = vec![deploy()];
    while let Some(directory) = directories.pop() {
        for entry in std::fs::read_dir(&directory).expect("list") {
            let path = entry.expect("entry").path();
            let relative = path.strip_prefix(deploy()).expect("under deploy/").to_string_lossy().into_owned();
            if path.is_dir() {
                directories.push(path);
            } else if relative.ends_with(".toml")
                && relative.contains('/')
                && relative != "systemd/toolgate.toml"
            {
                unchecked.push(relative);
            }
        }
    }
    assert!(unchecked.is_empty(), "add these to this test: {unchecked:?}");
}

/// The Python with the Helm SDK (helm-python-sdk) that deploy/helm/check.py needs.
fn helm_python() -> PathBuf {
    let python = deploy().join("../.venv-tests/bin/python");
    let usable = Command::new(&python)
        .args(["-c", "import helm_python, yaml"])
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        usable,
        "{} cannot import helm_python and yaml: install them (`.venv-tests/bin/pip install \
         helm-python-sdk==0.2.2 PyYAML`; test.sh does) to render the Helm chart",
        python.display()
    );
    python
}

#[test]
fn helm_chart_renders_configs_that_pass_check_config() {
    // deploy/helm/check.py renders every value set the chart must accept and writes what each
    // pod sees in /etc/toolgate; the configuration names that directory, so point it here.
    let rendered = tempfile::tempdir().expect("temp dir");
    let output = Command::new(helm_python())
        .arg(deploy().join("helm/check.py"))
        .arg("--write-configs")
        .arg(rendered.path().join("sets"))
        .output()
        .expect("run deploy/helm/check.py");
    assert!(
        output.status.success(),
        "deploy/helm/check.py --write-configs: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut sets = BTreeSet::new();
    let mut stores = BTreeSet::new();
    for entry in std::fs::read_dir(rendered.path().join("sets")).expect("list") {
        let directory = entry.expect("entry").path();
        let name = directory.file_name().and_then(|name| name.to_str()).unwrap_or_default().to_owned();
        let config = read(&directory.join("toolgate.toml"));
        let here = format!("\"{}/", directory.display());
        std::fs::write(directory.join("toolgate.toml"), config.replace("\"/etc/toolgate/", &here))
            .expect("write");
        check_config(&directory, &format!("deploy/helm/toolgate with the value set {name:?}"));
        let parsed = gateway::config::Config::parse(&config, "chart").expect("parses");
        stores.insert(parsed.store.is_shared());
        sets.insert(name);
    }
    // Every set check.py announced, the defaults (PostgreSQL) and the embedded store among them.
    let announced: BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once(": ").map(|(name, _)| name.to_owned()))
        .collect();
    assert_eq!(sets, announced, "value sets written = value sets announced");
    assert!(sets.contains("defaults") && sets.contains("sled"), "{sets:?}");
    assert_eq!(stores, BTreeSet::from([false, true]), "both stores rendered");
}

/// Dockerfile instructions, continuation lines joined, comments dropped.
fn dockerfile() -> Vec<(String, String)> {
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in read(&deploy().join("Dockerfile")).lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(start) => current.push_str(start),
            None => {
                current.push_str(line);
                if let Some((word, rest)) = current.trim().split_once(' ') {
                    instructions.push((word.to_owned(), rest.trim().to_owned()));
                }
                current.clear();
            }
        }
    }
    instructions
}

#[test]
fn dockerfile_copies_what_exists_and_agrees_with_the_manifests() {
    let repository = deploy().join("..");
    let instructions = dockerfile();
    let all = |word: &'static str| {
        instructions.iter().filter(move |(w, _)| w == word).map(|(_, rest)| rest.as_str())
    };
    for copy in all("COPY").filter(|rest| !rest.contains("--from=")) {
        let parts: Vec<&str> = copy.split_whitespace().filter(|part| !part.starts_with("--")).collect();
        for source in &parts[..parts.len() - 1] {
            assert!(repository.join(source).exists(), "COPY {source}: not in the repository");
        }
    }
    let ignored: Vec<String> = read(&deploy().join("Dockerfile.dockerignore"))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "gateway",
        "policy",
        "injector",
        "dashboard",
        "gateway/tests",
        "gateway/benches",
    ] {
        assert!(repository.join(needed).exists(), "{needed}");
        assert!(
            !ignored.iter().any(|pattern| pattern == needed || pattern == "*" || pattern == "**"),
            "Dockerfile.dockerignore leaves out {needed}, which the build needs"
        );
    }
    for name in [REPLICAS, EMBEDDED] {
        let secrets = format!("deploy/{name}/secrets");
        assert!(
            ignored.contains(&secrets),
            "Dockerfile.dockerignore must leave out the operator's {secrets}"
        );
    }
    let build = all("RUN").find(|run| run.contains("cargo build")).expect("a cargo build step");
    assert!(build.contains("--locked") && build.contains("--bin toolgate"), "{build}");
    assert!(read(&repository.join("gateway/Cargo.toml")).contains("name = \"toolgate\""));

    // The image serves both kustomizations; only the embedded one has a volume.
    for name in [REPLICAS, EMBEDDED] {
        dockerfile_agrees_with(&Cluster::load(name), &instructions);
    }
}

/// The image's user, ports, health check, volume and command agree with one kustomization.
fn dockerfile_agrees_with(cluster: &Cluster, instructions: &[(String, String)]) {
    let all = |word: &'static str| {
        instructions.iter().filter(move |(w, _)| w == word).map(|(_, rest)| rest.as_str())
    };
    let what = cluster.name;
    let pod = cluster.pod();
    let user = all("USER").next_back().expect("USER");
    let expected = format!(
        "{}:{}",
        pod["securityContext"]["runAsUser"].as_u64().unwrap_or(0),
        pod["securityContext"]["runAsGroup"].as_u64().unwrap_or(0)
    );
    assert_eq!(user, expected, "{what}: the image's user is the pod's user");
    let exposed: BTreeSet<u64> = all("EXPOSE")
        .flat_map(|ports| ports.split_whitespace())
        .map(|port| port.parse().expect("port"))
        .collect();
    let container = &pod["containers"][0];
    let declared: BTreeSet<u64> =
        list(&container["ports"]).iter().map(|port| port["containerPort"].as_u64().expect("port")).collect();
    assert_eq!(exposed, declared, "{what}: EXPOSE = the Deployment's container ports");
    let admin =
        list(&container["ports"]).iter().find(|port| text(&port["name"]) == "admin").expect("admin port");
    let health = all("HEALTHCHECK").next().expect("HEALTHCHECK");
    let probe = format!(
        "\"health\", \"--url\", \"http://127.0.0.1:{}/healthz\"",
        admin["containerPort"].as_u64().unwrap_or(0)
    );
    assert!(health.contains(&probe), "{what}: the health check asks the admin port: {health}");
    match list(&container["volumeMounts"]).iter().find(|mount| text(&mount["name"]) == "data") {
        Some(volume) => assert!(
            all("VOLUME").any(|volumes| volumes.contains(text(&volume["mountPath"]))),
            "{what}: VOLUME = the data mount"
        ),
        None => assert!(cluster.config().store.is_shared(), "{what}: no data volume, yet no database"),
    }
    let arguments: Vec<String> =
        list(&container["args"]).iter().map(|arg| format!("\"{}\"", text(arg))).collect();
    assert!(
        all("CMD").any(|cmd| cmd == format!("[{}]", arguments.join(", "))),
        "{what}: CMD = the Deployment's args"
    );
}

#[test]
fn systemd_unit_verifies_and_is_hardened() {
    let unit = read(&deploy().join("systemd/toolgate.service"));
    let analyze = Path::new("/usr/bin/systemd-analyze");
    assert!(
        analyze.exists(),
        "systemd-analyze is missing: install it (`apt-get install systemd`; test.sh does) to check the unit"
    );
    // The unit names the installed binary; point it at the one under test so `verify` finds it.
    let directory = tempfile::tempdir().expect("temp dir");
    let copy = directory.path().join("toolgate.service");
    std::fs::write(&copy, unit.replace("/usr/local/bin/toolgate", env!("CARGO_BIN_EXE_toolgate")))
        .expect("write");
    let verify = Command::new(analyze).arg("verify").arg(&copy).output().expect("systemd-analyze verify");
    let complaints = String::from_utf8_lossy(&verify.stderr);
    assert!(verify.status.success() && complaints.trim().is_empty(), "systemd-analyze verify: {complaints}");
    let security = Command::new(analyze)
        .args(["security", "--offline=true", "--threshold=20"])
        .arg(&copy)
        .output()
        .expect("systemd-analyze security");
    let report = String::from_utf8_lossy(&security.stdout);
    let overall = report.lines().find(|line| line.contains("Overall exposure")).unwrap_or_default();
    eprintln!("systemd-analyze verify: clean; security: {}", overall.trim_start_matches('→').trim());
    assert!(security.status.success(), "exposure above 2.0:\n{report}");

    // The credentials the unit loads are exactly the secret files the configuration names, and
    // the store is in the state directory.
    let loaded: BTreeSet<String> = unit
        .lines()
        .filter_map(|line| line.strip_prefix("LoadCredential="))
        .filter_map(|credential| credential.split(':').next())
        .map(str::to_owned)
        .collect();
    let config = read(&deploy().join("systemd/toolgate.toml"));
    let named: BTreeSet<String> = secret_files(&config)
        .iter()
        .map(|file| {
            assert_eq!(
                file.parent(),
                Some(Path::new("/run/credentials/toolgate.service")),
                "{}",
                file.display()
            );
            file.file_name().and_then(|name| name.to_str()).unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(loaded, named, "LoadCredential= names = the configuration's credential files");
    for directive in [
        "DynamicUser=yes",
        "StateDirectory=toolgate",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "ExecReload=/bin/kill -HUP $MAINPID",
    ] {
        assert!(unit.lines().any(|line| line == directive), "missing {directive}");
    }
    assert!(config.contains("path = \"/var/lib/toolgate/store\""), "the store lives in the state directory");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolgate_health_tells_a_live_admin_listener_from_a_dead_one() {
    let health = |url: String| async move {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["health", "--url", &url])
            .output()
            .await
            .expect("run toolgate health");
        (
            output.status.success(),
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)),
        )
    };
    let gateway = crate::harness::gateway(&[("a.test", "127.0.0.1:1".parse().expect("address"))], "").await;
    let admin = gateway.admin_address;
    let (ok, output) = health(format!("http://{admin}/healthz")).await;
    assert!(ok && output.trim() == "ok", "{output}");
    let (ok, output) = health(format!("http://{admin}/nothing")).await;
    assert!(!ok && output.contains("404"), "{output}");
    gateway.stop().await;
    let (ok, output) = health(format!("http://{admin}/healthz")).await;
    assert!(!ok && output.contains("cannot connect"), "{output}");
    let (ok, output) = health("https://example.test/healthz".into()).await;
    assert!(!ok && output.contains("bad URL"), "{output}");
}
