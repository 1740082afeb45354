#!/usr/bin/env bash
# Audit log durability benchmark: durable appends per second with group commit (target
# >= 50,000/s), acknowledgement latency of single records under light load (target p99 <= 2 ms),
# and optionally a long SIGKILL loop (CRASH_CYCLES, e.g. 1000) checking that no acknowledged
# record is ever lost. Uses `toolgate audit stress` on an on-disk store in a temp directory.
#
#   bench/audit.sh                      # build (release) and measure
#   TOOLGATE_BIN=path bench/audit.sh    # use an existing binary
#   CRASH_CYCLES=1000 bench/audit.sh    # plus the long crash loop
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-200000}
CONCURRENCY=${CONCURRENCY:-2048}
LIGHT_COUNT=${LIGHT_COUNT:-2000}
CRASH_CYCLES=${CRASH_CYCLES:-0}

if [ -z "${TOOLGATE_BIN:-}" ]; then
  cargo build --release -p gateway >&2
  TOOLGATE_BIN="${CARGO_TARGET_DIR:-target}/release/toolgate"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

config() {
  cat > "$work/$1.toml" <<TOML
public_url = "http://localhost:1"
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
insecure_no_sso = true
[store]
path = "$work/$1"
[sites.bench]
host = "bench.test"
upstream = "http://127.0.0.1:1"
TOML
  echo "$work/$1.toml"
}

echo "== durable appends with group commit ($COUNT records, $CONCURRENCY writers at once)"
"$TOOLGATE_BIN" audit stress --config "$(config throughput)" --count "$COUNT" --concurrency "$CONCURRENCY"
"$TOOLGATE_BIN" audit verify --config "$work/throughput.toml"

echo "== acknowledgement latency under light load ($LIGHT_COUNT records, one writer)"
"$TOOLGATE_BIN" audit stress --config "$(config light)" --count "$LIGHT_COUNT" --concurrency 1
echo "targets: >= 50000 records/s with group commit; p99 acknowledgement <= 2 ms under light load"

if [ "$CRASH_CYCLES" -gt 0 ]; then
  echo "== $CRASH_CYCLES SIGKILL cycles"
  crash=$(config crash)
  highest=0
  for cycle in $(seq 1 "$CRASH_CYCLES"); do
    "$TOOLGATE_BIN" audit stress --config "$crash" --count 100000000 --concurrency 16 --print-acks > "$work/acks" 2>/dev/null &
    pid=$!
    sleep "0.0$((RANDOM % 9 + 1))"
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
    acked=$(awk '/^ack /{ if ($2 > m) m = $2 } END { print m + 0 }' "$work/acks")
    [ "$acked" -gt "$highest" ] && highest=$acked
    verdict=$("$TOOLGATE_BIN" audit verify --config "$crash") || { echo "cycle $cycle: $verdict"; exit 1; }
    last=${verdict##*..}
    if [ "$last" -lt "$highest" ]; then
      echo "cycle $cycle: record $highest was acknowledged but the log ends at $last"; exit 1
    fi
    if [ $((cycle % 100)) -eq 0 ]; then
      echo "  $cycle cycles: highest acknowledged $highest, log ends at $last, chain verifies"
    fi
  done
  echo "ok: $CRASH_CYCLES cycles, highest acknowledged record $highest present, chain verifies"
fi
