#!/usr/bin/env bash
# Fleet scaling in compile mode (issue 17): the same compile-mode sweep, first on one kerntuned
# pinned to core 0 (taskset -c 0, --compile-threads 1), then shared by two pinned to cores 0 and 1
# (one core and one compile thread each), both on one throw-away PostgreSQL cluster. Each phase
# has a fresh database, so neither starts with the other's compile cache. Variants per minute is
# the job's variants through the compile gates over the wall time from submit to done.
#
#   bench/fleet_scaling.sh [BIN_DIR] [BUDGET] [OUT_DIR]
# BIN_DIR default build/bin; BUDGET (variants of the sweep) default 40; OUT_DIR default
# bench/results/<date>-fleet-scaling. Output: OUT_DIR/summary.json and the daemons' logs.
# The load average before and after is recorded: other work on the cores skews the ratio.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$here/build/bin}" && pwd)
budget=${2:-40}
out=${3:-$here/bench/results/$(date -u +%Y-%m-%d)-fleet-scaling}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/daemon-*.log "$out"/summary.json
[ "$(nproc)" -ge 2 ] || { echo "needs 2 cores" >&2; exit 1; }

source "$here/bench/fleet_cluster.sh"
cluster_start
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done;
      cluster_stop' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# Starts a daemon pinned to a core on a database; sets port (and pids).
start_daemon() {  # name core database
  local name=$1 core=$2 db="postgresql:///$3?host=$KT_TMP/pg&user=kerntune"
  port=$(free_port)
  taskset -c "$core" "$bin/kerntuned" --listen "127.0.0.1:$port" --db "$db" \
    --families "$here/kernel_templates" --work-dir "$KT_TMP/work-$name" --compile-threads 1 \
    --heartbeat-seconds 0.4 >>"$out/daemon-$name.log" 2>&1 &
  pids+=($!)
  wait_for_daemon "http://127.0.0.1:$port" "$bin" "$out/daemon-$name.log"
}

# Submits the sweep to the daemon on port, waits for it; prints "<variants> <seconds>".
sweep() {  # port database
  local port=$1 db="postgresql:///$2?host=$KT_TMP/pg&user=kerntune" body id start status
  body=$(printf '{"family":"gemm","shape":{"M":512,"N":384,"K":640},"dtype":"bf16","mode":"compile","arch":"sm_90a","budget":%d}' "$budget")
  start=$(date +%s.%N)
  id=$(curl -sf -X POST -H 'Content-Type: application/json' -d "$body" \
    "http://127.0.0.1:$port/v1/jobs" | jq -r .id)
  while :; do
    status=$(curl -sf "http://127.0.0.1:$port/v1/jobs/$id" | jq -r .status)
    [ "$status" = queued ] || [ "$status" = running ] || break
    sleep 0.1
  done
  local end
  end=$(date +%s.%N)
  [ "$status" = done ] || { echo "job $id ended $status" >&2; exit 1; }
  local gated
  gated=$(psql -q -X -t -A "$db" -c "SELECT COUNT(*) FROM variants WHERE job_id = $id
          AND status IN ('compiled', 'compile_error', 'resource_exceeded')")
  echo "$gated $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')"
}

psql_value "CREATE DATABASE kt_one" >/dev/null
psql_value "CREATE DATABASE kt_two" >/dev/null

echo "== one daemon, core 0"
start_daemon one 0 kt_one
read -r one_variants one_seconds < <(sweep "$port" kt_one)
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
echo "   $one_variants variants in $one_seconds s"

echo "== two daemons, cores 0 and 1"
start_daemon two-a 0 kt_two
port_a=$port
start_daemon two-b 1 kt_two
read -r two_variants two_seconds < <(sweep "$port_a" kt_two)
echo "   $two_variants variants in $two_seconds s"

jq -n --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg commit "$(git -C "$here" rev-parse --short HEAD)" \
  --arg postgres "$(postgres_version)" --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
  --argjson cores "$(nproc)" --argjson budget "$budget" \
  --argjson one_variants "$one_variants" --argjson one_seconds "$one_seconds" \
  --argjson two_variants "$two_variants" --argjson two_seconds "$two_seconds" \
  --arg load_before "$load_before" --arg load_after "$(cut -d' ' -f1-3 /proc/loadavg)" '{
    date: $date, commit: $commit, postgresql: $postgres, cpu: $cpu, cores: $cores,
    sweep: {family: "gemm", shape: {M: 512, N: 384, K: 640}, dtype: "bf16", mode: "compile",
            arch: "sm_90a", budget: $budget},
    one_daemon: {cores: "0", compile_threads: 1, variants: $one_variants, seconds: $one_seconds,
                 variants_per_minute: ($one_variants * 60 / $one_seconds)},
    two_daemons: {cores: "0 and 1", compile_threads: "1 each", variants: $two_variants,
                  seconds: $two_seconds,
                  variants_per_minute: ($two_variants * 60 / $two_seconds)},
    ratio: (($two_variants / $two_seconds) / ($one_variants / $one_seconds)),
    load_average_before: $load_before, load_average_after: $load_after
  }' | tee "$out/summary.json"
