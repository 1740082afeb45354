#!/usr/bin/env bash
# Several replicas on one PostgreSQL database: durable audit appends per second with one writer
# process and with three at once (one chain, every record acknowledged after its transaction
# committed; target >= 20,000 records/s in total with three), each a `toolgate audit stress` as
# a replica's writer is. The JSON route through two replicas against one, and the p99 a session
# lookup on PostgreSQL adds, are rows of `AUTH_STORES="memory postgres replicas" bench/load.sh`.
#
#   bench/replicas.sh                      # build (release) and measure
#   TOOLGATE_BIN=path bench/replicas.sh    # use an existing binary
#   COUNT=100000 CONCURRENCY=2048          # records per writer, records in flight per writer
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH_NAME=replicas
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

COUNT="${COUNT:-100000}"
CONCURRENCY="${CONCURRENCY:-2048}"
WRITERS="${WRITERS:-3}"

TMP="$(mktemp -d)"
gateway_bin
start_postgres pg
printf 'a bench audit key' >"$TMP/audit.key"
cat >"$TMP/replica.toml" <<TOML
public_url = "http://localhost:1"
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
[store]
url = "$PG_URL"
password = "file:$PG_PASSWORD_FILE"
tls = "disable"
[audit]
key = "file:$TMP/audit.key"
# The keys a shared store requires; the audit commands never read them.
[sso]
issuer = "http://127.0.0.1:9"
client_id = "bench"
client_secret = "env:UNUSED"
session_keys = ["env:UNUSED"]
assertion_keys = ["env:UNUSED"]
[sites.bench]
host = "bench.test"
upstream = "http://127.0.0.1:1"
TOML

rate() { sed -n 's/.* \([0-9][0-9]*\) records\/s.*/\1/p' "$1"; }

note "one writer: $COUNT records, $CONCURRENCY in flight"
"$TOOLGATE_BIN" audit stress --config "$TMP/replica.toml" --count "$COUNT" --concurrency "$CONCURRENCY" 2>"$TMP/one.err" \
    || { cat "$TMP/one.err" >&2; die "the writer failed"; }
cat "$TMP/one.err"
one="$(rate "$TMP/one.err")"

note "$WRITERS writers at once on the same chain: $COUNT records each, $CONCURRENCY in flight each"
started="$(date +%s.%N)"
pids=()
for writer in $(seq 1 "$WRITERS"); do
    "$TOOLGATE_BIN" audit stress --config "$TMP/replica.toml" --count "$COUNT" --concurrency "$CONCURRENCY" \
        2>"$TMP/many-$writer.err" &
    pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid" || die "a writer failed"; done
ended="$(date +%s.%N)"
cat "$TMP"/many-*.err
total="$(awk -v n="$((COUNT * WRITERS))" -v a="$started" -v b="$ended" 'BEGIN { printf "%.0f", n / (b - a) }')"

note "the chain after both runs"
"$TOOLGATE_BIN" audit verify --config "$TMP/replica.toml"
echo
awk -v one="$one" -v total="$total" -v w="$WRITERS" 'BEGIN {
    printf "  1 writer:  %d records/s\n", one
    printf "  %d writers: %d records/s in total (%.2fx one)   target >= 20000: %s\n", w, total, (one > 0) ? total / one : 0, (total >= 20000) ? "PASS" : "BELOW"
}'
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
