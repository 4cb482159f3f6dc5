#!/usr/bin/env bash
# Drives POST /api/plan with wrk: 64 connections, 2 threads, 30 s, loopback only, then stops the server.
# Prints requests/s, p99 latency and the error count (non-2xx answers and socket errors), which must be 0.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${LOAD_SECONDS:-30}
out=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$out"' EXIT
build/shardplan serve --host 127.0.0.1 --port 0 >"$out/serve.log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "serving" "$out/serve.log" && break; sleep 0.1; done
port=$(grep -o '127.0.0.1:[0-9]*' "$out/serve.log" | cut -d: -f2)
[ -n "$port" ] || { echo "load: the server did not start"; cat "$out/serve.log"; exit 1; }
wrk -t2 -c64 -d"${DURATION}s" --latency --timeout 10s -s tools/wrk-plan.lua "http://127.0.0.1:$port/api/plan" | tee "$out/wrk.txt"
rps=$(awk '/Requests\/sec/ {print $2}' "$out/wrk.txt")
p99=$(awk '$1 == "99%" {print $2}' "$out/wrk.txt")
non2xx=$(awk '/Non-2xx or 3xx responses/ {print $5}' "$out/wrk.txt" || true)
sockerr=$(grep -o 'Socket errors:.*' "$out/wrk.txt" | grep -o '[0-9]\+' | awk '{s += $1} END {print s + 0}' || true)
errors=$(( ${non2xx:-0} + ${sockerr:-0} ))
echo "load: ${rps} requests/s, p99 ${p99}, ${errors} errors (64 connections, ${DURATION} s, /api/plan)"
[ "$errors" -eq 0 ]
