#!/usr/bin/env bash
# Toolgate relay benchmark (issue 7): what the OpenAI-compatible endpoint adds over calling the
# model server directly. Target: the relay adds <= 1 ms at p99 (same run, same concurrency).
#
# The model server is the demo stand-in (`toolgate demo-model`, deterministic, loopback). wrk
# sends the same small chat completion (two tools, a system message with an e-mail address) to
#   * the stand-in directly:   POST http://MODEL/v1/chat/completions
#   * the gateway:             POST http://localhost:PORT/v1/chat/completions with
#                              Authorization: Bearer <ID token of alice> and X-Toolgate-Site: bench
# whole and streamed (`"stream": true`), alternating direct and gateway. Through the gateway every
# request is a real user call: bearer verified, site scope, policy filtering of the tools (one is
# denied), redaction of the messages, per-user limits, audit records (catalog exposure and model
# call, fsynced to an on-disk store), metrics. The bearer token is the ID token of a real
# authorization-code flow (PKCE) at the OIDC provider fixture (gateway/tests/oidc): its `aud` is
# the client id, which is what the gateway accepts by default (`sso.audiences`).
#
# Run alone (`bench/relay.sh`) or through `bench/load.sh relay`. Environment:
#   TOOLGATE_BIN       gateway binary (default: cargo build --release -p gateway, CARGO_TARGET_DIR)
#   DURATION, WARMUP   wrk run and warm-up per target (default 10s, 2s)
#   RELAY_CONNECTIONS  concurrency levels, each measured on both targets (default "1 8")
#   RELAY_MODES        "whole stream" (default), or one of them
#   RELAY_STORES       one gateway process per store, each measured against the same stand-in:
#                      "dir" (default: audit records fsynced to a sled directory) and/or
#                      "memory" (`:memory:`, no disk: shows what the disk costs)
#   ROUNDS             rounds; tables show medians (default 1)
#   SOAK_MINUTES       after the tables, keep relaying (whole, c=8) through the first store's
#                      gateway for this many minutes, printing its RSS every minute (default 0:
#                      no soak; 30 is the memory soak of docs/operations.md)
#   SOAK_DELAY_MS      each soak connection waits this long between requests (default 40:
#                      about 200 requests/s, 400 audit records/s, 35 million a day, far above a
#                      real deployment); 0: as fast as the gateway goes, where RSS grows with
#                      the store (sled keeps about 15 bytes per stored record in memory)
#   STATUSES=1         count every answer that is not 2xx by status and print the first body of
#                      each status under its wrk output (wrk then reads every answer in Lua,
#                      which costs CPU the measured processes share: a diagnosis, not a row)
#   KEEP=1             keep the temp dir (configs, logs, raw wrk output)
# Exits 0 when the target is missed (prints ABOVE); non-zero only when it cannot run or a target
# answers wrongly.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_NAME=relay.sh
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-2s}"
ROUNDS="${ROUNDS:-1}"
RELAY_CONNECTIONS="${RELAY_CONNECTIONS:-1 8}"
RELAY_MODES="${RELAY_MODES:-whole stream}"
RELAY_STORES="${RELAY_STORES:-dir}"
SOAK_MINUTES="${SOAK_MINUTES:-0}"
SOAK_DELAY_MS="${SOAK_DELAY_MS:-40}"
STATUSES="${STATUSES:-0}"
TARGET_MS=1
SITE=bench

install_missing wrk=wrk
for tool in wrk curl awk ss; do command -v "$tool" >/dev/null 2>&1 || die "$tool not found"; done
for mode in $RELAY_MODES; do [[ "$mode" == whole || "$mode" == stream ]] || die "RELAY_MODES: unknown '$mode'"; done
for store in $RELAY_STORES; do
    [[ "$store" == dir || "$store" == memory ]] || die "RELAY_STORES: unknown store '$store' (dir, memory)"
done
oidc_fixture_ready
gateway_bin
TMP="$(mktemp -d /tmp/toolgate-relay.XXXXXX)"

# --- the model server: the stand-in alone --------------------------------------------------------
: >"$TMP/model.out"
"$TOOLGATE_BIN" demo-model --port 0 >"$TMP/model.out" 2>"$TMP/model.err" &
MODEL_PID=$!
PIDS+=("$MODEL_PID")
MODEL=""
for _ in $(seq 100); do
    MODEL="$(sed -n 's#^toolgate demo model listening on http://##p' "$TMP/model.out" | head -1)"
    [[ -n "$MODEL" ]] && break
    kill -0 "$MODEL_PID" 2>/dev/null || { cat "$TMP/model.err" >&2; die "the stand-in model exited at start"; }
    sleep 0.1
done
[[ -n "$MODEL" ]] || die "the stand-in model did not print its address"

# --- the identity provider and alice's ID token ----------------------------------------------
CLIENT=bench-relay
SECRET="relay-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077 && printf '%s\n' "$SECRET" >"$TMP/client-secret")
REDIRECT="http://127.0.0.1:9/bench/callback" # never contacted: the flow stops at its redirect
start_oidc oidc "$CLIENT" "$SECRET" "$REDIRECT"
js() { node -e 'const a = process.argv.slice(2); const r = eval(process.argv[1]); if (r !== undefined) console.log(r);' -- "$@"; }
# A day-long ID token, so long runs do not outlive it.
curl -sf -o /dev/null --max-time 10 -X POST -H 'content-type: application/json' \
    --data '{"IdToken": 86400}' "$ISSUER/test/ttl" || die "the OIDC fixture refused POST /test/ttl"
id_token() { # authorization code flow with PKCE for alice, redirects followed by hand
    local verifier challenge url location code jar="$TMP/oidc.jar" answer
    verifier="$(js 'require("node:crypto").randomBytes(32).toString("base64url")')"
    challenge="$(js 'require("node:crypto").createHash("sha256").update(a[0]).digest("base64url")' "$verifier")"
    url="$ISSUER/auth?$(js 'new URLSearchParams({client_id: a[0], response_type: "code", redirect_uri: a[1],
        scope: "openid email profile groups", state: "relay", nonce: "relay", code_challenge: a[2],
        code_challenge_method: "S256"}).toString()' "$CLIENT" "$REDIRECT" "$challenge")"
    for _ in $(seq 10); do
        location="$(curl -sS --max-time 10 -b "$jar" -c "$jar" -o /dev/null -w '%{redirect_url}' "$url")"
        [[ -n "$location" ]] || die "sign-in at the OIDC fixture stopped without a redirect at $url"
        [[ "$location" == "$REDIRECT"* ]] && break
        url="$location"
    done
    code="$(js 'new URL(a[0]).searchParams.get("code") ?? ""' "$location")"
    [[ -n "$code" ]] || die "the OIDC fixture's flow ended without a code"
    answer="$(curl -sS --max-time 10 -u "$CLIENT:$SECRET" --data-urlencode grant_type=authorization_code \
        --data-urlencode "code=$code" --data-urlencode "redirect_uri=$REDIRECT" \
        --data-urlencode "code_verifier=$verifier" "$ISSUER/token")"
    js 'JSON.parse(a[0]).id_token ?? ""' "$answer"
}
TOKEN="$(id_token)"
[[ "$TOKEN" == *.*.* ]] || die "no ID token from the OIDC fixture"

# --- the gateway: [sso] for bearers, [llm] = the stand-in, a policy that filters and redacts ---
cat >"$TMP/policy.toml" <<'EOF'
[[rule]]
id = "relay"
tools.allow = ["export_*"]
tools.deny = ["delete_*"]
redact = ["email"]
EOF
declare -A GW_PID GW_URL GW_HOST GW_ADMIN
start_gateway() { # store: one gateway process with that store
    local store="$1" port store_path=":memory:" admin=""
    port="$(free_port)"
    [[ "$store" == dir ]] && { store_path="$TMP/store-dir"; mkdir -p "$store_path"; }
    { signed_in_gateway_config "$port" "$store_path" "$CLIENT" "$TMP/client-secret"; cat <<EOF

[llm]
base_url = "http://$MODEL/v1"
model = "toolgate-demo-stand-in"

# One user, many connections: the per-user limits must not be what is measured.
[agent]
max_concurrent_turns = 1000
tokens_per_hour = 1000000000000

[sites.$SITE]
host = "bench.test"
upstream = "http://127.0.0.1:9"
EOF
    } >"$TMP/relay-$store.toml"
    "$TOOLGATE_BIN" check-config "$TMP/relay-$store.toml" >"$TMP/check.log" 2>&1 \
        || { cat "$TMP/check.log" >&2; die "relay config ($store) rejected"; }
    : >"$TMP/gateway-$store.out"
    RUST_LOG=warn "$TOOLGATE_BIN" run --config "$TMP/relay-$store.toml" \
        >"$TMP/gateway-$store.out" 2>"$TMP/gateway-$store.err" &
    GW_PID[$store]=$!
    PIDS+=("$!")
    for _ in $(seq 100); do
        admin="$(sed -n 's#^toolgate admin on http://##p' "$TMP/gateway-$store.out" | head -1)"
        [[ -n "$admin" ]] && break
        kill -0 "${GW_PID[$store]}" 2>/dev/null \
            || { cat "$TMP/gateway-$store.err" >&2; die "the gateway ($store) exited at start"; }
        sleep 0.1
    done
    [[ -n "$admin" ]] || die "the gateway ($store) did not print its addresses"
    GW_URL[$store]="http://127.0.0.1:$port"
    GW_HOST[$store]="localhost:$port"
    GW_ADMIN[$store]="$admin"
}
for store in $RELAY_STORES; do start_gateway "$store"; done

status_census_lua() { # wrk hooks: non-2xx answers by status, with the first body of each
    cat <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {}; bodies = {} end
function response(status, headers, body)
    if status < 200 or status > 299 then
        statuses[status] = (statuses[status] or 0) + 1
        if bodies[status] == nil then bodies[status] = string.sub(body or "", 1, 300) end
    end
end
function done(summary, latency, requests)
    for _, thread in ipairs(threads) do
        for status, count in pairs(thread:get("statuses")) do
            io.write(string.format("status %d: %d  first body: %s\n", status, count, thread:get("bodies")[status]))
        end
    end
end
LUA
}

# --- the request: one allowed and one denied tool, an e-mail address to redact ---------------
body() { # stream: true|false
    printf '{"model":"toolgate-demo-stand-in","messages":[{"role":"system","content":"You help dana@corp.example with the quarterly report."},{"role":"user","content":"Hello, what can you do?"}],"tools":[{"type":"function","function":{"name":"export_report","description":"Export this report as CSV","parameters":{"type":"object","properties":{"region":{"type":"number","description":"Region number"}},"required":["region"]}}},{"type":"function","function":{"name":"delete_report","description":"Delete this report","parameters":{"type":"object","properties":{"confirm":{"type":"boolean"}}}}}],"stream":%s}' "$1"
}
for mode in whole stream; do
    flag=false
    [[ "$mode" == stream ]] && flag=true
    body "$flag" >"$TMP/body-$mode.json"
    { echo 'wrk.method = "POST"'; echo 'wrk.headers["Content-Type"] = "application/json"'
      printf 'wrk.body = [==[%s]==]\n' "$(cat "$TMP/body-$mode.json")"
      [[ "$STATUSES" == 1 ]] && status_census_lua; } >"$TMP/$mode.lua"
done
auth_headers() { # store: the headers of a user call through that gateway
    printf '%s\n' -H "Host: ${GW_HOST[$1]}" -H "Authorization: Bearer $TOKEN" -H "X-Toolgate-Site: $SITE"
}

# --- sanity: both answer, and the gateway's answer shows the policy at work ------------------
post() { # out url mode [curl args]: prints the status
    local out="$1" url="$2" mode="$3"
    shift 3
    curl -sS --max-time 10 -o "$out" -w '%{http_code}' -H 'Content-Type: application/json' "$@" \
        --data-binary "@$TMP/body-$mode.json" "$url/v1/chat/completions" || die "POST $url failed"
}
for mode in whole stream; do
    [[ "$(post "$TMP/direct.$mode" "http://$MODEL" "$mode")" == 200 ]] || die "stand-in ($mode): not 200"
    # The stand-in lists the tools it was offered: both directly, only the allowed one relayed.
    grep -q 'delete_report' "$TMP/direct.$mode" || die "stand-in ($mode): answer does not list delete_report"
    for store in $RELAY_STORES; do
        mapfile -t headers < <(auth_headers "$store")
        answer="$TMP/relay-$store.$mode"
        code="$(post "$answer" "${GW_URL[$store]}" "$mode" "${headers[@]}")"
        [[ "$code" == 200 ]] || { head -c 500 "$answer" >&2; die "gateway $store ($mode): HTTP $code"; }
        grep -q 'export_report' "$answer" || die "gateway $store ($mode): the allowed tool is missing"
        if grep -q 'delete_report' "$answer"; then die "gateway $store ($mode): the denied tool reached the model"; fi
        if [[ "$mode" == stream ]]; then
            grep -q '^data: \[DONE\]' "$answer" || die "gateway $store (stream): no [DONE] event"
        fi
        code="$(post /dev/null "${GW_URL[$store]}" whole -H "Host: ${GW_HOST[$store]}" -H "X-Toolgate-Site: $SITE")"
        [[ "$code" == 401 ]] || die "gateway $store: a request without a bearer token got HTTP $code, not 401"
    done
done
metric() { # store name: the sum of a counter's samples at that gateway's admin listener
    curl -s --max-time 10 "http://${GW_ADMIN[$1]}/metrics" \
        | awk -v m="$2" '$1 == m || index($1, m "{") == 1 { s += $2 } END { printf "%d", s }'
}

# --- wrk runs ---------------------------------------------------------------------------------
declare -A RPS P50 P99 ERRS CPU REQS GROUP_TICKS
thread_ticks() { # pid: CPU ticks of the process ("all") and of its live threads, by group
    local task
    awk '{ sub(/^.*\) /, ""); print "all", $12 + $13 }' /proc/"$1"/stat
    for task in /proc/"$1"/task/*; do
        cat "$task/stat" 2>/dev/null || true
    done | awk '{ name = $0; sub(/^[^(]*\(/, "", name); sub(/\).*$/, "", name); rest = $0; sub(/^.*\) /, "", rest)
        split(rest, f, " "); g = "other"
        if (name ~ /^tokio-rt/) g = "workers"; else if (name ~ /^audit/) g = "audit-writer"
        else if (name ~ /^sled|flusher/) g = "sled"
        t[g] += f[12] + f[13] } END { for (g in t) print g, t[g] }'
}
run_wrk() { # key url mode connections pid [headers...]
    local key="$1" url="$2" mode="$3" conns="$4" pid="$5" out c0 c1 reqs non2xx sock threads
    shift 5
    threads=$((conns < 2 ? 1 : 2))
    out="$TMP/wrk-$key-$round.txt"
    wrk -t"$threads" -c"$conns" -d"$WARMUP" -s "$TMP/$mode.lua" "$@" "$url/v1/chat/completions" >/dev/null
    thread_ticks "$pid" >"$TMP/ticks.before"
    c0="$(tree_cpu_ticks "$pid")"
    wrk -t"$threads" -c"$conns" -d"$DURATION" --latency -s "$TMP/$mode.lua" "$@" "$url/v1/chat/completions" >"$out"
    c1="$(tree_cpu_ticks "$pid")"
    thread_ticks "$pid" >"$TMP/ticks.after"
    local group ticks
    while read -r group ticks; do
        GROUP_TICKS[$key|$group]=$((${GROUP_TICKS[$key|$group]:-0} + ticks))
    done < <(awk 'NR == FNR { b[$1] = $2; next } { print $1, $2 - b[$1] }' "$TMP/ticks.before" "$TMP/ticks.after")
    reqs="$(awk '/requests in/ { print $1 }' "$out")"
    non2xx="$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")"
    sock="$(awk -F'[ ,]+' '/Socket errors:/ { print $4 + $6 + $8 + $10 }' "$out")"
    RPS[$key]+="$(awk '/^Requests\/sec:/ { print $2 }' "$out") "
    P50[$key]+="$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")") "
    P99[$key]+="$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")") "
    ERRS[$key]=$((${ERRS[$key]:-0} + ${non2xx:-0} + ${sock:-0}))
    REQS[$key]=$((${REQS[$key]:-0} + ${reqs:-0}))
    CPU[$key]+="$(awk -v d=$((c1 - c0)) -v hz="$CLK_TCK" -v n="${reqs:-0}" \
        'BEGIN { if (n > 0) printf "%.1f", d / hz * 1e6 / n; else print "nan" }') "
}

echo
echo "Toolgate relay benchmark  ($(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo "  model:    toolgate demo-model on $MODEL (the deterministic stand-in, a process of its own)"
for store in $RELAY_STORES; do
    echo "  gateway:  store $store on ${GW_URL[$store]} (RUST_LOG=warn), bearer: alice's ID token"
done
echo "  wrk -c{${RELAY_CONNECTIONS// /,}} -d$DURATION --latency (warm-up $WARMUP each), $ROUNDS round(s); direct and gateway alternate"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
awk -v l="${load_before%% *}" 'BEGIN { if (l > 0.5) printf "  WARNING: load average %.2f before the run: expect noise\n", l }'
declare -A AUDIT_BEFORE LLM_BEFORE
for store in $RELAY_STORES; do
    AUDIT_BEFORE[$store]="$(metric "$store" toolgate_audit_records_total)"
    LLM_BEFORE[$store]="$(metric "$store" toolgate_llm_calls_total)"
done
for round in $(seq 1 "$ROUNDS"); do
    for conns in $RELAY_CONNECTIONS; do
        for mode in $RELAY_MODES; do
            run_wrk "direct-$mode-$conns" "http://$MODEL" "$mode" "$conns" "$MODEL_PID"
            for store in $RELAY_STORES; do
                mapfile -t headers < <(auth_headers "$store")
                run_wrk "$store-$mode-$conns" "${GW_URL[$store]}" "$mode" "$conns" "${GW_PID[$store]}" "${headers[@]}"
            done
        done
    done
done

echo
[[ "$ROUNDS" == 1 ]] || echo "(medians over $ROUNDS rounds)"
printf '%-32s %9s %9s %9s %7s %11s\n' "target" "req/s" "p50 ms" "p99 ms" "errors" "CPU us/req"
printf '%-32s %9s %9s %9s %7s %11s\n' "--------------------------------" "---------" "---------" "---------" "-------" "-----------"
row() { # label key
    printf '%-32s %9.0f %9.3f %9.3f %7d %11.1f\n' "$1" "$(median <<<"${RPS[$2]}")" "$(median <<<"${P50[$2]}")" \
        "$(median <<<"${P99[$2]}")" "${ERRS[$2]}" "$(median <<<"${CPU[$2]}")"
}
differences() { # array-name direct-key gateway-key: per-round gateway - direct
    local -n values="$1"
    local d g i out=""
    read -ra d <<<"${values[$2]}"
    read -ra g <<<"${values[$3]}"
    for i in "${!g[@]}"; do out+="$(awk -v a="${g[$i]}" -v b="${d[$i]}" 'BEGIN { printf "%.3f", a - b }') "; done
    echo "$out"
}
overhead() { # label direct-key gateway-key
    local p99s p50s
    p99s="$(differences P99 "$2" "$3")"
    p50s="$(differences P50 "$2" "$3")"
    awk -v l="$1" -v o99="$(median <<<"$p99s")" -v o50="$(median <<<"$p50s")" -v t="$TARGET_MS" \
        -v all="$p99s" -v rounds="$ROUNDS" 'BEGIN {
        printf "  => %-28s relay adds p99 %+.3f ms (target <= %d ms) %s  [p50 %+.3f ms]\n", \
            l, o99, t, (o99 <= t) ? "PASS" : "ABOVE", o50
        if (rounds > 1) printf "     per-round p99 differences (ms): %s\n", all
    }'
}
for conns in $RELAY_CONNECTIONS; do
    for mode in $RELAY_MODES; do
        row "$mode c=$conns  stand-in direct" "direct-$mode-$conns"
        for store in $RELAY_STORES; do
            row "$mode c=$conns  gateway ($store)" "$store-$mode-$conns"
            overhead "$mode c=$conns, store $store" "direct-$mode-$conns" "$store-$mode-$conns"
        done
    done
done
echo
echo "  CPU us/req: the stand-in process in direct rows, the gateway process alone in gateway rows."
echo "  Gateway CPU per request by thread (tokio workers; audit writer; sled's I/O threads, which"
echo "  flush the audit batches; threads that ended during the run count as 'exited'):"
for conns in $RELAY_CONNECTIONS; do
    for mode in $RELAY_MODES; do
        for store in $RELAY_STORES; do
            key="$store-$mode-$conns"
            awk -v l="$mode c=$conns ($store)" -v n="${REQS[$key]}" -v hz="$CLK_TCK" -v all="${GROUP_TICKS[$key|all]:-0}" \
                -v w="${GROUP_TICKS[$key|workers]:-0}" -v a="${GROUP_TICKS[$key|audit-writer]:-0}" \
                -v s="${GROUP_TICKS[$key|sled]:-0}" -v o="${GROUP_TICKS[$key|other]:-0}" 'BEGIN {
                if (n == 0) exit; f = 1e6 / hz / n
                printf "    %-22s workers %6.1f  audit-writer %6.1f  sled %6.1f  other %5.1f  exited %5.1f us\n", \
                    l, w * f, a * f, s * f, o * f, (all > w + a + s + o) ? (all - w - a - s - o) * f : 0 }'
        done
    done
done
for store in $RELAY_STORES; do
    relayed=0
    for key in "${!REQS[@]}"; do [[ "$key" == "$store"-* ]] && relayed=$((relayed + REQS[$key])); done
    echo "  gateway ($store): $relayed requests measured; with warm-ups $(($(metric "$store" toolgate_llm_calls_total) - LLM_BEFORE[$store])) model calls and $(($(metric "$store" toolgate_audit_records_total) - AUDIT_BEFORE[$store])) audit records"
done
echo "  load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
for key in "${!ERRS[@]}"; do
    [[ "${ERRS[$key]}" == 0 ]] || echo "  WARNING: $key had ${ERRS[$key]} errors (KEEP=1 keeps the wrk output; STATUSES=1 prints them)"
    if [[ "$STATUSES" == 1 ]]; then
        for round in $(seq 1 "$ROUNDS"); do
            grep -h '^status ' "$TMP/wrk-$key-$round.txt" 2>/dev/null | sed "s/^/  $key round $round: /" || true
        done
    fi
done

# --- the memory soak: RSS must stay flat under steady relay load ------------------------------
if ((SOAK_MINUTES > 0)); then
    store="${RELAY_STORES%% *}"
    pid="${GW_PID[$store]}"
    mapfile -t headers < <(auth_headers "$store")
    echo
    cp "$TMP/whole.lua" "$TMP/soak.lua"
    if ((SOAK_DELAY_MS > 0)); then echo "function delay() return $SOAK_DELAY_MS end" >>"$TMP/soak.lua"; fi
    echo "Memory soak: $SOAK_MINUTES min of relay load (whole, c=8, ${SOAK_DELAY_MS} ms between a connection's requests) through the gateway ($store store)"
    printf '  %6s %10s %12s %12s\n' "minute" "RSS MB" "requests" "audit recs"
    soak_requests=0
    declare -a SOAK_RSS=()
    for minute in $(seq 1 "$SOAK_MINUTES"); do
        wrk -t2 -c8 -d60s -s "$TMP/soak.lua" "${headers[@]}" "${GW_URL[$store]}/v1/chat/completions" >"$TMP/soak.txt"
        kill -0 "$pid" 2>/dev/null || die "the gateway ($store) died during the soak"
        soak_requests=$((soak_requests + $(awk '/requests in/ { print $1 }' "$TMP/soak.txt")))
        rss="$(rss_kb "$pid" VmRSS)"
        SOAK_RSS+=("$rss")
        printf '  %6d %10.1f %12d %12d\n' "$minute" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
            "$soak_requests" "$(metric "$store" toolgate_audit_records_total)"
    done
    # Flat means: the last ten minutes grow by less than 5 % over the RSS at their start.
    awk -v first="${SOAK_RSS[0]}" -v peak="$(printf '%s\n' "${SOAK_RSS[@]}" | sort -n | tail -1)" \
        -v late="${SOAK_RSS[$(( ${#SOAK_RSS[@]} > 10 ? ${#SOAK_RSS[@]} - 11 : 0 ))]}" -v last="${SOAK_RSS[-1]}" 'BEGIN {
        growth = (late > 0) ? (last - late) / late * 100 : 0
        printf "  => RSS first minute %.1f MB, peak %.1f MB, last %.1f MB; last ten minutes %+.1f %% %s\n", \
            first / 1024, peak / 1024, last / 1024, growth, (growth < 5) ? "FLAT" : "GROWING"
    }'
fi
exit 0
