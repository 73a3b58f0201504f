#!/usr/bin/env bash
# A fleet on a 2-GPU machine (issue 17): the same tune job swept twice, each time on a fresh
# throw-away PostgreSQL cluster:
#   one   - one kerntuned that has both GPUs (it spreads the job over them);
#   fleet - two kerntuned, one GPU each (CUDA_VISIBLE_DEVICES), the job submitted to the first;
#           the second takes it up through the store and claims leased batches of its variants.
# Variants per minute of each, from the job's start and end as the store recorded them (both
# include the job's final comparison), and whether every planned variant ended with one outcome.
#
#   bench/fleet_gpu_run.sh WORK_DIR PG_ROOT [BIN_DIR] [SHAPE] [BUDGET]
# PG_ROOT: a PostgreSQL server tree as scripts/pack-device-postgres.sh packs it (lib/postgresql/
# VERSION/bin, libs/), or "/usr" for Debian's own. SHAPE default 1x11008x4096 (a whole space of
# about 340 variants), BUDGET default 0 (every variant). Writes WORK_DIR/fleet.json and logs.
# DAEMON_ARGS (env): more options for every kerntuned, e.g. "--malloc-arenas 2".
# HEARTBEAT_S (env, default 2): how often a daemon looks for jobs other daemons queued.
# MODE=compile (env) sweeps compile-only jobs for sm_90a instead: the script's dry run without a GPU.
# PIN_CORES=P (env): give each daemon P cores of its own (taskset, --compile-threads P): the one
# daemon and daemon a get cores 0..P-1, daemon b P..2P-1, PostgreSQL the rest. Then the one-daemon
# sweep runs twice, before and after the fleet's (phases one, fleet, one-again), then once more on
# daemon b's cores (one-on-b-cores: are they as fast?), after a short
# warm-up sweep on every core (WARMUP_BUDGET variants, default 120), so a cold first sweep cannot
# flatter the fleet (issue 17's scaling target: the same cores each).
# FLEET_B_DEVICES (env, default 1): daemon b's CUDA_VISIBLE_DEVICES; "0" lets a compile-mode fleet
# on a one-GPU machine give both daemons the GPU. With PIN_CORES a last phase, one-without-gpu,
# runs one daemon on a's cores that sees no GPU.
# Every phase's compile times as the store has them go to WORK_DIR/compile-PHASE.json, and each
# phase's CPU and memory counters before and after to WORK_DIR/sys-PHASE-{begin,end}.txt.
set -uo pipefail
work=${1:?usage: fleet_gpu_run.sh WORK_DIR PG_ROOT [BIN_DIR] [SHAPE] [BUDGET]}
pg_root=${2:?PG_ROOT}
bin=${3:-build/bin}
shape=${4:-1x11008x4096}
budget=${5:-0}
pg_bin=$(ls -d "$pg_root"/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$pg_bin/postgres" ] || { echo "no PostgreSQL server under $pg_root" >&2; exit 1; }
[ -d "$pg_root/libs" ] && export LD_LIBRARY_PATH=$pg_root/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$work"
work=$(cd "$work" && pwd)
source "$(dirname "$0")/daemon_ready.sh"
mode_args=()
[ "${MODE:-tune}" = compile ] && mode_args=(--mode compile --arch sm_90a)
say() { echo "== $* ($SECONDS s)"; }
# PostgreSQL refuses to run as root: as root, run it as nobody.
as_pg() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}
pin=${PIN_CORES:-0}
pids=()
stop_all() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; pids=(); }
trap stop_all EXIT

start_cluster() {  # start_cluster NAME: a fresh cluster listening on a socket in WORK_DIR/NAME
  local dir=$work/$1
  mkdir -p "$dir" && [ "$(id -u)" != 0 ] || chown nobody "$dir"
  as_pg "$pg_bin/initdb" -D "$dir/data" -A trust -U kt -N -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
    { echo "initdb failed:"; cat "$dir/initdb.log"; exit 1; }
  local pg_pin=()
  [ "$pin" -gt 0 ] && pg_pin=(taskset -c "$((2 * pin))-$(($(nproc) - 1))")
  as_pg "${pg_pin[@]}" "$pg_bin/postgres" -D "$dir/data" -k "$dir" -c listen_addresses= -F \
    -c max_connections=200 >"$dir/server.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do [ -S "$dir/.s.PGSQL.5432" ] && break; sleep 0.1; done
  sleep 1  # the socket appears just before the server takes connections
  db_uri="postgresql:///postgres?host=$dir&user=kt"
}

start_daemon() {  # start_daemon NAME PORT DEVICES [CORE_SLOT]
  local pinned=()
  if [ "$pin" -gt 0 ]; then
    local first=$((${4:-0} * pin))
    pinned=(taskset -c "$first-$((first + pin - 1))")
  fi
  CUDA_VISIBLE_DEVICES=$3 "${pinned[@]}" "$bin/kerntuned" $([ "$pin" -gt 0 ] && echo --compile-threads "$pin") --listen "127.0.0.1:$2" --db "$db_uri" \
    --work-dir "$work/work-$1" --heartbeat-seconds "${HEARTBEAT_S:-2}" ${DAEMON_ARGS:-} \
    >"$work/daemon-$1.log" 2>&1 &
  pids+=($!)
  wait_for_daemon "http://127.0.0.1:$2" "$bin" "$work/daemon-$1.log"
}

# What the machine did around a phase: every CPU's counters (user .. steal, /proc/stat) and the
# memory the VM had (/proc/meminfo), so unequal cores or a VM still growing its RAM show up.
snapshot() { { date -u +%s.%N; grep '^cpu' /proc/stat; grep -E '^(MemTotal|MemFree|Cached):' /proc/meminfo; } >"$work/sys-$1.txt"; }

sweep() {  # sweep PHASE PORT [BUDGET]: submits the job, waits, saves the job's JSON
  say "$1: gemm $shape bf16, budget ${3:-$budget}"
  snapshot "$1-begin"
  "$bin/kerntune" --server "http://127.0.0.1:$2" submit gemm --shape "$shape" --dtype bf16 \
    --budget "${3:-$budget}" "${mode_args[@]}" --wait
  snapshot "$1-end"
  # How many compiles were NVRTC's and how many the cache's (a repeated kernel costs no compile).
  python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$2/metrics').read().decode())" |
    grep -E '^kerntune_compile_(cache_hits_total|seconds_(count|sum))' >"$work/metrics-compile-$1.txt"
  python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$2/v1/jobs/1').read().decode())" \
    >"$work/job-$1.json"
  # Compile times as the store has them (every page of the job's variants): what a phase's wall
  # time is made of.
  python3 - "http://127.0.0.1:$2/v1/jobs/1/variants" >"$work/compile-$1.json" <<'PY'
import json, statistics, sys, urllib.request
times, cursor = [], None
while True:
    page = json.load(urllib.request.urlopen(sys.argv[1] + "?limit=1000" + (f"&cursor={cursor}" if cursor else "")))
    times += [v["compile_ms"] for v in page["variants"] if v.get("compile_ms")]
    cursor = page.get("next")
    if not cursor or not page["variants"]:
        break
print(json.dumps({"compiles": len(times), "median_ms": statistics.median(times) if times else None,
                  "total_s": sum(times) / 1000}))
PY
}

say "kerntune fleet run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv || true
"$pg_bin/postgres" --version

[ "$pin" -gt 0 ] && [ "$(nproc)" -le $((2 * pin)) ] && { echo "PIN_CORES=$pin needs more than $((2 * pin)) cores" >&2; exit 1; }
if [ "$pin" -gt 0 ]; then  # the warm-up, on every core: a fresh machine's first compiles are slow
  pin=0
  start_cluster warm
  start_daemon warm 18100 0,1
  sweep warm 18100 "${WARMUP_BUDGET:-120}"
  stop_all
  pin=$PIN_CORES
fi

start_cluster one
start_daemon one 18101 0,1
"$bin/kerntune" --server http://127.0.0.1:18101 devices
sweep one 18101
stop_all

start_cluster fleet
start_daemon a 18102 0 0
start_daemon b 18103 "${FLEET_B_DEVICES:-1}" 1
sweep fleet 18102
# What each daemon ran: its own counters (kerntune_variants_total by outcome).
for d in a:18102 b:18103; do
  python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:${d#*:}/metrics').read().decode())" |
    grep -E '^kerntune_(variants_total|compile_cache_hits_total|compile_seconds_(count|sum))' >"$work/metrics-${d%%:*}.txt"
done
# Both daemons answer for the job: the same progress from either.
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:18103/v1/jobs/1').read().decode())" \
  >"$work/job-fleet-from-b.json"
stop_all

if [ "$pin" -gt 0 ]; then
  start_cluster one-again
  start_daemon one-again 18104 0,1 0
  sweep one-again 18104
  stop_all
  # One daemon alone on daemon b's cores: whether b's cores compile as fast as a's.
  start_cluster one-on-b-cores
  start_daemon one-on-b-cores 18105 0,1 1
  sweep one-on-b-cores 18105
  stop_all
  # One daemon that sees no GPU (as daemon b on a one-GPU machine): does compiling depend on it?
  start_cluster one-without-gpu
  start_daemon one-without-gpu 18106 "" 0
  sweep one-without-gpu 18106
  stop_all
fi

python3 - "$work" <<'PY'
import datetime, json, os, sys
work = sys.argv[1]
def figures(path):
    job = json.load(open(path))
    t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    wall = (t(job["finished_at"]) - t(job["started_at"])).total_seconds()
    by_status = job["progress"]["by_status"]
    ran = sum(n for s, n in by_status.items() if s not in ("pending", "pruned", "unsupported_arch"))
    compiles = json.load(open(path.replace("/job-", "/compile-")))
    return {"job_status": job["status"], "compiles": compiles, "by_status": by_status, "variants_run": ran,
            "wall_seconds": wall, "variants_per_minute": 60 * ran / wall,
            "every_variant_one_outcome": job["progress"]["finished"] == job["progress"]["total"],
            "best_us": (job.get("best") or {}).get("median_us")}
one = figures(f"{work}/job-one.json")
fleet = figures(f"{work}/job-fleet.json")
from_b = json.load(open(f"{work}/job-fleet-from-b.json"))["progress"]
def ran_by(name):
    total = 0
    for line in open(f"{work}/metrics-{name}.txt"):
        labels, value = line.rsplit(" ", 1)
        if labels.startswith("kerntune_variants_total") and 'outcome="cancelled"' not in labels:
            total += float(value)
    return total
fleet["variants_run_by_daemon"] = {"a (GPU 0)": ran_by("a"), "b (GPU 1)": ran_by("b")}
result = {"daemon_args": os.environ.get("DAEMON_ARGS", ""), "mode": os.environ.get("MODE", "tune"),
          "cores_per_daemon": int(os.environ.get("PIN_CORES", "0")) or "not pinned", "host_cores": os.cpu_count(),
          "one_daemon_two_gpus": one, "two_daemons_one_gpu_each": fleet,
          "ratio_fleet_over_one": fleet["variants_per_minute"] / one["variants_per_minute"],
          "second_daemon_sees_the_same_progress": from_b == json.load(open(f"{work}/job-fleet.json"))["progress"]}
if os.path.exists(f"{work}/job-one-again.json"):
    again = figures(f"{work}/job-one-again.json")
    result["one_daemon_again"] = again
    result["ratio_fleet_over_one_again"] = fleet["variants_per_minute"] / again["variants_per_minute"]
if os.path.exists(f"{work}/job-one-on-b-cores.json"):
    result["one_daemon_on_b_cores"] = figures(f"{work}/job-one-on-b-cores.json")
if os.path.exists(f"{work}/job-one-without-gpu.json"):
    result["one_daemon_without_gpu"] = figures(f"{work}/job-one-without-gpu.json")
json.dump(result, open(f"{work}/fleet.json", "w"), indent=1)
print(json.dumps(result, indent=1))
PY
