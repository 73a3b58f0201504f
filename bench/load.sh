#!/usr/bin/env bash
# Load benchmark (issue 11): a kerntuned on loopback whose store holds 10,000 finished tune jobs
# (bench/load_seed.py), while a compile-mode GEMM job runs, is loaded by wrk with 64 connections:
# /v1/best, /v1/history, a page of a job's variants. During each load a probe times /healthz every
# 20 ms and samples the daemon's RSS. The compile job's stored bytes are read from SQLite's dbstat.
#
#   bench/load.sh [--build DIR] [--duration SECONDS] [--connections N] [--jobs N] [--out DIR]
#                 [--daemon-arg ARG]...   (e.g. --daemon-arg --compile-nice=10)
#
# Writes bench/results/load-latest.json and the raw output under bench/results/<date>-load/.
# Needs wrk (Debian package `wrk`: apt-get install wrk), python3 and a built kerntuned, kerntune-worker.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
duration=20
connections=64
jobs=10000
out=$root/bench/results
daemon_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --daemon-arg) daemon_args+=("$2"); shift 2 ;;
    *) echo "load.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "load.sh: wrk not found (apt-get install wrk)" >&2; exit 1; }
for exe in kerntuned kerntune-worker; do
  [ -x "$build/bin/$exe" ] || { echo "load.sh: $build/bin/$exe not built" >&2; exit 1; }
done

raw=$out/$(date -u +%F)-load
mkdir -p "$raw"
work=$(mktemp -d)
daemon_pid=
cleanup() {
  if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
probe=$root/bench/load_probe.py
db=$work/load.db
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port

start_daemon() {
  "$build/bin/kerntuned" --listen "127.0.0.1:$port" --db "$db" --families "$root/kernel_templates" \
    --worker "$build/bin/kerntune-worker" "$@" >>"$raw/daemon.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 100); do
    if python3 -c "import urllib.request; urllib.request.urlopen('$url/healthz', timeout=1)" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "load.sh: kerntuned did not become healthy; see $raw/daemon.log" >&2
  exit 1
}
stop_daemon() { kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=; }
api() {  # api METHOD PATH [BODY]: prints the JSON reply
  python3 - "$url" "$@" <<'EOF'
import sys, urllib.request
url, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
request = urllib.request.Request(url + path, data=body, method=method,
                                 headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(request, timeout=30).read().decode())
EOF
}

: >"$raw/daemon.log"
start_daemon  # creates and migrates the store
stop_daemon
seed_start=$SECONDS
python3 "$root/bench/load_seed.py" "$db" --jobs "$jobs" | tee "$raw/seed.txt"
seed_seconds=$((SECONDS - seed_start))
python3 "$probe" store "$db" >"$raw/store-before.json"
start_daemon "${daemon_args[@]}"

# The compile-mode job: GEMM 4096^3 bf16 for sm_90a, a budget large enough to outlast the loads.
job=$(api POST /v1/jobs '{"family":"gemm","shape":{"M":4096,"N":4096,"K":4096},"dtype":"bf16","mode":"compile","arch":"sm_90a","budget":400}')
job_id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$job")
echo "load.sh: compile job $job_id running"

cat >"$work/best.lua" <<'EOF'
-- /v1/best for one of the 100 seeded shapes, a different one each request.
math.randomseed(os.time())
request = function()
  local m = 256 * math.random(1, 10)
  local n = 256 * math.random(1, 10)
  return wrk.format("GET", "/v1/best?family=gemm&dtype=bf16&M=" .. m .. "&N=" .. n .. "&K=4096")
end
EOF
cat >"$work/variants.lua" <<EOF
-- A page (limit 100) of one of the seeded 1,000-variant jobs, at a random cursor.
math.randomseed(os.time())
request = function()
  local job = 1 + 100 * math.random(0, $((jobs / 100 - 1)))
  return wrk.format("GET", "/v1/jobs/" .. job .. "/variants?limit=100")
end
EOF

run_load() {  # run_load NAME PATH|-s SCRIPT
  local name=$1 target=$2 script=${3:-}
  python3 "$probe" probe "$url" "$daemon_pid" "$duration" "$raw/$name-probe.json" &
  local probe_pid=$!
  if [ -n "$script" ]; then
    wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$script" "$url$target" >"$raw/$name-wrk.txt"
  else
    wrk -t2 -c"$connections" -d"${duration}s" --latency "$url$target" >"$raw/$name-wrk.txt"
  fi
  wait "$probe_pid"
  cat "$raw/$name-wrk.txt"
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run_load best /v1/best "$work/best.lua"
run_load history /v1/history
run_load variants /v1/jobs/1/variants "$work/variants.lua"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The compile job's stored bytes: cancel it (its plan and compile outcomes stay), checkpoint.
progress=$(api GET "/v1/jobs/$job_id")
api DELETE "/v1/jobs/$job_id" >/dev/null
sleep 2
echo "$progress" >"$raw/compile-job.json"
stop_daemon
python3 "$probe" store "$db" >"$raw/store-after.json"
# No path of this machine in the committed output.
sed -i "s#$work#<tmp>#g; s#$root#<repo>#g" "$raw/daemon.log"

python3 - "$raw" "$out/load-latest.json" "$jobs" "$connections" "$duration" "$seed_seconds" \
  "$load_before" "$load_after" "$probe" "${daemon_args[@]}" <<'EOF'
import datetime, json, os, subprocess, sys
raw, latest, jobs, connections, duration, seed_s, load_before, load_after, probe = sys.argv[1:10]
daemon_args = sys.argv[10:]
wrk = lambda name: json.loads(subprocess.check_output(
    [sys.executable, probe, "wrk", f"{raw}/{name}-wrk.txt"]))
side = lambda name: json.load(open(f"{raw}/{name}-probe.json"))
before = json.load(open(f"{raw}/store-before.json"))
after = json.load(open(f"{raw}/store-after.json"))
job = json.load(open(f"{raw}/compile-job.json"))
# The compile cache (kernels) is shared by every job that compiles the same source: counted apart.
cache = ("kernels", "sqlite_autoindex_kernels_1")
job_bytes = sum(after.get(k, 0) - before.get(k, 0) for k in after if k not in cache)
cache_bytes = sum(after.get(k, 0) - before.get(k, 0) for k in cache)
by_status = job.get("progress", {}).get("by_status", {})
loads = {name: {**wrk(name), **side(name)} for name in ("best", "history", "variants")}
result = {
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "machine": {"cores": os.cpu_count(), "loadavg_before": load_before,
                "loadavg_after": load_after},
    "store_jobs": int(jobs), "seed_seconds": int(seed_s), "connections": int(connections),
    "duration_s": int(duration), "daemon_args": daemon_args, "loads": loads,
    "healthz_p99_ms_max": max(l["healthz_p99_ms"] for l in loads.values()),
    "rss_max_mb": max(l["rss_max_mb"] for l in loads.values()),
    "compile_job": {"id": job["id"], "status_at_cancel": job["status"],
                    "configurations": sum(by_status.values()), "by_status": by_status,
                    "stored_bytes": job_bytes, "kernel_cache_bytes": cache_bytes},
    "raw": os.path.relpath(raw, os.path.dirname(latest)),
}
json.dump(result, open(latest, "w"), indent=1)
print(json.dumps(result, indent=1))
EOF
