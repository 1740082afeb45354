#!/usr/bin/env bash
# Runs every Toolgate test on a fresh machine: installs what the tests need when it is missing
# (Debian's headless Chromium, systemd-analyze, promtool and PyYAML, strace, PostgreSQL, the
# oidc-provider and vue npm packages, the openai and django Python packages), then tests the
# Prometheus alert rules, checks formatting and lints and runs every test suite.
# Fails loudly when something cannot be installed. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n==> %s\n' "$*"; }

install_debian_packages() {
  if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
  if ! command -v apt-get >/dev/null; then
    echo "test.sh: missing $*, and this is not a Debian-like system; install them by hand" >&2
    exit 1
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

step "test dependencies"
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
# systemd-analyze checks deploy/systemd/toolgate.service (gateway/tests/it/deploy.rs).
[ -x /usr/bin/systemd-analyze ] || missing+=(systemd)
# promtool tests the alert rules in deploy/prometheus/; check-docs.py there reads them with PyYAML.
[ -x /usr/bin/promtool ] || missing+=(prometheus)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing+=(python3-yaml)
# strace watches the audit writer fdatasync each batch before acknowledging it (it/audit.rs).
[ -x /usr/bin/strace ] || missing+=(strace)
# A real PostgreSQL server for the PostgreSQL store's tests (it/postgres.rs starts its own
# cluster with initdb in a temp dir, on a loopback port, as nobody when run as root).
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  install_debian_packages "${missing[@]}"
fi
/usr/bin/chromium --version
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { echo "test.sh: PostgreSQL's server is missing after installing postgresql" >&2; exit 1; }
# A real, independent OpenID provider for the SSO interoperability tests.
command -v node >/dev/null || install_debian_packages nodejs npm
(cd gateway/tests/oidc && npm ci --no-audit --no-fund --loglevel=error)
# A real Vue build, whose rendered names the runtime tests check (gateway/tests/it/runtime/frameworks.rs).
(cd gateway/tests/frameworks && npm ci --no-audit --no-fund --loglevel=error)
# The official openai Python package, for the OpenAI-compatible endpoint's client test
# (gateway/tests/openai_client.py), and Django, for the real Django admin behind the gateway
# (gateway/tests/django); the `it` tests run both with .venv-tests/bin/python.
if ! .venv-tests/bin/python -c 'import openai, django, sys; sys.exit(openai.__version__ != "3.54.0" or django.__version__ != "5.2.19")' 2>/dev/null; then
  echo "installing: the openai and django Python packages (.venv-tests)"
  command -v python3 >/dev/null || install_debian_packages python3
  python3 -m venv --clear .venv-tests 2>/dev/null || { install_debian_packages python3-venv; python3 -m venv --clear .venv-tests; }
  .venv-tests/bin/pip install --quiet --disable-pip-version-check openai==3.54.0 django==5.2.19
fi

step "alert rules"
# Every alert in docs/operations.md ("Metrics to alert on") is a rule, and each fires on the
# situation it names (deploy/prometheus/alerts.test.yml).
/usr/bin/python3 deploy/prometheus/check-docs.py
/usr/bin/promtool check rules deploy/prometheus/alerts.yml
/usr/bin/promtool test rules deploy/prometheus/alerts.test.yml

if ! .venv-tests/bin/python -c 'import helm_python, yaml, sys; sys.exit(helm_python.__version__ != "0.2.2")' 2>/dev/null; then
  .venv-tests/bin/pip install --quiet --disable-pip-version-check helm-python-sdk==0.2.2 PyYAML
fi
command -v kubectl >/dev/null || { echo "test.sh: kubectl is missing" >&2; exit 1; }
step "Helm chart and kustomizations"; deploy/helm/check.sh

step "formatting"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "a production build leaves the demo out, and says so"
# deploy/Dockerfile builds with --no-default-features; `toolgate demo` must then refuse clearly.
cargo build -p gateway --locked --no-default-features --bin toolgate
cargo clippy -p gateway --locked --no-default-features --all-targets -- -D warnings
without_demo=$(mktemp -d)
cp "${CARGO_TARGET_DIR:-target}/debug/toolgate" "$without_demo/toolgate"
if message=$("$without_demo/toolgate" demo 2>&1); then
  echo "test.sh: toolgate built without the demo feature ran the demo" >&2
  exit 1
fi
rm -rf "$without_demo"
case "$message" in
  *"built without the demo"*) echo "ok: $message" ;;
  *) echo "test.sh: unexpected answer from a build without the demo: $message" >&2; exit 1 ;;
esac

step "tests"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
# cargo's own last line is the last (often empty) doc-test suite; end with the whole count.
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "\ntests: %d passed, %d failed\n", passed, failed }' "$log"
