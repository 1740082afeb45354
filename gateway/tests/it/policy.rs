//! The policy as the operator meets it: hot reload in a running gateway (file change and
//! SIGHUP, broken files rejected), `check-config` validating the policy, `policy explain`.

use crate::harness::{self, get, send};
use crate::process::spawn_gateway_in;
use std::process::Command;
use std::time::Duration;

const TWO_RULES: &str = "groups = [\"engineering\"]\n\
[[rule]]\nid = \"one\"\nsites = [\"site0\"]\ntools.allow = [\"add_task\"]\n\
[[rule]]\nid = \"two\"\nsites = [\"site0\"]\ngroups = [\"engineering\"]\ntools.approve = [\"delete_task\"]\n";

async fn metric(admin: std::net::SocketAddr, line_start: &str) -> Option<String> {
    let text = send(admin, get("admin", "/metrics")).await.text();
    text.lines().find(|line| line.starts_with(line_start)).map(str::to_owned)
}

async fn wait_for_metric(admin: std::net::SocketAddr, expected: &str) {
    for _ in 0..100 {
        if metric(admin, expected).await.is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "metric line {expected:?} never appeared:\n{}",
        send(admin, get("admin", "/metrics")).await.text()
    );
}

#[tokio::test]
async fn policy_reloads_on_change_and_sighup_and_rejects_broken_files() {
    let app = harness::upstream(|_| harness::reply("text/plain", "ok")).await;
    let directory = tempfile::tempdir().expect("temp dir");
    let policy_path = directory.path().join("policy.toml");
    std::fs::write(&policy_path, TWO_RULES).expect("write policy");
    let config = harness::config_text(&[("app.test", app.address)], "[policy]\nfile = \"policy.toml\"");
    let gateway = spawn_gateway_in(directory.path(), &config, &[]).await;
    let admin = gateway.admin_address;
    wait_for_metric(admin, "toolgate_policy_rules 2").await;

    // A changed file is picked up.
    let three =
        format!("{TWO_RULES}[[rule]]\nid = \"three\"\nsites = [\"site0\"]\ntools.deny = [\"drop_*\"]\n");
    std::fs::write(&policy_path, &three).expect("write policy");
    wait_for_metric(admin, "toolgate_policy_rules 3").await;
    wait_for_metric(admin, "toolgate_policy_reloads_total{outcome=\"applied\"} 1").await;

    // A broken file is rejected and the policy in force stays.
    std::fs::write(
        &policy_path,
        three.replace("id = \"three\"", "id = \"three\"\ngroups = [\"no-such-group\"]"),
    )
    .expect("write");
    wait_for_metric(admin, "toolgate_policy_reloads_total{outcome=\"rejected\"} 1").await;
    assert_eq!(metric(admin, "toolgate_policy_rules").await.as_deref(), Some("toolgate_policy_rules 3"));
    assert_eq!(send(gateway.address, get("app.test", "/")).await.status, 200, "still serving");

    // SIGHUP reloads even when the file's stamp did not change: same length, old mtime.
    std::fs::write(&policy_path, &three).expect("write");
    wait_for_metric(admin, "toolgate_policy_reloads_total{outcome=\"applied\"} 2").await;
    let modified = std::fs::metadata(&policy_path).expect("metadata").modified().expect("mtime");
    let one_rule = "[[rule]]\nid = \"x\"\nsites = [\"site0\"]\n";
    let padded = format!("{one_rule}{}", "#".repeat(three.len() - one_rule.len()));
    // Prepared aside and renamed into place, so the watcher never sees an intermediate stamp.
    let staged = directory.path().join("policy.staged");
    std::fs::write(&staged, &padded).expect("write");
    std::fs::File::options()
        .write(true)
        .open(&staged)
        .expect("open")
        .set_modified(modified)
        .expect("reset mtime");
    std::fs::rename(&staged, &policy_path).expect("rename");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        metric(admin, "toolgate_policy_rules").await.as_deref(),
        Some("toolgate_policy_rules 3"),
        "no stamp change, no reload"
    );
    let pid = gateway.child.id().expect("pid").to_string();
    assert!(Command::new("kill").args(["-HUP", &pid]).status().expect("kill").success());
    wait_for_metric(admin, "toolgate_policy_rules 1").await;
}

#[test]
fn check_config_reports_policy_problems_with_file_line_and_key() {
    let directory = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        directory.path().join("policy.toml"),
        "[[rule]]\nid = \"r\"\nsites = [\"payroll\"]\ntools.allow = [\"ok\"]\n",
    )
    .expect("write");
    let config = "public_url = \"https://g.example\"\n[server]\nlisten = \"127.0.0.1:1\"\nadmin_listen = \"127.0.0.1:2\"\ninsecure_no_sso = true\n\
                  [policy]\nfile = \"policy.toml\"\n[sites.tasks]\nhost = \"t.example\"\nupstream = \"http://127.0.0.1:3\"\n";
    let path = directory.path().join("toolgate.toml");
    std::fs::write(&path, config).expect("write");
    let output =
        Command::new(env!("CARGO_BIN_EXE_toolgate")).arg("check-config").arg(&path).output().expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("policy.toml:3"), "{stderr}");
    assert!(stderr.contains("payroll"), "{stderr}");
}

fn explain(arguments: &[&str]) -> String {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/toolgate.example.toml");
    let output = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["policy", "explain", "--config", sample])
        .args(arguments)
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Carol (finance) submitting an expense of `amount` through the sample policy.
fn explain_expense(amount: u32) -> String {
    let args = format!("{{\"amount\": {amount}}}");
    explain(&[
        "--user",
        "carol",
        "--groups",
        "finance",
        "--site",
        "expenses",
        "--tool",
        "submit_expense",
        "--args",
        &args,
    ])
}

#[test]
fn policy_explain_shows_decisions_and_rules() {
    let big = explain_expense(1200);
    assert!(big.starts_with("decision: ask approval from group finance-approvers"), "{big}");
    assert!(big.contains("big-expenses"), "{big}");

    let small = explain_expense(10);
    assert!(small.starts_with("decision: allow"), "{small}");
    assert!(small.contains("expenses-staff"), "{small}");

    let delete = explain(&["--user", "dave", "--site", "tasks", "--tool", "delete_task"]);
    assert!(delete.starts_with("decision: deny"), "{delete}");
    assert!(delete.contains("tasks-everyone"), "{delete}");

    let context = explain(&["--user", "dave", "--site", "tasks", "--context", "task_list"]);
    assert!(context.starts_with("decision: allow"), "{context}");
}
