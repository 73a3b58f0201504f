#!/usr/bin/env bash
# Hardware-counter profiles (Nsight Compute) of our best GEMM variants and the cublasLt kernels a
# job times next to them: why a variant is slower than the library, in counters rather than guesses.
# Runs kerntuned under ncu (every child process: the measurement worker is where kernels run), then
# one job per shape pinned to bench/experiments/profile_configs/<shape>.json; ncu profiles one launch of each
# kernel function of ours (kt_gemm*) and of cuBLAS (nvjet*, sm90*, cutlass*), its Nth launch
# (INVOCATION, default 5: past the validation launches), with clocks left alone.
#
#   OUT=DIR bash bench/experiments/profile_configs/profile_gemm.sh [BIN_DIR] SHAPE...
# FAMILY and DTYPE (env, default gemm and bf16) name the jobs' family and dtype: FAMILY=gemm_fp8
# DTYPE=e4m3 PROFILE_CONFIGS=.../fp8 profiles the fp8 GEMM (its shapes MxNxKxBLOCK_SCALED).
# SHAPE: the family's extents in its dim order (MxNxK) with a config file PROFILE_CONFIGS/SHAPE.json (env; default this folder,
# the H200's best configs; h100/ holds the H100's where they differ). One
# config per template: ncu counts launches per kernel function, so a second config of the same
# template would not be profiled.
# Writes to OUT: profile.log (progress, ncu's messages, each job's result), <shape>.ncu-rep
# bundled in reports.tar, <shape>-details.csv (every section's metrics, one row per metric),
# <shape>-raw.csv (every counter collected, one row per kernel) and
# summary.txt (per kernel: duration, DRAM throughput, L2 hit rate, achieved occupancy, top stalls).
# Needs ncu on PATH (the GPU machines' CUDA image) and python3. ncu replays each profiled kernel
# about 33 times: for millisecond kernels (8192^3) the baseline's eight algorithms can outlast the
# worker's watchdog and fail the job before our kernels run (2026-11-27, H200): for those,
# PROFILE_KERNELS='^kt_gemm' (a regex of kernel names) profiles ours only.
set -uo pipefail
out=${OUT:?set OUT}
bin=${1:?usage: profile_gemm.sh BIN_DIR SHAPE...}
shift
[ $# -gt 0 ] || { echo "no shape given" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
port=${KERNTUNE_BENCH_PORT:-18090}
log=$out/profile.log
work=$(mktemp -d)
source "$here/../../daemon_ready.sh"
say() { echo "== $* ($SECONDS s)" | tee -a "$log"; }
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -x "$ncu_bin" ] || { echo "ncu not found" | tee -a "$log"; exit 1; }
say "kerntune ${FAMILY:-gemm} ${DTYPE:-bf16} profiles, $(date -u +%Y-%m-%dT%H:%M:%SZ), $("$ncu_bin" --version | tail -1)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >>"$log" 2>&1

sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
  --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy --section WarpStateStats
  --section SchedulerStats)
names=${PROFILE_KERNELS:-'^(kt_gemm|nvjet|sm90|cutlass)'}
for shape in "$@"; do
  configs=${PROFILE_CONFIGS:-$here}/$shape.json
  [ -f "$configs" ] || { say "$shape: no $configs, skipped"; continue; }
  say "$shape: $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$configs") configs under ncu"
  rm -f "$work/k.db"*
  "$ncu_bin" --target-processes all --clock-control none \
    --kernel-id "::regex:$names:${INVOCATION:-5}" "${sections[@]}" \
    --export "$work/$shape" --force-overwrite \
    "$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/k.db" --work-dir "$work/w" \
    >"$work/daemon-$shape.log" 2>&1 &
  daemon=$!
  wait_for_daemon "http://127.0.0.1:$port" "$bin" "$work/daemon-$shape.log"
  timeout "${JOB_S:-240}" "$bin/kerntune" --server "http://127.0.0.1:$port" --json submit \
    "${FAMILY:-gemm}" --shape "$shape" --dtype "${DTYPE:-bf16}" --configs "@$configs" --wait >"$work/job.json" 2>>"$log"
  echo "job rc $?" >>"$log"
  python3 - "$work/job.json" <<'PY' | tee -a "$log"
import json, sys
try:
    job = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(f"no job answer: {e}")
best = job.get("best") or {}
print("job", job.get("id"), job.get("status"), "best", best.get("template"), json.dumps(best.get("config")),
      "median_us", best.get("median_us"), "final", json.dumps(best.get("final")))
PY
  "$bin/kerntune" --server "http://127.0.0.1:$port" show 1 >>"$log" 2>&1
  # ncu writes its report when the profiled program ends: stop kerntuned itself, then wait for ncu.
  pkill -INT -f "kerntuned --listen 127.0.0.1:$port"
  wait "$daemon"
  tail -5 "$work/daemon-$shape.log" >>"$log"
  grep '==PROF==\|==ERROR==\|==WARNING==' "$work/daemon-$shape.log" | sort | uniq -c | head -20 >>"$log"
  if [ -f "$work/$shape.ncu-rep" ]; then
    "$ncu_bin" --import "$work/$shape.ncu-rep" --csv --page details >"$out/$shape-details.csv" 2>>"$log"
    # Every counter the sections collected (stall reasons, pipe utilisation), one row per kernel.
    "$ncu_bin" --import "$work/$shape.ncu-rep" --csv --page raw >"$out/$shape-raw.csv" 2>>"$log"
  else
    say "$shape: ncu wrote no report"
  fi
done
tar -C "$work" -cf "$out/reports.tar" $(cd "$work" && ls *.ncu-rep daemon-*.log 2>/dev/null)

# One block per profiled kernel: the figures that tell memory-bound from latency-bound.
python3 - "$out" "$@" <<'PY' | tee "$out/summary.txt"
import csv, os, sys
out, shapes = sys.argv[1], sys.argv[2:]
wanted = ["Duration", "DRAM Throughput", "Memory Throughput", "L2 Hit Rate", "L1/TEX Hit Rate",
          "Compute (SM) Throughput", "Achieved Occupancy", "Registers Per Thread", "Grid Size",
          "Block Size", "Waves Per SM", "Dynamic Shared Memory Per Block", "Eligible Warps Per Scheduler",
          "Issued Warp Per Scheduler", "Warp Cycles Per Issued Instruction", "Mem Busy", "Max Bandwidth",
          "DRAM Frequency", "SM Frequency"]
for shape in shapes:
    path = f"{out}/{shape}-details.csv"
    if not os.path.exists(path):
        continue
    kernels = {}
    for row in csv.DictReader(open(path)):
        key = (row.get("ID"), row.get("Kernel Name", "")[:90])
        kernels.setdefault(key, {})[row.get("Metric Name")] = f"{row.get('Metric Value')} {row.get('Metric Unit')}".strip()
    for (kid, name), metrics in kernels.items():
        print(f"{shape} #{kid} {name}")
        for m in wanted:
            if m in metrics:
                print(f"    {m}: {metrics[m]}")
PY
rm -rf "$work"
say "done"
