# shellcheck shell=bash
# Helpers shared by bench/load.sh and bench/relay.sh (sourced, not run): errors, cleanup of every
# process started, free loopback ports, wrk output parsing, medians, CPU accounting, the gateway
# binary and the OIDC provider fixture. The sourcing script sets ROOT and `set -euo pipefail`.

die() { echo "${BENCH_NAME:-bench}: ERROR: $*" >&2; exit 1; }
note() { echo "== $*"; }

# --- cleanup: everything started here (PIDS) is killed on exit, TMP removed unless KEEP=1 -----
KEEP="${KEEP:-0}"
PIDS=()
TMP=""
cleanup() {
    local status=$?
    set +e
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [[ -n "$TMP" && -d "$TMP" ]]; then
        if [[ "$KEEP" == "1" ]]; then
            echo "== kept temp dir: $TMP"
        else
            rm -rf "$TMP"
        fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# install_missing TOOL=PACKAGE...: apt-get installs the packages of missing tools (as root).
install_missing() {
    local pair need=()
    for pair in "$@"; do
        command -v "${pair%%=*}" >/dev/null 2>&1 || need+=("${pair#*=}")
    done
    ((${#need[@]})) || return 0
    note "installing ${need[*]} with apt-get"
    command -v apt-get >/dev/null 2>&1 || die "need ${need[*]} and apt-get is not available"
    [[ "$(id -u)" == 0 ]] || die "need ${need[*]}; apt-get install requires root"
    apt-get update || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" \
        || die "apt-get install ${need[*]} failed"
}

# gateway_bin: sets TOOLGATE_BIN, building it (release, respecting CARGO_TARGET_DIR) unless given.
gateway_bin() {
    if [[ -n "${TOOLGATE_BIN:-}" ]]; then
        [[ -x "$TOOLGATE_BIN" ]] || die "TOOLGATE_BIN=$TOOLGATE_BIN is not an executable"
        return 0
    fi
    note "building the gateway (cargo build --release -p gateway)"
    (cd "$ROOT" && cargo build --release -p gateway) || die "cargo build failed"
    local target_dir="${CARGO_TARGET_DIR:-target}"
    [[ "$target_dir" == /* ]] || target_dir="$ROOT/$target_dir"
    TOOLGATE_BIN="$target_dir/release/toolgate"
    [[ -x "$TOOLGATE_BIN" ]] || die "built, but $TOOLGATE_BIN is missing"
}

# --- ports, chosen free at run time -----------------------------------------------------------
CHOSEN_PORTS=" "
free_port() {
    local port
    for _ in $(seq 200); do
        port=$((20000 + RANDOM % 40000))
        [[ "$CHOSEN_PORTS" == *" $port "* ]] && continue
        if [[ -z "$(ss -Htan "( sport = :$port )" 2>/dev/null)" ]]; then
            CHOSEN_PORTS+="$port "
            echo "$port"
            return 0
        fi
    done
    die "no free port found"
}

# --- numbers ----------------------------------------------------------------------------------
to_ms() { # wrk latency like 635.00us / 1.23ms / 2.01s -> ms
    awk -v v="$1" 'BEGIN {
        if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
        else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f", v * 60000 }
        else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
        else printf "nan" }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
CLK_TCK="$(getconf CLK_TCK)"
tree_cpu_ticks() { # pid: utime+stime of the process and its direct children (nginx workers)
    local pid="$1" total=0 p kids
    kids="$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)"
    for p in $pid $kids; do
        [[ -r /proc/$p/stat ]] || continue
        total=$((total + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' /proc/"$p"/stat)))
    done
    echo "$total"
}
rss_kb() { awk -v key="$2:" '$1 == key { print $2 }' /proc/"$1"/status; }

# --- PostgreSQL (Debian's postgresql), for the shared store ------------------------------------
# start_postgres NAME: a cluster of its own in $TMP/NAME (initdb, loopback, a free port, password
# authentication; as nobody when run as root, since PostgreSQL refuses root), started into PIDS;
# sets PG_URL (database "toolgate", no password in it) and PG_PASSWORD_FILE.
start_postgres() {
    local name="$1" bin dir="$TMP/$1" port as=()
    bin="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)"
    [[ -x "$bin/postgres" ]] || die "needs PostgreSQL (Debian: apt-get install postgresql)"
    mkdir -p "$dir"
    PG_PASSWORD_FILE="$TMP/$name-password"
    (umask 077 && printf 'bench-%s' "$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$PG_PASSWORD_FILE")
    cp "$PG_PASSWORD_FILE" "$dir/password"
    if [[ "$(id -u)" == 0 ]]; then
        chmod 711 "$TMP"
        chown -R 65534:65534 "$dir"
        as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    fi
    "${as[@]}" "$bin/initdb" -D "$dir/data" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 \
        --username=toolgate --pwfile="$dir/password" >"$TMP/$name-initdb.log" 2>&1 \
        || { cat "$TMP/$name-initdb.log" >&2; die "initdb failed"; }
    port="$(free_port)"
    "${as[@]}" "$bin/postgres" -D "$dir/data" -p "$port" -c listen_addresses=127.0.0.1 \
        -c unix_socket_directories="$dir" -c max_connections=300 >"$TMP/$name.log" 2>&1 &
    PIDS+=("$!")
    for _ in $(seq 100); do
        "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
        sleep 0.1
    done
    PGPASSWORD="$(cat "$PG_PASSWORD_FILE")" "$bin/createdb" -h 127.0.0.1 -p "$port" -U toolgate toolgate \
        || { cat "$TMP/$name.log" >&2; die "PostgreSQL did not start"; }
    PG_URL="postgres://toolgate@127.0.0.1:$port/toolgate"
}

# --- the OIDC provider fixture (gateway/tests/oidc) -------------------------------------------
OIDC_DIR="$ROOT/gateway/tests/oidc"
oidc_fixture_ready() { # installs node_modules when missing
    command -v node >/dev/null 2>&1 || die "needs node (the OIDC provider fixture in $OIDC_DIR)"
    [[ -d "$OIDC_DIR/node_modules/oidc-provider" ]] && return 0
    note "installing the OIDC provider fixture (npm ci in $OIDC_DIR)"
    command -v npm >/dev/null 2>&1 || die "npm not found (needed for npm ci in $OIDC_DIR)"
    (cd "$OIDC_DIR" && npm ci --no-audit --no-fund) || die "npm ci in $OIDC_DIR failed"
}
# start_oidc NAME CLIENT_ID CLIENT_SECRET REDIRECT_URIS: sets ISSUER (and appends to PIDS).
start_oidc() {
    local name="$1" pid
    : >"$TMP/$name.out" # exists before the first look, however fast the shell is
    CLIENT_ID="$2" CLIENT_SECRET="$3" REDIRECT_URIS="$4" \
        node "$OIDC_DIR/provider.mjs" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    pid=$!
    PIDS+=("$pid")
    ISSUER=""
    for _ in $(seq 150); do
        ISSUER="$(sed -n 's#^oidc-provider listening on \(http://127\.0\.0\.1:[0-9]*\)$#\1#p' "$TMP/$name.out" | head -1)"
        [[ -n "$ISSUER" ]] && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$TMP/$name.err" >&2; die "OIDC provider exited at start"; }
        sleep 0.1
    done
    cat "$TMP/$name.err" >&2
    die "OIDC provider did not print its issuer"
}

signed_in_gateway_config() { # port store client_id secret_file: the head of every SSO gateway config
    # store: a directory, ":memory:", or "postgres" (the cluster start_postgres started). The
    # session and assertion keys are configured (generated once per run), as a shared store
    # requires and every replica must share.
    [[ -f "$TMP/session-key" ]] || (umask 077 && head -c 32 /dev/urandom | base64 >"$TMP/session-key")
    [[ -f "$TMP/assertion-key.pem" ]] || (umask 077 && openssl genpkey -algorithm EC \
        -pkeyopt ec_paramgen_curve:P-256 -out "$TMP/assertion-key.pem" 2>/dev/null) \
        || die "openssl could not generate the assertion key"
    local store
    if [[ "$2" == postgres ]]; then
        store="url = \"$PG_URL\"
password = \"file:$PG_PASSWORD_FILE\"
tls = \"disable\""
    else
        store="path = \"$2\""
    fi
    cat <<EOF
public_url = "http://localhost:$1"

[server]
listen = "127.0.0.1:$1"
admin_listen = "127.0.0.1:0"
log_format = "json"

[sso]
issuer = "$ISSUER"
client_id = "$3"
client_secret = "file:$4"
scopes = ["openid", "email", "profile", "groups"]
algorithms = ["ES256"]
session_keys = ["file:$TMP/session-key"]
assertion_keys = ["file:$TMP/assertion-key.pem"]

[store]
$store

[policy]
file = "$TMP/policy.toml"
EOF
}
