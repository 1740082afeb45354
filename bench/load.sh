#!/usr/bin/env bash
# Toolgate load benchmark: the gateway against nginx, in the same run, on loopback.
#
# Measures (DESIGN.md §10):
#   * non-HTML pass-through (small JSON)        gateway vs nginx proxy_pass   target >= 1.0x req/s
#   * 20 KB HTML page with script injection     gateway vs nginx sub_filter   target >= 0.8x req/s
#   * a 50 MB page streamed through the gateway: first byte before the upstream finishes,
#     peak RSS < 64 MB
#   * authenticated: the same JSON and HTML routes through a gateway with single sign-on
#     (the oidc-provider fixture in gateway/tests/oidc), signed in once with curl, wrk sending
#     the session cookie; printed as ratios against the unauthenticated gateway (no target)
#
# Environment:
#   TOOLGATE_BIN   gateway binary (default: `cargo build --release -p gateway`, respecting
#                  CARGO_TARGET_DIR, then <target>/release/toolgate)
#   DURATION       wrk duration per measured run (default 10s)
#   WARMUP         wrk warm-up duration per target (default 2s)
#   CONNECTIONS    wrk connections (default 64)
#   THREADS        wrk threads (default 2)
#   BIG_RATE       nginx limit_rate for the 50 MB page (default 20m = 20 MiB/s, about 2.5 s)
#   ROUNDS         rounds of the four wrk runs, nginx and gateway alternating; the table shows
#                  medians (default 1)
#   KEEP=1         keep the temp dir (configs, fixtures, logs) and print its path
#   AUTH           1 (default): also run the authenticated gateway(s); 0: skip (no node needed)
#   AUTH_STORES    store(s) for the authenticated gateways, "memory" and/or "dir" (default
#                  "memory dir": one gateway process per store, all measured)
#
# It is a benchmark, not a test: it exits 0 when a ratio is below target (it prints BELOW).
# It exits non-zero only when it cannot run (missing tools, a server that does not start,
# a target that answers wrongly).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
CONNECTIONS="${CONNECTIONS:-64}"
THREADS="${THREADS:-2}"
BIG_RATE="${BIG_RATE:-20m}"
KEEP="${KEEP:-0}"
AUTH="${AUTH:-1}"
AUTH_STORES="${AUTH_STORES:-memory dir}"
OIDC_DIR="$ROOT/gateway/tests/oidc"
AUTH_HOST="bench.localhost"
HOST_HEADER="bench.test"
BIG_BYTES=$((50 * 1024 * 1024))
RSS_TARGET_MB=64

die() { echo "load.sh: ERROR: $*" >&2; exit 1; }
note() { echo "== $*"; }

# --- cleanup: everything started here is killed on exit ------------------------------------
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

# --- 1. tools -------------------------------------------------------------------------------
need_install=()
command -v nginx >/dev/null 2>&1 || need_install+=(nginx-light)
command -v wrk >/dev/null 2>&1 || need_install+=(wrk)
if ((${#need_install[@]})); then
    note "installing ${need_install[*]} with apt-get"
    command -v apt-get >/dev/null 2>&1 || die "need ${need_install[*]} and apt-get is not available"
    [[ "$(id -u)" == 0 ]] || die "need ${need_install[*]}; apt-get install requires root"
    apt-get update || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need_install[@]}" \
        || die "apt-get install ${need_install[*]} failed"
fi
for tool in nginx wrk curl awk ss; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done
nginx -V 2>&1 | grep -q http_sub_module || die "this nginx lacks http_sub_module (sub_filter)"
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do
        [[ "$store" == memory || "$store" == dir ]] || die "AUTH_STORES: unknown store '$store' (memory, dir)"
    done
    command -v node >/dev/null 2>&1 || die "AUTH=1 needs node (the OIDC provider fixture); AUTH=0 skips it"
    if [[ ! -d "$OIDC_DIR/node_modules/oidc-provider" ]]; then
        note "installing the OIDC provider fixture (npm ci in $OIDC_DIR)"
        command -v npm >/dev/null 2>&1 || die "npm not found (needed for npm ci in $OIDC_DIR)"
        (cd "$OIDC_DIR" && npm ci --no-audit --no-fund) || die "npm ci in $OIDC_DIR failed"
    fi
fi

# --- gateway binary -------------------------------------------------------------------------
if [[ -n "${TOOLGATE_BIN:-}" ]]; then
    [[ -x "$TOOLGATE_BIN" ]] || die "TOOLGATE_BIN=$TOOLGATE_BIN is not an executable"
else
    note "building the gateway (cargo build --release -p gateway)"
    (cd "$ROOT" && cargo build --release -p gateway) || die "cargo build failed"
    target_dir="${CARGO_TARGET_DIR:-target}"
    [[ "$target_dir" == /* ]] || target_dir="$ROOT/$target_dir"
    TOOLGATE_BIN="$target_dir/release/toolgate"
    [[ -x "$TOOLGATE_BIN" ]] || die "built, but $TOOLGATE_BIN is missing"
fi

TMP="$(mktemp -d /tmp/toolgate-bench.XXXXXX)"
chmod 755 "$TMP"

# --- ports, chosen free at run time ---------------------------------------------------------
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
UP_PORT="$(free_port)"
PROXY_PORT="$(free_port)"
SUB_PORT="$(free_port)"
declare -A AUTH_PORT AUTH_PID AUTH_COOKIE AUTH_SIGNIN
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do AUTH_PORT[$store]="$(free_port)"; done
fi

wait_http() { # url [host header] : waits up to 10 s for any HTTP answer
    local url="$1"
    for _ in $(seq 100); do
        if curl -s -o /dev/null --max-time 1 -H "Host: $HOST_HEADER" "$url"; then return 0; fi
        sleep 0.1
    done
    return 1
}

# --- 2. fixtures ----------------------------------------------------------------------------
WWW="$TMP/www"
mkdir -p "$WWW"
html_head() {
    cat <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarterly operations report · Intranet</title>
<link rel="stylesheet" href="/static/app.css">
<style>
body{font-family:system-ui,sans-serif;margin:0;color:#1d2330}
nav ul{list-style:none;display:flex;gap:1rem;padding:.5rem 1rem;background:#eef1f6}
table{border-collapse:collapse;width:100%;margin:1rem 0}
td,th{border:1px solid #d5dae3;padding:.25rem .5rem;text-align:left}
.muted{color:#6b7385}
</style>
<script src="/static/vendor.js" defer></script>
</head>
<body class="layout-wide">
<header><a class="brand" href="/">Intranet</a>
<form action="/search" method="get" role="search"><input type="search" name="q" aria-label="Search"><button>Search</button></form>
</header>
<nav aria-label="Main"><ul>
<li><a href="/">Home</a></li><li><a href="/tasks">Tasks</a></li><li><a href="/expenses">Expenses</a></li>
<li><a href="/people">People</a></li><li><a href="/reports" aria-current="page">Reports</a></li><li><a href="/help">Help</a></li>
</ul></nav>
<main id="content">
<h1>Quarterly operations report</h1>
<tool name="export_report" description="Export this report as CSV" return><prop name="region" type="number" description="Region number" required></prop></tool>
<tool name="delete_report" description="Delete this report"><prop name="confirm" type="boolean" required></prop></tool>
<context name="report_summary">Quarterly operations report: all regions, provisional figures.</context>
<form id="feedback" action="/feedback" method="post"><label>Feedback <input name="text"></label><button>Send</button></form>
EOF
}
html_section() { # n
    local n="$1" i
    printf '<section id="s%d">\n<h2>Region %d &mdash; summary</h2>\n' "$n" "$n"
    printf '<p>During the quarter the team in region %d closed most open tickets, reduced the median time to resolution and onboarded new colleagues. Details per site follow; figures are provisional until finance signs off &amp; the audit completes.</p>\n' "$n"
    printf '<table>\n<thead><tr><th>Site</th><th>Open</th><th>Closed</th><th>Median days</th><th>Owner</th></tr></thead>\n<tbody>\n'
    for i in 1 2 3 4 5 6; do
        printf '<tr><td><a href="/sites/%d-%d">Site %d-%d</a></td><td>%d</td><td>%d</td><td>%d.%d</td><td class="muted">team-%d@corp.example</td></tr>\n' \
            "$n" "$i" "$n" "$i" $(((n * 7 + i * 3) % 50)) $(((n * 13 + i * 11) % 400)) $((i % 9)) $((n % 10)) "$i"
    done
    printf '</tbody>\n</table>\n<p class="muted">Updated by the reporting job. <a href="/reports/%d/export.csv">Export CSV</a></p>\n</section>\n' "$n"
}
html_tail() {
    printf '</main>\n<footer><p class="muted">&copy; Corp &middot; <a href="/privacy">Privacy</a></p></footer>\n</body>\n</html>\n'
}
# head, then whole sections while the page stays within 20 KB, then the tail
tail_bytes=$(html_tail | wc -c)
html_head >"$WWW/page.html"
n=1
while :; do
    html_section "$n" >"$TMP/section.tmp"
    (( $(wc -c <"$WWW/page.html") + $(wc -c <"$TMP/section.tmp") + tail_bytes > 20480 )) && break
    cat "$TMP/section.tmp" >>"$WWW/page.html"
    n=$((n + 1))
done
html_tail >>"$WWW/page.html"
rm -f "$TMP/section.tmp"

printf '{"id":"7f3c2a9e","status":"ok","user":{"name":"Ada Lovelace","team":"analytics"},"items":[{"id":1,"title":"Review Q3 budget","done":false},{"id":2,"title":"Ship report","done":true}],"total":2,"page":1}\n' \
    >"$WWW/api.json"

# 50 MB page: the same head, then sections repeated until >= 50 MiB, then the tail.
{
    for n in $(seq 1 40); do html_section "$n"; done
} >"$TMP/block.tmp"
for _ in 1 2 3 4 5; do cat "$TMP/block.tmp" "$TMP/block.tmp" >"$TMP/block2.tmp"; mv "$TMP/block2.tmp" "$TMP/block.tmp"; done
{
    html_head
    size=0
    block_size=$(wc -c <"$TMP/block.tmp")
    while ((size < BIG_BYTES)); do cat "$TMP/block.tmp"; size=$((size + block_size)); done
    html_tail
} >"$WWW/big.html"
rm -f "$TMP/block.tmp"
chmod -R a+rX "$WWW"
PAGE_BYTES=$(wc -c <"$WWW/page.html")
JSON_BYTES=$(wc -c <"$WWW/api.json")
BIG_FILE_BYTES=$(wc -c <"$WWW/big.html")

# --- 3. nginx: upstream (own process) and the two proxies (another process) ----------------
USER_LINE=""
[[ "$(id -u)" == 0 ]] && USER_LINE="user root;"
nginx_common() { # name
    cat <<EOF
$USER_LINE
worker_processes auto;
daemon off;
pid $TMP/$1.pid;
error_log $TMP/$1-error.log warn;
events { worker_connections 4096; }
EOF
}
nginx_temp_paths() { # name
    cat <<EOF
    client_body_temp_path $TMP/$1-tmp/body;
    proxy_temp_path $TMP/$1-tmp/proxy;
    fastcgi_temp_path $TMP/$1-tmp/fastcgi;
    uwsgi_temp_path $TMP/$1-tmp/uwsgi;
    scgi_temp_path $TMP/$1-tmp/scgi;
EOF
}
mkdir -p "$TMP/upstream-tmp" "$TMP/proxy-tmp"
{
    nginx_common upstream
    cat <<EOF
http {
    access_log off;
$(nginx_temp_paths upstream)
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    types { text/html html; application/json json; }
    default_type application/octet-stream;
    charset utf-8;
    server {
        listen 127.0.0.1:$UP_PORT;
        root $WWW;
        location = /big.html { limit_rate $BIG_RATE; }
    }
}
EOF
} >"$TMP/upstream.conf"
proxy_common='proxy_pass http://backend;
            proxy_http_version 1.1;'
{
    nginx_common proxy
    cat <<EOF
http {
    access_log off;
$(nginx_temp_paths proxy)
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    upstream backend {
        server 127.0.0.1:$UP_PORT;
        keepalive 64;
        keepalive_requests 1000000;
    }
    # (b) plain proxy_pass
    server {
        listen 127.0.0.1:$PROXY_PORT;
        location / {
            $proxy_common
            proxy_set_header Connection "";
        }
    }
    # (c) proxy_pass + sub_filter: the analogue of the gateway's script injection
    server {
        listen 127.0.0.1:$SUB_PORT;
        location / {
            $proxy_common
            proxy_set_header Connection "";
            proxy_set_header Accept-Encoding "";
            sub_filter '<head>' '<head><script src="/.toolgate/runtime.js" defer></script>';
            sub_filter_once on;
        }
    }
}
EOF
} >"$TMP/proxy.conf"

start_nginx() { # name
    nginx -p "$TMP" -c "$TMP/$1.conf" -t -q 2>"$TMP/$1-test.log" \
        || { cat "$TMP/$1-test.log" >&2; die "nginx config $1 is invalid"; }
    nginx -p "$TMP" -c "$TMP/$1.conf" >"$TMP/$1.out" 2>&1 &
    PIDS+=("$!")
    eval "${1^^}_PID=$!"
}
start_nginx upstream
start_nginx proxy
wait_http "http://127.0.0.1:$UP_PORT/api.json" || { cat "$TMP/upstream-error.log" >&2; die "upstream nginx did not start"; }
wait_http "http://127.0.0.1:$PROXY_PORT/api.json" || { cat "$TMP/proxy-error.log" >&2; die "proxy nginx did not start"; }

# --- 4. the gateway -------------------------------------------------------------------------
mkdir -p "$TMP/store"
# No single sign-on here (the unauthenticated rows); the gateway's own host (public_url) must
# differ from every site host.
# The page layer at work on every HTML response: a form rule, plus per-user filtering by the
# policy below (one tool and one context stay, one tool is removed).
FORM_RULE='[[sites.bench.forms.rule]]
selector = "form#feedback"
name = "send_feedback"
description = "Send feedback about this report"
params = { text = "The feedback" }'
cat >"$TMP/toolgate.toml" <<EOF
public_url = "http://gateway.test"

[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
log_format = "json"
insecure_no_sso = true

[store]
path = "$TMP/store"

[policy]
file = "$TMP/policy.toml"

[sites.bench]
host = "$HOST_HEADER"
upstream = "http://127.0.0.1:$UP_PORT"

$FORM_RULE
EOF
cat >"$TMP/policy.toml" <<EOF
[[rule]]
id = "bench"
tools.allow = ["export_*", "send_feedback"]
tools.deny = ["delete_*"]
contexts.allow = ["report_*"]
EOF
start_gateway() { # name: runs $TMP/<name>.toml; sets STARTED_PID and STARTED_ADDR
    local name="$1" addr="" pid
    "$TOOLGATE_BIN" check-config "$TMP/$name.toml" >"$TMP/$name-check.log" 2>&1 \
        || { cat "$TMP/$name-check.log" >&2; die "gateway config $name rejected"; }
    RUST_LOG=warn "$TOOLGATE_BIN" run --config "$TMP/$name.toml" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    pid=$!
    PIDS+=("$pid")
    for _ in $(seq 100); do
        addr="$(sed -n 's#^toolgate listening on http://##p' "$TMP/$name.out" | head -1)"
        [[ -n "$addr" ]] && break
        kill -0 "$pid" 2>/dev/null || { cat "$TMP/$name.err" >&2; die "gateway $name exited at start"; }
        sleep 0.1
    done
    [[ -n "$addr" ]] || { cat "$TMP/$name.err" >&2; die "gateway $name did not print its address"; }
    STARTED_PID="$pid"
    STARTED_ADDR="$addr"
}
start_gateway toolgate
GW_PID="$STARTED_PID"
GW_ADDR="$STARTED_ADDR"
GW="http://$GW_ADDR"

# --- sanity: every target answers correctly before anything is measured -------------------
check_target() { # label url accept expect_injected [host] [cookie] [expected status]
    local label="$1" url="$2" accept="$3" expect="$4" host="${5:-$HOST_HEADER}" cookie="${6:-}" want="${7:-200}"
    local code body count cookie_args=()
    [[ -n "$cookie" ]] && cookie_args=(-H "Cookie: $cookie")
    body="$TMP/check.body"
    code="$(curl -s -o "$body" -w '%{http_code}' --max-time 10 -H "Host: $host" -H "Accept: $accept" \
        "${cookie_args[@]}" "$url")" || die "$label: request failed ($url)"
    [[ "$code" == "$want" ]] || { head -c 500 "$body" >&2; die "$label: HTTP $code from $url, want $want"; }
    [[ "$want" == 200 ]] || return 0
    count="$(grep -o '/\.toolgate/runtime\.' "$body" | wc -l || true)"
    if [[ "$expect" == yes && "$count" != 1 ]]; then die "$label: injected script found $count times, want 1"; fi
    if [[ "$expect" == no && "$count" != 0 ]]; then die "$label: unexpected script injection"; fi
}
check_target "nginx proxy_pass json" "http://127.0.0.1:$PROXY_PORT/api.json" '*/*' no
check_target "gateway json" "$GW/api.json" '*/*' no
check_target "nginx sub_filter html" "http://127.0.0.1:$SUB_PORT/page.html" text/html yes
check_target "gateway html" "$GW/page.html" text/html yes
# The page layer really worked on the measured page: the denied tool is gone, the form is a tool.
grep -q 'name="export_report"' "$TMP/check.body" || die "gateway html: the allowed tool is missing"
grep -q 'delete_report' "$TMP/check.body" && die "gateway html: the denied tool was not removed"
grep -q 'toolname="send_feedback"' "$TMP/check.body" || die "gateway html: the form rule did not apply"

# --- 4b. authenticated gateway(s): OIDC provider fixture, sign in once with curl ------------
if [[ "$AUTH" == 1 ]]; then
    redirect_uris=""
    for store in $AUTH_STORES; do
        redirect_uris+="${redirect_uris:+,}http://localhost:${AUTH_PORT[$store]}/.toolgate/callback"
    done
    OIDC_SECRET="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    (umask 077 && printf '%s\n' "$OIDC_SECRET" >"$TMP/oidc-client-secret")
    CLIENT_ID=bench CLIENT_SECRET="$OIDC_SECRET" REDIRECT_URIS="$redirect_uris" \
        node "$OIDC_DIR/provider.mjs" >"$TMP/oidc.out" 2>"$TMP/oidc.err" &
    OIDC_PID=$!
    PIDS+=("$OIDC_PID")
    ISSUER=""
    for _ in $(seq 150); do
        ISSUER="$(sed -n 's#^oidc-provider listening on \(http://127\.0\.0\.1:[0-9]*\)$#\1#p' "$TMP/oidc.out" | head -1)"
        [[ -n "$ISSUER" ]] && break
        kill -0 "$OIDC_PID" 2>/dev/null || { cat "$TMP/oidc.err" >&2; die "OIDC provider exited at start"; }
        sleep 0.1
    done
    [[ -n "$ISSUER" ]] || { cat "$TMP/oidc.err" >&2; die "OIDC provider did not print its issuer"; }

    for store in $AUTH_STORES; do
        port="${AUTH_PORT[$store]}"
        if [[ "$store" == memory ]]; then store_path=":memory:"; else store_path="$TMP/auth-store"; mkdir -p "$store_path"; fi
        cat >"$TMP/auth-$store.toml" <<EOF
public_url = "http://localhost:$port"

[server]
listen = "127.0.0.1:$port"
admin_listen = "127.0.0.1:0"
log_format = "json"

[sso]
issuer = "$ISSUER"
client_id = "bench"
client_secret = "file:$TMP/oidc-client-secret"
scopes = ["openid", "email", "profile", "groups"]
algorithms = ["ES256"]

[store]
path = "$store_path"

[policy]
file = "$TMP/policy.toml"

[sites.bench]
host = "$AUTH_HOST"
upstream = "http://127.0.0.1:$UP_PORT"

$FORM_RULE
EOF
        start_gateway "auth-$store"
        AUTH_PID[$store]="$STARTED_PID"
        [[ "$STARTED_ADDR" == "127.0.0.1:$port" ]] || die "auth-$store listens on $STARTED_ADDR, want 127.0.0.1:$port"

        # Sign in as a browser would: site page -> gateway login -> provider (auto-login and
        # consent) -> gateway callback -> site handoff -> page. Everything stays on 127.0.0.1.
        jar="$TMP/auth-$store.jar"
        : >"$jar"
        read -r code hops final < <(curl -sS -L --max-redirs 20 --max-time 30 -b "$jar" -c "$jar" \
            --resolve "$AUTH_HOST:$port:127.0.0.1" --resolve "localhost:$port:127.0.0.1" \
            -H 'Accept: text/html' -o "$TMP/signin.body" -w '%{http_code} %{num_redirects} %{url_effective}\n' \
            "http://$AUTH_HOST:$port/page.html") || die "auth-$store: sign-in request failed"
        [[ "$code" == 200 && "$final" == "http://$AUTH_HOST:$port/page.html" ]] \
            || { head -c 500 "$TMP/signin.body" >&2; cat "$TMP/auth-$store.err" >&2; die "auth-$store: sign-in ended with HTTP $code at $final"; }
        AUTH_COOKIE[$store]="$(awk -F'\t' -v h="$AUTH_HOST" '($1 == h || $1 == "#HttpOnly_" h) && $6 == "toolgate" { v = $7 } END { print v }' "$jar")"
        [[ -n "${AUTH_COOKIE[$store]}" ]] || { cat "$jar" >&2; die "auth-$store: no toolgate cookie for $AUTH_HOST in the jar"; }
        cookie="toolgate=${AUTH_COOKIE[$store]}"
        gw_auth="http://127.0.0.1:$port"
        # Without the cookie the gateway must refuse (401 for non-navigations), with it serve.
        check_target "auth-$store json without cookie" "$gw_auth/api.json" '*/*' no "$AUTH_HOST" "" 401
        check_target "auth-$store json" "$gw_auth/api.json" '*/*' no "$AUTH_HOST" "$cookie"
        check_target "auth-$store html" "$gw_auth/page.html" text/html yes "$AUTH_HOST" "$cookie"
        whoami="$(curl -s --max-time 10 -H "Host: $AUTH_HOST" -H "Cookie: $cookie" -w '\n%{http_code}' "$gw_auth/.toolgate/whoami")"
        [[ "${whoami##*$'\n'}" == 200 && "${whoami%$'\n'*}" == *'"alice'* ]] \
            || die "auth-$store: /.toolgate/whoami answered: $whoami"
        AUTH_SIGNIN[$store]="$hops redirects; whoami ${whoami%$'\n'*}"
    done
fi

CLK_TCK="$(getconf CLK_TCK)"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
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

echo
echo "Toolgate vs nginx load benchmark  ($(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo "  gateway:  $TOOLGATE_BIN (RUST_LOG=warn, log_format=json)"
echo "  nginx:    $(nginx -v 2>&1 | sed 's/^nginx version: //'), worker_processes auto, access_log off"
echo "  upstream: nginx static on 127.0.0.1:$UP_PORT (separate process); proxies: nginx on :$PROXY_PORT/:$SUB_PORT, gateway on $GW_ADDR"
echo "  wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (warm-up $WARMUP each); everything shares the same CPUs"
awk -v l="${load_before%% *}" -v c="$(nproc)" 'BEGIN { if (l > 0.5) printf "  WARNING: load average %.2f before the run: other processes compete for the %d CPUs; expect noise\n", l, c }'
echo "  fixtures: JSON ${JSON_BYTES} B, HTML page ${PAGE_BYTES} B, big page ${BIG_FILE_BYTES} B (limit_rate $BIG_RATE)"
if [[ "$AUTH" == 1 ]]; then
    echo "  authenticated: OIDC provider $ISSUER (gateway/tests/oidc, idle during the runs); per store a"
    echo "  gateway with [sso] on 127.0.0.1:PORT, Host $AUTH_HOST, wrk sends the session cookie"
    for store in $AUTH_STORES; do
        echo "    store $store: port ${AUTH_PORT[$store]}, signed in (${AUTH_SIGNIN[$store]})"
    done
fi

# --- 6. the 50 MB streaming check (first, on a fresh gateway process) -----------------------
echo
note "50 MB streaming through the gateway"
read -r up_ttfb up_total up_size < <(curl -s -o /dev/null --max-time 60 \
    -w '%{time_starttransfer} %{time_total} %{size_download}\n' "http://127.0.0.1:$UP_PORT/big.html")
rss_before_kb="$(rss_kb "$GW_PID" VmRSS)"
# Reset the peak-RSS counter so VmHWM covers this transfer only (needs root or ownership).
if { echo 5 >"/proc/$GW_PID/clear_refs"; } 2>/dev/null; then hwm_reset=yes; else hwm_reset=no; fi
: >"$TMP/rss.samples"
(
    while kill -0 "$GW_PID" 2>/dev/null; do
        rss_kb "$GW_PID" VmRSS >>"$TMP/rss.samples" || true
        sleep 0.05
    done
) &
SAMPLER_PID=$!
PIDS+=("$SAMPLER_PID")
big_out="$TMP/big.out"
read -r gw_ttfb gw_total gw_size < <(curl -s -o "$big_out" --max-time 60 \
    -H "Host: $HOST_HEADER" -H 'Accept: text/html' \
    -w '%{time_starttransfer} %{time_total} %{size_download}\n' "$GW/big.html") \
    || die "50 MB fetch through the gateway failed"
kill "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
hwm_kb="$(rss_kb "$GW_PID" VmHWM)"
peak_sampled_kb="$(sort -n "$TMP/rss.samples" | tail -1)"
samples="$(wc -l <"$TMP/rss.samples")"
inj_head="$(head -c 4096 "$big_out" | grep -c '/\.toolgate/runtime\.' || true)"
inj_all="$(grep -o '/\.toolgate/runtime\.' "$big_out" | wc -l || true)"
rm -f "$big_out"

peak_kb=$((hwm_kb > peak_sampled_kb ? hwm_kb : peak_sampled_kb))
[[ "$hwm_reset" == yes ]] || peak_kb="$peak_sampled_kb"
awk -v ut="$up_ttfb" -v utot="$up_total" -v usz="$up_size" -v t="$gw_ttfb" -v tot="$gw_total" -v sz="$gw_size" \
    -v before="$rss_before_kb" -v samp="$peak_sampled_kb" -v hwm="$hwm_kb" -v reset="$hwm_reset" \
    -v n="$samples" -v peak="$peak_kb" -v target="$RSS_TARGET_MB" -v big="$BIG_BYTES" \
    -v ih="$inj_head" -v ia="$inj_all" 'BEGIN {
    printf "  upstream direct:   first byte %6.3f s, total %6.3f s, %d bytes (rate limited)\n", ut, utot, usz
    printf "  through gateway:   first byte %6.3f s, total %6.3f s, %d bytes\n", t, tot, sz
    ok_ttfb = (t < 0.25 * utot && tot >= 0.8 * utot)
    printf "  first byte before upstream finished: %.3f s vs %.3f s (%.0f%% of upstream time)  %s\n", \
        t, utot, 100 * t / utot, ok_ttfb ? "PASS" : "BELOW"
    printf "  size >= 50 MiB (%d): %s\n", big, (sz >= big) ? "PASS" : "FAIL"
    printf "  injected script: %d in first 4 KB (grep -c), %d in whole body: %s\n", ih, ia, \
        (ih == 1 && ia == 1) ? "PASS" : "FAIL"
    printf "  gateway RSS: before %.1f MB, sampled peak %.1f MB (%d samples / 50 ms), VmHWM %.1f MB%s\n", \
        before / 1024, samp / 1024, n, hwm / 1024, reset == "yes" ? " (reset before transfer)" : " (NOT reset: process lifetime)"
    printf "  peak RSS %.1f MB vs target < %d MB: %s\n", peak / 1024, target, (peak / 1024 < target) ? "PASS" : "BELOW"
}'

# --- 5. wrk runs ----------------------------------------------------------------------------
to_ms() { # wrk latency like 635.00us / 1.23ms / 2.01s -> ms
    awk -v v="$1" 'BEGIN {
        if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
        else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f", v * 60000 }
        else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
        else printf "nan" }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A RPS P50 P99 ERRS CPU
run_wrk() { # key round url accept pid [host] [cookie]
    local key="$1" round="$2" url="$3" accept="$4" pid="$5" host="${6:-$HOST_HEADER}" cookie="${7:-}"
    local out="$TMP/wrk-$1-$2.txt" c0 c1 reqs non2xx sock headers
    headers=(-H "Host: $host" -H "Accept: $accept")
    [[ -n "$cookie" ]] && headers+=(-H "Cookie: $cookie")
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" "${headers[@]}" "$url" >/dev/null
    c0="$(tree_cpu_ticks "$pid")"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "${headers[@]}" "$url" >"$out"
    c1="$(tree_cpu_ticks "$pid")"
    RPS[$key]+="$(awk '/^Requests\/sec:/ { print $2 }' "$out") "
    P50[$key]+="$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")") "
    P99[$key]+="$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")") "
    reqs="$(awk '/requests in/ { print $1 }' "$out")"
    non2xx="$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")"
    sock="$(awk -F'[ ,]+' '/Socket errors:/ { print $4 + $6 + $8 + $10 }' "$out")"
    ERRS[$key]=$(( ${ERRS[$key]:-0} + ${non2xx:-0} + ${sock:-0} ))
    # CPU time of the proxy under test (nginx: master + workers; not the upstream) per request
    CPU[$key]+="$(awk -v d=$((c1 - c0)) -v hz="$CLK_TCK" -v n="${reqs:-0}" \
        'BEGIN { if (n > 0) printf "%.1f", d / hz * 1e6 / n; else print "nan" }') "
}
ROUNDS="${ROUNDS:-1}"
echo
note "wrk runs: $ROUNDS round(s), each target: warm-up $WARMUP, then $DURATION (nginx and gateway alternate)"
for round in $(seq 1 "$ROUNDS"); do
    run_wrk json_nginx "$round" "http://127.0.0.1:$PROXY_PORT/api.json" '*/*' "$PROXY_PID"
    run_wrk json_gw "$round" "$GW/api.json" '*/*' "$GW_PID"
    if [[ "$AUTH" == 1 ]]; then
        for store in $AUTH_STORES; do
            run_wrk "json_auth_$store" "$round" "http://127.0.0.1:${AUTH_PORT[$store]}/api.json" '*/*' \
                "${AUTH_PID[$store]}" "$AUTH_HOST" "toolgate=${AUTH_COOKIE[$store]}"
        done
    fi
    run_wrk html_nginx "$round" "http://127.0.0.1:$SUB_PORT/page.html" text/html "$PROXY_PID"
    run_wrk html_gw "$round" "$GW/page.html" text/html "$GW_PID"
    if [[ "$AUTH" == 1 ]]; then
        for store in $AUTH_STORES; do
            run_wrk "html_auth_$store" "$round" "http://127.0.0.1:${AUTH_PORT[$store]}/page.html" text/html \
                "${AUTH_PID[$store]}" "$AUTH_HOST" "toolgate=${AUTH_COOKIE[$store]}"
        done
    fi
done
rss_after_kb="$(rss_kb "$GW_PID" VmRSS)"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

echo
[[ "$ROUNDS" == 1 ]] || echo "(medians over $ROUNDS rounds)"
printf '%-34s %12s %10s %10s %8s %12s\n' "target" "requests/s" "p50 ms" "p99 ms" "errors" "CPU us/req"
printf '%-34s %12s %10s %10s %8s %12s\n' "----------------------------------" "------------" "----------" "----------" "--------" "------------"
row() {
    printf '%-34s %12.0f %10.3f %10.3f %8d %12.1f\n' "$1" "$(median <<<"${RPS[$2]}")" "$(median <<<"${P50[$2]}")" \
        "$(median <<<"${P99[$2]}")" "${ERRS[$2]}" "$(median <<<"${CPU[$2]}")"
}
ratio_row() { # label gw nginx target
    local ratios="" i g n
    read -ra g <<<"${RPS[$2]}"
    read -ra n <<<"${RPS[$3]}"
    for i in "${!g[@]}"; do ratios+="$(awk -v a="${g[$i]}" -v b="${n[$i]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }') "; done
    awk -v r="$(median <<<"$ratios")" -v all="$ratios" -v t="$4" -v l="$1" -v gp="$(median <<<"${P99[$2]}")" \
        -v np="$(median <<<"${P99[$3]}")" -v gc="$(median <<<"${CPU[$2]}")" -v nc="$(median <<<"${CPU[$3]}")" \
        -v rounds="$ROUNDS" 'BEGIN {
        printf "  => %-29s %6.2fx req/s (target >= %.1fx)  %s   [p99 %.2fx, CPU/req %.2fx]\n", \
            l, r, t, (r >= t) ? "PASS" : "BELOW", (np > 0) ? gp / np : 0, (nc > 0) ? gc / nc : 0
        if (rounds > 1) printf "     per-round ratios: %s\n", all
    }'
}
auth_ratio_row() { # label auth-key unauth-key nginx-key: authenticated / unauthenticated gateway, no target
    local ratios="" i a u n
    read -ra a <<<"${RPS[$2]}"
    read -ra u <<<"${RPS[$3]}"
    read -ra n <<<"${RPS[$4]}"
    for i in "${!a[@]}"; do ratios+="$(awk -v x="${a[$i]}" -v y="${u[$i]}" 'BEGIN { printf "%.2f", (y > 0) ? x / y : 0 }') "; done
    local nr=""
    for i in "${!a[@]}"; do nr+="$(awk -v x="${a[$i]}" -v y="${n[$i]}" 'BEGIN { printf "%.2f", (y > 0) ? x / y : 0 }') "; done
    awk -v r="$(median <<<"$ratios")" -v all="$ratios" -v l="$1" -v nr="$(median <<<"$nr")" \
        -v a50="$(median <<<"${P50[$2]}")" -v u50="$(median <<<"${P50[$3]}")" \
        -v a99="$(median <<<"${P99[$2]}")" -v u99="$(median <<<"${P99[$3]}")" \
        -v ac="$(median <<<"${CPU[$2]}")" -v uc="$(median <<<"${CPU[$3]}")" -v rounds="$ROUNDS" 'BEGIN {
        printf "  => %-29s %6.2fx req/s  p50 %.2fx  p99 %.2fx  CPU/req %.2fx  (no target; vs nginx %.2fx req/s)\n", \
            l, r, (u50 > 0) ? a50 / u50 : 0, (u99 > 0) ? a99 / u99 : 0, (uc > 0) ? ac / uc : 0, nr
        if (rounds > 1) printf "     per-round req/s ratios: %s\n", all
    }'
}
row "JSON  nginx proxy_pass" json_nginx
row "JSON  toolgate (pass-through)" json_gw
ratio_row "JSON gateway/proxy_pass" json_gw json_nginx 1.0
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do row "JSON  toolgate SSO ($store store)" "json_auth_$store"; done
    for store in $AUTH_STORES; do auth_ratio_row "JSON SSO($store)/no-SSO" "json_auth_$store" json_gw json_nginx; done
fi
row "HTML  nginx sub_filter" html_nginx
row "HTML  toolgate (inject)" html_gw
ratio_row "HTML gateway/sub_filter" html_gw html_nginx 0.8
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do row "HTML  toolgate SSO ($store store)" "html_auth_$store"; done
    for store in $AUTH_STORES; do auth_ratio_row "HTML SSO($store)/no-SSO" "html_auth_$store" html_gw html_nginx; done
fi
echo
echo "  errors = non-2xx responses + socket errors; CPU us/req = CPU time of the proxy process(es)"
echo "  under test (not the upstream, not wrk) divided by requests; gateway RSS after load: $(awk -v k="$rss_after_kb" 'BEGIN { printf "%.1f MB", k / 1024 }')"
echo "  nginx runs with access_log off; the gateway with RUST_LOG=warn (no per-request log lines)."
echo "  load average before: $load_before, after: $load_after"
for key in "${!ERRS[@]}"; do
    [[ "${ERRS[$key]}" == 0 ]] || echo "  WARNING: $key had ${ERRS[$key]} errors (see wrk output; KEEP=1 keeps it)"
done
exit 0
