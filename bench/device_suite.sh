#!/usr/bin/env bash
# One call on the GPU machine, about 8 minutes on an H100: the GPU test suite, the device's copy
# bandwidth, then kerntuned on a fresh database and both benchmark programs against it:
# kt-bench gemm (the square set; each job's final comparison: our best vs the cublasLt baseline
# re-measured interleaved in the same job, ratio with its 95% interval) and kt-bench engine
# (the engine's figures; its two sweeps each run on a fresh daemon of their own). Runs the slim
# binaries of .device/bin (scripts/pack-device.sh packs kt-bench and kt-copy-bandwidth):
#   scripts/pack-device.sh
#   OUT=/some/dir bash bench/device_suite.sh [GEMM_BUDGET] [ENGINE_BUDGET] [TOTAL_SECONDS]
# GEMM_BUDGET: variants per GEMM shape (default 16); ENGINE_BUDGET: variants of the repeat and
# sweep jobs (default 12); TOTAL_SECONDS: the whole suite's time (default 480), shared out as
# deadlines so a slow phase is cut short instead of the call being killed.
# PHASES (env, default "tests,gemm,engine") picks the parts to run, so one suite can be split
# over two calls; GPU_TESTS_S (env, default 200) caps the GPU test binary; GEMM_SHAPES (env,
# e.g. "8192x8192x8192:96 1x4096x7168") replaces the GEMM bench's shapes, each with its own
# budget (and MxNxK:BUDGET:TIMEOUT_S its own job timeout); GEMM_SHAPE_SET (env: square, models or
# all) picks kt-bench gemm's named set instead, every shape with the budget and job timeout the
# set gives it (GEMM_SHAPES wins when both are set; "all" at GEMM_REPEAT=1 is about 8 minutes of
# an H100, estimated from the 2026-11-25 runs); GEMM_JOB_TIMEOUT_S (env, default 60) cancels a
# shape's job then, keeping its best, unless the shape has a timeout of its own;
# GEMM_REPEAT (env, default 3) is kt-bench gemm's --repeat: after the tuning pass, each shape's
# final comparison runs again in GEMM_REPEAT-1 jobs pinned to its candidates (each in a freshly
# started worker) and the table adds the ratio's run-to-run spread; the repeats share the GEMM
# deadline, so the ones past it are recorded as skipped (GEMM_REPEAT=1: no repeats);
# ENGINE_PHASES (env, e.g. "sweep") and ENGINE_JOB_TIMEOUT_S (default 120) do the same for
# kt-bench engine.
# Files in $OUT (8): suite.log (nvidia-smi, progress, tables), gpu-tests.log, copy-bandwidth.json,
# daemon.log, gemm/table.md, gemm/gemm.json, engine/table.md, engine/engine.json.
# Back on the build host, file them as bench/results/<date>-<gpu>-{gemm,engine}/ and re-render:
#   build/bin/kt-bench gemm --from-json bench/results/<date>-<gpu>-gemm/gemm.json \
#     --out-dir bench/results/<date>-<gpu>-gemm --doc
# (also writes bench/results/gemm-latest.json; --doc: the table of docs/benchmarks.md). The CLI's
# end-to-end run stays in bench/tune_e2e.sh.
set -uo pipefail
out=${OUT:?set OUT}
bin=${KERNTUNE_BIN_DIR:-.device/bin}
gemm_budget=${1:-16}
engine_budget=${2:-12}
total=${3:-480}
log=$out/suite.log
phases=${PHASES:-tests,gemm,engine}
wants() { [[ ",$phases," == *",$1,"* ]]; }
port=${KERNTUNE_BENCH_PORT:-18080}
say() { echo "== $* ($SECONDS s)" | tee -a "$log"; }

bench_phases=0
for p in gemm engine dual attention; do wants $p && bench_phases=$(( bench_phases + 1 )); done
if (( bench_phases > 2 )); then
  echo "at most two of gemm, engine, dual, attention per call (8 files in \$OUT)" | tee -a "$log"; exit 1
fi
for exe in kerntuned kerntune gpu_tests kt-copy-bandwidth kt-bench; do
  [ -x "$bin/$exe" ] || { echo "missing $bin/$exe (scripts/pack-device.sh ...)" | tee -a "$log"; exit 1; }
done
say "kerntune device suite, $(date -u +%Y-%m-%dT%H:%M:%SZ), budgets gemm $gemm_budget engine $engine_budget"
nvidia-smi >>"$log" 2>&1

if wants tests; then
  say "GPU tests"
  timeout "${GPU_TESTS_S:-200}" "$bin/gpu_tests" >"$out/gpu-tests.log" 2>&1
  echo "gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$out/gpu-tests.log" | tr '\n' ' ')" | tee -a "$log"
fi

say "copy bandwidth"
"$bin/kt-copy-bandwidth" >"$out/copy-bandwidth.json" 2>>"$log"
cat "$out/copy-bandwidth.json" >>"$log"

work=$(mktemp -d)
"$bin/kerntuned" --listen "127.0.0.1:$port" --db "$work/kerntune.db" >"$out/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
url=http://127.0.0.1:$port
for _ in $(seq 300); do
  "$bin/kerntune" --server "$url" devices >/dev/null 2>&1 && break
  sleep 0.2
done
"$bin/kerntune" --server "$url" devices >>"$log" 2>&1

if wants gemm; then
  left=$(( total - SECONDS ))
  gemm_deadline=$(( left - 20 ))
  wants engine && gemm_deadline=$(( left / 2 ))
  say "kt-bench gemm, deadline $gemm_deadline s, repeat ${GEMM_REPEAT:-3}, shapes ${GEMM_SHAPES:-${GEMM_SHAPE_SET:-square at budget $gemm_budget}}"
  copy=()
  [ -s "$out/copy-bandwidth.json" ] && copy=(--copy-json "$out/copy-bandwidth.json")
  shapes=()
  for shape in ${GEMM_SHAPES:-}; do shapes+=(--shape "$shape"); done
  [ ${#shapes[@]} -eq 0 ] && [ -n "${GEMM_SHAPE_SET:-}" ] && shapes=(--shape-set "$GEMM_SHAPE_SET")
  "$bin/kt-bench" gemm --server "$url" --budget "$gemm_budget" "${copy[@]}" "${shapes[@]}" \
    --repeat "${GEMM_REPEAT:-3}" --deadline-s "$gemm_deadline" \
    --job-timeout-s "${GEMM_JOB_TIMEOUT_S:-60}" --out-dir "$out/gemm" --latest "" \
    >>"$log" 2>&1
  echo "kt-bench gemm exit $?" | tee -a "$log"
fi

# Grouped dual GEMM + SiLU against the unfused path (DUAL_BUDGET, default 12;
# DUAL_JOB_TIMEOUT_S, default 60). Attention against PyTorch SDPA (ATTENTION_BUDGET,
# default 8; ATTENTION_SHAPES / ATTENTION_DTYPES replace the defaults; the SDPA script's work files
# stay in the temp folder, its progress goes to suite.log). Run these two without gemm/engine so
# $OUT keeps to 8 files: PHASES=tests,attention,dual.
if wants dual; then
  left=$(( total - SECONDS ))
  dual_deadline=$(( left - 20 ))
  wants attention && dual_deadline=$(( left / 3 ))
  say "kt-bench dual-gemm, deadline $dual_deadline s"
  copy=()
  [ -s "$out/copy-bandwidth.json" ] && copy=(--copy-json "$out/copy-bandwidth.json")
  "$bin/kt-bench" dual-gemm --server "$url" --budget "${DUAL_BUDGET:-12}" "${copy[@]}" \
    --deadline-s "$dual_deadline" --job-timeout-s "${DUAL_JOB_TIMEOUT_S:-60}" \
    --out-dir "$out/dual" --latest "" >>"$log" 2>&1
  echo "kt-bench dual-gemm exit $?" | tee -a "$log"
fi

if wants attention; then
  left=$(( total - SECONDS - 15 ))
  say "kt-bench attention, deadline $left s"
  shapes=()
  for shape in ${ATTENTION_SHAPES:-}; do shapes+=(--shape "$shape"); done
  dtypes=()
  for dtype in ${ATTENTION_DTYPES:-}; do dtypes+=(--dtype "$dtype"); done
  "$bin/kt-bench" attention --server "$url" --budget "${ATTENTION_BUDGET:-8}" "${shapes[@]}" \
    "${dtypes[@]}" --deadline-s $(( left > 60 ? left : 60 )) --sdpa-s "${SDPA_S:-150}" \
    --job-timeout-s "${ATTENTION_JOB_TIMEOUT_S:-40}" --work-dir "$work/attention" \
    --sdpa-script bench/sdpa_baseline.py --out-dir "$out/attention" --latest "" >>"$log" 2>&1
  echo "kt-bench attention exit $?" | tee -a "$log"
fi

if wants engine; then
  left=$(( total - SECONDS - 10 ))
  say "kt-bench engine, deadline $left s"
  engine_phases=()
  [ -n "${ENGINE_PHASES:-}" ] && engine_phases=(--phases ${ENGINE_PHASES//,/ })
  "$bin/kt-bench" engine --server "$url" --kerntuned "$bin/kerntuned" "${engine_phases[@]}" \
    --repeat-budget "$engine_budget" --sweep-budget "$engine_budget" \
    --deadline-s $(( left > 30 ? left : 30 )) --job-timeout-s "${ENGINE_JOB_TIMEOUT_S:-120}" \
    --out-dir "$out/engine" \
    >>"$log" 2>&1
  echo "kt-bench engine exit $?" | tee -a "$log"
fi
say "done"
cat "$out/gemm/table.md" "$out/engine/table.md" "$out/dual/table.md" "$out/attention/table.md" \
  2>/dev/null || true  # the phases not run have no table
