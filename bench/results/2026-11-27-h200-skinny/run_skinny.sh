#!/usr/bin/env bash
# skinny helper: correctness tests of skinny_stream_k, then one pinned job per decode shape.
set -u
D=.device/skinny
B=$D/pkg/bin
nvidia-smi > $OUT/smi.txt 2>&1
date -u >> $OUT/smi.txt
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TESTS_S:-240} $B/gpu_tests --gtest_filter="${FILTER:-SkinnyStreamKOnGpu.*}" > $OUT/gpu-tests.log 2>&1
  echo "gpu_tests rc $?"; grep -E "^\[  (PASSED|FAILED)|\[ratio\]|Failure|FAILED  \]" $OUT/gpu-tests.log | head -40
fi
if [ "${PROBE:-0}" = 1 ]; then
  ( $D/readprobe || (nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/readprobe $D/readprobe.cu && /tmp/readprobe) ) 2>&1 | tee $OUT/readprobe.txt
fi
$B/kt-copy-bandwidth > $OUT/copy.json 2>&1; cat $OUT/copy.json | head -c 600; echo
$B/kerntuned --listen 127.0.0.1:18080 --db /tmp/skinny.db > $OUT/daemon.log 2>&1 &
daemon=$!
for _ in $(seq 300); do $B/kerntune --server http://127.0.0.1:18080 devices >/dev/null 2>&1 && break; sleep 0.2; done
K="$B/kerntune --server http://127.0.0.1:18080"
if [ -n "${BENCH:-}" ]; then
  shapes=(); for s in $BENCH; do shapes+=(--shape "$s"); done
  echo "=== kt-gemm-bench $(date -u +%T)" | tee -a $OUT/jobs.log
  timeout ${BENCH_S:-260} $B/kt-gemm-bench --server http://127.0.0.1:18080 --budget 48 --copy-json $OUT/copy.json "${shapes[@]}" \
    --repeat 1 --deadline-s $(( ${BENCH_S:-260} - 20 )) --job-timeout-s 60 --out-dir $OUT/gemm --latest "" >> $OUT/jobs.log 2>&1
  echo "kt-gemm-bench rc $?"; grep -E "^\| [0-9]+×" $OUT/gemm/table.md | cut -d'|' -f2-6,10-11
fi
for M in ${SHAPES:-1 16 64 128}; do
  echo "=== M=$M $(date -u +%T)" | tee -a $OUT/jobs.log
  timeout ${JOB_S:-150} $K --json submit gemm --shape ${M}x4096x7168 --dtype bf16 --configs @$D/cfg_$M.json --wait > /tmp/job_$M.json 2>>$OUT/jobs.log
  id=$(python3 -c "import json;print(json.load(open('/tmp/job_$M.json'))['id'])")
  python3 - "$M" <<'PY' | tee -a $OUT/jobs.log
import json,sys
j=json.load(open(f'/tmp/job_{sys.argv[1]}.json'))
b=j.get('best') or {}
print('job',j['id'],j['status'],'best',b.get('template'),json.dumps(b.get('config')),'median',b.get('median_us'),'final',json.dumps(b.get('final')),'speedup',b.get('speedup'))
PY
  $K show $id >> $OUT/jobs.log 2>&1
  $K show $id 2>/dev/null | grep skinny_stream_k > /tmp/show_$M.txt
  grep -E "wrong|fail|crash|hang" /tmp/show_$M.txt | head -5
  grep measured /tmp/show_$M.txt | sed -E 's/ +/ /g' | sort -t' ' -k12,12g | head -6
done
kill $daemon; wait $daemon 2>/dev/null
