#!/usr/bin/env bash
# Toolgate load benchmark: the gateway against nginx, in the same run, on loopback.
#
#   bench/load.sh [proxy] [relay]      sections to run (default: both, relay first)
#
# `relay` is bench/relay.sh: the OpenAI-compatible relay against the stand-in model called
# directly (issue 7: adds <= 1 ms at p99); see that file for its environment. `proxy` is the rest.
#
# Measures (docs/design.md §10):
#   * non-HTML pass-through (small JSON)        gateway vs nginx proxy_pass   target >= 1.0x req/s
#   * the same with an access log on both sides: the gateway at its default RUST_LOG=info (one
#     `answered` line a request) vs nginx with its default access_log, both to a file   no target
#   * 20 KB HTML page with script injection     gateway vs nginx sub_filter   target >= 0.8x req/s
#   * the same page compressed on both sides (wrk sends Accept-Encoding: gzip): the gateway
#     compressing in the stream vs nginx sub_filter + gzip on, same gzip level    no target yet
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
#   GZIP_LEVEL     gzip level of both sides in the compressed row: nginx gzip_comp_level and the
#                  gateway's compression.gzip_level (default 4, the gateway's default)
#   ROUNDS         rounds of the four wrk runs, nginx and gateway alternating; the table shows
#                  medians (default 1)
#   KEEP=1         keep the temp dir (configs, fixtures, logs) and print its path
#   AUTH           1 (default): also run the authenticated gateway(s); 0: skip (no node needed)
#   AUTH_STORES    store(s) for the authenticated gateways: "memory", "dir", "postgres" (a
#                  PostgreSQL cluster of the run's own, Debian's postgresql), "replicas" (two
#                  gateways on that database, wrk's connections spread over both, the JSON
#                  route only; with "postgres" too, a "2 replicas/1" row); default "memory dir"
#                  (one gateway process per store, all measured)
#   PERF           wrk runs to profile with `perf record` while they are measured, by key
#                  (json_gw, html_gw, html_gz_gw; space-separated); needs perf. Build with
#                  `cargo build --profile profiling -p gateway --bin toolgate` for line tables.
#   PERF_DIR       where the profiles go, <key>-<round>.data (default: ./perf)
#
# It is a benchmark, not a test: it exits 0 when a ratio is below target (it prints BELOW).
# It exits non-zero only when it cannot run (missing tools, a server that does not start,
# a target that answers wrongly).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_NAME=load.sh
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
CONNECTIONS="${CONNECTIONS:-64}"
THREADS="${THREADS:-2}"
BIG_RATE="${BIG_RATE:-20m}"
GZIP_LEVEL="${GZIP_LEVEL:-4}"
AUTH="${AUTH:-1}"
AUTH_STORES="${AUTH_STORES:-memory dir}"
AUTH_HOST="bench.localhost"
HOST_HEADER="bench.test"
BIG_BYTES=$((50 * 1024 * 1024))
RSS_TARGET_MB=64

RUN_PROXY=0
RUN_RELAY=0
(($#)) || set -- proxy relay
for section in "$@"; do
    case "$section" in
        proxy) RUN_PROXY=1 ;;
        relay) RUN_RELAY=1 ;;
        *) die "unknown section '$section' (proxy, relay)" ;;
    esac
done

# --- 1. the gateway binary, then the relay section (its own processes, before any other load) --
gateway_bin
if [[ "$RUN_RELAY" == 1 ]]; then
    TOOLGATE_BIN="$TOOLGATE_BIN" DURATION="$DURATION" WARMUP="$WARMUP" ROUNDS="${ROUNDS:-1}" KEEP="$KEEP" \
        "$ROOT/bench/relay.sh" || die "the relay section failed"
    [[ "$RUN_PROXY" == 1 ]] || exit 0
    echo
fi

# --- 1b. the proxy section: tools ------------------------------------------------------------
install_missing nginx=nginx-light wrk=wrk
for tool in nginx wrk curl awk ss; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done
nginx -V 2>&1 | grep -q http_sub_module || die "this nginx lacks http_sub_module (sub_filter)"
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do
        [[ "$store" =~ ^(memory|dir|postgres|replicas)$ ]] \
            || die "AUTH_STORES: unknown store '$store' (memory, dir, postgres, replicas)"
    done
    oidc_fixture_ready
fi

TMP="$(mktemp -d /tmp/toolgate-bench.XXXXXX)"
chmod 755 "$TMP"

UP_PORT="$(free_port)"
PROXY_PORT="$(free_port)"
SUB_PORT="$(free_port)"
GZIP_PORT="$(free_port)"
LOG_PORT="$(free_port)"
declare -A AUTH_PORT AUTH_PID AUTH_COOKIE AUTH_SIGNIN
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do AUTH_PORT[$store]="$(free_port)"; done
    # "replicas": a second gateway on the same database, signed in through the first.
    [[ " $AUTH_STORES " == *" replicas "* ]] && AUTH_PORT[replicas_b]="$(free_port)"
fi

wait_http() { # url [host header] : waits up to 10 s for any HTTP answer
    local url="$1"
    for _ in $(seq 100); do
        if curl -s -o /dev/null --max-time 1 -H "Host: $HOST_HEADER" "$url"; then return 0; fi
        sleep 0.1
    done
    return 1
}

# --- 2. fixtures and 3. nginx configurations (bench/proxy-fixtures.sh) -----------------------
# shellcheck source=bench/proxy-fixtures.sh
source "$ROOT/bench/proxy-fixtures.sh"

# --- 3. nginx: start ------------------------------------------------------------------------
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

[compression]
gzip_level = $GZIP_LEVEL

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
start_gateway() { # name [RUST_LOG]: runs $TMP/<name>.toml; sets STARTED_PID and STARTED_ADDR
    local name="$1" log_level="${2:-warn}" addr="" pid
    "$TOOLGATE_BIN" check-config "$TMP/$name.toml" >"$TMP/$name-check.log" 2>&1 \
        || { cat "$TMP/$name-check.log" >&2; die "gateway config $name rejected"; }
    : >"$TMP/$name.out"
    RUST_LOG="$log_level" "$TOOLGATE_BIN" run --config "$TMP/$name.toml" >"$TMP/$name.out" 2>"$TMP/$name.err" &
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
# The same gateway at the default log level, its log (standard error) going to a file.
mkdir -p "$TMP/store-logged"
sed "s#^path = \"$TMP/store\"#path = \"$TMP/store-logged\"#" "$TMP/toolgate.toml" >"$TMP/toolgate-logged.toml"
start_gateway toolgate-logged info
GW_LOGGED_PID="$STARTED_PID"
GW_LOGGED="http://$STARTED_ADDR"

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
check_target "nginx proxy_pass json, access log" "http://127.0.0.1:$LOG_PORT/api.json" '*/*' no
check_target "gateway json, RUST_LOG=info" "$GW_LOGGED/api.json" '*/*' no
check_target "nginx sub_filter html" "http://127.0.0.1:$SUB_PORT/page.html" text/html yes
check_target "gateway html" "$GW/page.html" text/html yes
# The page layer really worked on the measured page: the denied tool is gone, the form is a tool.
grep -q 'name="export_report"' "$TMP/check.body" || die "gateway html: the allowed tool is missing"
grep -q 'delete_report' "$TMP/check.body" && die "gateway html: the denied tool was not removed"
grep -q 'toolname="send_feedback"' "$TMP/check.body" || die "gateway html: the form rule did not apply"
check_gzip_target() { # label url: gzip on the wire, decoding to the page with the script once; prints the wire size
    local label="$1" url="$2" wire count
    wire="$(curl -s -o "$TMP/check.gz" -D "$TMP/check.headers" -w '%{size_download}' --max-time 10 \
        -H "Host: $HOST_HEADER" -H 'Accept: text/html' -H 'Accept-Encoding: gzip' "$url")" \
        || die "$label: request failed ($url)"
    grep -qi '^content-encoding: *gzip' "$TMP/check.headers" || die "$label: the page is not gzip on the wire"
    count="$(gzip -dc <"$TMP/check.gz" | grep -o '/\.toolgate/runtime\.' | wc -l || true)"
    [[ "$count" == 1 ]] || die "$label: injected script found $count times in the decoded page, want 1"
    echo "$wire"
}
GZIP_WIRE_NGINX="$(check_gzip_target "nginx sub_filter+gzip html" "http://127.0.0.1:$GZIP_PORT/page.html")" || exit 1
GZIP_WIRE_GW="$(check_gzip_target "gateway html, gzip" "$GW/page.html")" || exit 1

# --- 4a. the runtime script on the wire: its size in each content coding (issue 19: br <= 45 KB)
RUNTIME_BR_BUDGET=45000
runtime_wire_sizes() { # base_url host path: prints the body bytes for identity, gzip and br
    local base="$1" host="$2" path="$3" coding answer sizes=()
    for coding in identity gzip br; do
        answer="$(curl -sf -o /dev/null --max-time 10 -H "Host: $host" -H "Accept-Encoding: $coding" \
            -w '%{size_download} %header{content-encoding}' "$base$path")" \
            || die "runtime script ($coding): request failed ($base$path)"
        [[ "${answer#* }" == "$coding" || ("$coding" == identity && "${answer#* }" == "") ]] \
            || die "runtime script: asked for $coding, got Content-Encoding '${answer#* }'"
        sizes+=("${answer%% *}")
    done
    echo "${sizes[*]}"
}
RUNTIME_PATH="$(grep -o '/\.toolgate/runtime\.[0-9a-f]*\.js' "$TMP/check.body" | head -1)" \
    || die "gateway html: no runtime script path in the page"
runtime_sizes="$(runtime_wire_sizes "$GW" "$HOST_HEADER" "$RUNTIME_PATH")" || exit 1
read -r RUNTIME_IDENTITY RUNTIME_GZIP RUNTIME_BR <<<"$runtime_sizes"

# --- 4b. authenticated gateway(s): OIDC provider fixture, sign in once with curl ------------
if [[ "$AUTH" == 1 ]]; then
    redirect_uris=""
    for store in $AUTH_STORES; do
        redirect_uris+="${redirect_uris:+,}http://localhost:${AUTH_PORT[$store]}/.toolgate/callback"
    done
    OIDC_SECRET="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    (umask 077 && printf '%s\n' "$OIDC_SECRET" >"$TMP/oidc-client-secret")
    start_oidc oidc bench "$OIDC_SECRET" "$redirect_uris"
    [[ " $AUTH_STORES " =~ \ (postgres|replicas)\  ]] && start_postgres pg

    for store in $AUTH_STORES; do
        port="${AUTH_PORT[$store]}"
        case "$store" in
            memory) store_path=":memory:" ;;
            dir) store_path="$TMP/auth-store"; mkdir -p "$store_path" ;;
            *) store_path=postgres ;;
        esac
        if [[ "$store" == replicas ]]; then
            # The second replica: the same database and keys, its own port; nobody signs in on it.
            { signed_in_gateway_config "${AUTH_PORT[replicas_b]}" postgres "bench" "$TMP/oidc-client-secret"; cat <<EOF

[sites.bench]
host = "$AUTH_HOST"
upstream = "http://127.0.0.1:$UP_PORT"

$FORM_RULE
EOF
            } >"$TMP/auth-replicas_b.toml"
            start_gateway auth-replicas_b
            AUTH_PID[replicas_b]="$STARTED_PID"
        fi
        { signed_in_gateway_config "$port" "$store_path" "bench" "$TMP/oidc-client-secret"; cat <<EOF

[sites.bench]
host = "$AUTH_HOST"
upstream = "http://127.0.0.1:$UP_PORT"

$FORM_RULE
EOF
        } >"$TMP/auth-$store.toml"
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
        if [[ "$store" == replicas ]]; then
            # No sticky sessions: the session signed in through the first replica serves on the second.
            check_target "auth-replicas_b json" "http://127.0.0.1:${AUTH_PORT[replicas_b]}/api.json" '*/*' no \
                "$AUTH_HOST" "$cookie"
        fi
    done
fi

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "Toolgate vs nginx load benchmark  ($(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo "  gateway:  $TOOLGATE_BIN (RUST_LOG=warn, log_format=json)"
echo "  nginx:    $(nginx -v 2>&1 | sed 's/^nginx version: //'), worker_processes auto, access_log off (but the JSON+log row)"
echo "  upstream: nginx static on 127.0.0.1:$UP_PORT (separate process); proxies: nginx on :$PROXY_PORT/:$SUB_PORT/:$GZIP_PORT, gateway on $GW_ADDR"
echo "  wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (warm-up $WARMUP each); everything shares the same CPUs"
awk -v l="${load_before%% *}" -v c="$(nproc)" 'BEGIN { if (l > 0.5) printf "  WARNING: load average %.2f before the run: other processes compete for the %d CPUs; expect noise\n", l, c }'
echo "  fixtures: JSON ${JSON_BYTES} B, HTML page ${PAGE_BYTES} B, big page ${BIG_FILE_BYTES} B (limit_rate $BIG_RATE)"
echo "  compressed row: gzip level $GZIP_LEVEL on both sides; the page on the wire: nginx ${GZIP_WIRE_NGINX} B, gateway ${GZIP_WIRE_GW} B"
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
declare -A RPS P50 P99 ERRS CPU
# run_wrk_spread key round path accept host cookie: the client's connections spread over the two
# replicas (half each, at once); requests/s summed, p99 the worse of the two, CPU of both.
run_wrk_spread() {
    local key="$1" round="$2" path="$3" accept="$4" host="$5" cookie="$6" half=$((CONNECTIONS / 2))
    local a="http://127.0.0.1:${AUTH_PORT[replicas]}$path" b="http://127.0.0.1:${AUTH_PORT[replicas_b]}$path"
    local headers=(-H "Host: $host" -H "Accept: $accept" -H "Cookie: $cookie") c0 c1 reqs
    local other
    wrk -t"$THREADS" -c"$half" -d"$WARMUP" "${headers[@]}" "$a" >/dev/null &
    other=$!
    wrk -t"$THREADS" -c"$half" -d"$WARMUP" "${headers[@]}" "$b" >/dev/null
    wait "$other"
    c0=$(( $(tree_cpu_ticks "${AUTH_PID[replicas]}") + $(tree_cpu_ticks "${AUTH_PID[replicas_b]}") ))
    wrk -t"$THREADS" -c"$half" -d"$DURATION" --latency "${headers[@]}" "$a" >"$TMP/wrk-$key-$round-a.txt" &
    other=$!
    wrk -t"$THREADS" -c"$half" -d"$DURATION" --latency "${headers[@]}" "$b" >"$TMP/wrk-$key-$round-b.txt"
    wait "$other"
    c1=$(( $(tree_cpu_ticks "${AUTH_PID[replicas]}") + $(tree_cpu_ticks "${AUTH_PID[replicas_b]}") ))
    local out_a="$TMP/wrk-$key-$round-a.txt" out_b="$TMP/wrk-$key-$round-b.txt"
    RPS[$key]+="$(cat "$out_a" "$out_b" | awk '/^Requests\/sec:/ { s += $2 } END { print s }') "
    P50[$key]+="$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out_a")") "
    P99[$key]+="$(printf '%s\n%s\n' "$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out_a")")" \
        "$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out_b")")" | sort -g | tail -1) "
    reqs="$(cat "$out_a" "$out_b" | awk '/requests in/ { s += $1 } END { print s }')"
    ERRS[$key]=$(( ${ERRS[$key]:-0} + $(cat "$out_a" "$out_b" | awk '/Non-2xx or 3xx responses:/ { s += $NF } END { print s + 0 }') ))
    CPU[$key]+="$(awk -v d=$((c1 - c0)) -v hz="$CLK_TCK" -v n="${reqs:-0}" \
        'BEGIN { if (n > 0) printf "%.1f", d / hz * 1e6 / n; else print "nan" }') "
}
run_wrk() { # key round url accept pid [host] [cookie] [accept-encoding]
    local key="$1" round="$2" url="$3" accept="$4" pid="$5" host="${6:-$HOST_HEADER}" cookie="${7:-}" encoding="${8:-}"
    local out="$TMP/wrk-$1-$2.txt" c0 c1 reqs non2xx sock headers
    headers=(-H "Host: $host" -H "Accept: $accept")
    [[ -n "$cookie" ]] && headers+=(-H "Cookie: $cookie")
    [[ -n "$encoding" ]] && headers+=(-H "Accept-Encoding: $encoding")
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" "${headers[@]}" "$url" >/dev/null
    local perf_pid=""
    if [[ " ${PERF:-} " == *" $key "* ]]; then
        perf record -q -F 499 --call-graph dwarf,32768 -p "$pid" -o "$PERF_DIR/$key-$round.data" \
            2>>"$PERF_DIR/perf.log" &
        perf_pid=$!
        sleep 0.2
    fi
    c0="$(tree_cpu_ticks "$pid")"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "${headers[@]}" "$url" >"$out"
    c1="$(tree_cpu_ticks "$pid")"
    if [[ -n "$perf_pid" ]]; then
        kill -INT "$perf_pid"
        wait "$perf_pid" || true
    fi
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
if [[ -n "${PERF:-}" ]]; then
    command -v perf >/dev/null || die "PERF is set but perf is missing (Debian: linux-perf)"
    PERF_DIR="$(realpath -m "${PERF_DIR:-perf}")"
    mkdir -p "$PERF_DIR"
    note "profiling $PERF into $PERF_DIR (its CPU figures include perf's own cost)"
fi
echo
note "wrk runs: $ROUNDS round(s), each target: warm-up $WARMUP, then $DURATION (nginx and gateway alternate)"
for round in $(seq 1 "$ROUNDS"); do
    run_wrk json_nginx "$round" "http://127.0.0.1:$PROXY_PORT/api.json" '*/*' "$PROXY_PID"
    run_wrk json_gw "$round" "$GW/api.json" '*/*' "$GW_PID"
    run_wrk json_log_nginx "$round" "http://127.0.0.1:$LOG_PORT/api.json" '*/*' "$PROXY_PID"
    run_wrk json_log_gw "$round" "$GW_LOGGED/api.json" '*/*' "$GW_LOGGED_PID"
    if [[ "$AUTH" == 1 ]]; then
        for store in $AUTH_STORES; do
            if [[ "$store" == replicas ]]; then
                run_wrk_spread json_auth_replicas "$round" /api.json '*/*' "$AUTH_HOST" "toolgate=${AUTH_COOKIE[$store]}"
                continue
            fi
            run_wrk "json_auth_$store" "$round" "http://127.0.0.1:${AUTH_PORT[$store]}/api.json" '*/*' \
                "${AUTH_PID[$store]}" "$AUTH_HOST" "toolgate=${AUTH_COOKIE[$store]}"
        done
    fi
    run_wrk html_nginx "$round" "http://127.0.0.1:$SUB_PORT/page.html" text/html "$PROXY_PID"
    run_wrk html_gw "$round" "$GW/page.html" text/html "$GW_PID"
    run_wrk html_gz_nginx "$round" "http://127.0.0.1:$GZIP_PORT/page.html" text/html "$PROXY_PID" "$HOST_HEADER" "" gzip
    run_wrk html_gz_gw "$round" "$GW/page.html" text/html "$GW_PID" "$HOST_HEADER" "" gzip
    if [[ "$AUTH" == 1 ]]; then
        for store in $AUTH_STORES; do
            [[ "$store" == replicas ]] && continue # the replicas row is the JSON route's
            run_wrk "html_auth_$store" "$round" "http://127.0.0.1:${AUTH_PORT[$store]}/page.html" text/html \
                "${AUTH_PID[$store]}" "$AUTH_HOST" "toolgate=${AUTH_COOKIE[$store]}"
        done
    fi
done
# The logged rows measured logging: one line a request on each side.
LOG_LINES_GW="$(grep -c '"message":"answered"' "$TMP/toolgate-logged.err" || true)"
LOG_LINES_NGINX="$(wc -l <"$TMP/proxy-access.log")"
(( LOG_LINES_GW > 0 && LOG_LINES_NGINX > 0 )) \
    || die "the access-log rows wrote no lines (gateway $LOG_LINES_GW, nginx $LOG_LINES_NGINX)"
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
ratio_row() { # label gw nginx target ("none": the ratio alone)
    local ratios="" i g n
    read -ra g <<<"${RPS[$2]}"
    read -ra n <<<"${RPS[$3]}"
    for i in "${!g[@]}"; do ratios+="$(awk -v a="${g[$i]}" -v b="${n[$i]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }') "; done
    awk -v r="$(median <<<"$ratios")" -v all="$ratios" -v t="$4" -v l="$1" -v gp="$(median <<<"${P99[$2]}")" \
        -v np="$(median <<<"${P99[$3]}")" -v gc="$(median <<<"${CPU[$2]}")" -v nc="$(median <<<"${CPU[$3]}")" \
        -v rounds="$ROUNDS" 'BEGIN {
        if (t == "none") printf "  => %-29s %6.2fx req/s (no target)          [p99 %.2fx, CPU/req %.2fx]\n", \
            l, r, (np > 0) ? gp / np : 0, (nc > 0) ? gc / nc : 0
        else printf "  => %-29s %6.2fx req/s (target >= %.1fx)  %s   [p99 %.2fx, CPU/req %.2fx]\n", \
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
row "JSON+log  nginx proxy_pass, access_log" json_log_nginx
row "JSON+log  toolgate, RUST_LOG=info" json_log_gw
ratio_row "JSON+log gateway/proxy_pass" json_log_gw json_log_nginx none
if [[ "$AUTH" == 1 ]]; then
    for store in $AUTH_STORES; do row "JSON  toolgate SSO ($store store)" "json_auth_$store"; done
    for store in $AUTH_STORES; do auth_ratio_row "JSON SSO($store)/no-SSO" "json_auth_$store" json_gw json_nginx; done
    if [[ " $AUTH_STORES " == *" replicas "* && " $AUTH_STORES " == *" postgres "* ]]; then
        ratio_row "JSON 2 replicas/1 (postgres)" json_auth_replicas json_auth_postgres none
    fi
fi
row "HTML  nginx sub_filter" html_nginx
row "HTML  toolgate (inject)" html_gw
ratio_row "HTML gateway/sub_filter" html_gw html_nginx 0.8
row "HTML+gzip  nginx sub_filter+gzip" html_gz_nginx
row "HTML+gzip  toolgate (gzip)" html_gz_gw
ratio_row "HTML+gzip gateway/nginx" html_gz_gw html_gz_nginx none
if [[ "$AUTH" == 1 ]]; then
    for store in ${AUTH_STORES/replicas/}; do row "HTML  toolgate SSO ($store store)" "html_auth_$store"; done
    for store in ${AUTH_STORES/replicas/}; do auth_ratio_row "HTML SSO($store)/no-SSO" "html_auth_$store" html_gw html_nginx; done
fi
echo
echo "  errors = non-2xx responses + socket errors; CPU us/req = CPU time of the proxy process(es)"
echo "  under test (not the upstream, not wrk) divided by requests; gateway RSS after load: $(awk -v k="$rss_after_kb" 'BEGIN { printf "%.1f MB", k / 1024 }')"
echo "  nginx runs with access_log off and the gateway with RUST_LOG=warn (no per-request log lines),"
echo "  except the JSON+log rows: nginx's default access_log and the gateway's default RUST_LOG=info,"
echo "  each to a file ($LOG_LINES_NGINX and $LOG_LINES_GW lines written)."
awk -v i="$RUNTIME_IDENTITY" -v g="$RUNTIME_GZIP" -v b="$RUNTIME_BR" -v max="$RUNTIME_BR_BUDGET" 'BEGIN {
    printf "  runtime script on the wire: identity %d B, gzip %d B, br %d B (br target <= %d B: %s)\n", \
        i, g, b, max, (b <= max) ? "PASS" : "ABOVE" }'
echo "  load average before: $load_before, after: $load_after"
for key in "${!ERRS[@]}"; do
    [[ "${ERRS[$key]}" == 0 ]] || echo "  WARNING: $key had ${ERRS[$key]} errors (see wrk output; KEEP=1 keeps it)"
done
exit 0
