# Final check on the GPU: the whole GPU suite, then one tuning job through the CLI as a user runs it.
set -u
o=$OUT/final; mkdir -p $o; b=.device/bin
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/device.txt
date -u +%Y-%m-%dT%H:%M:%SZ >> $o/device.txt
timeout 240 $b/gpu_tests > $o/gpu-tests.log 2>&1; echo "gpu_tests exit $?"; grep -E "^\[  (PASSED|FAILED)" $o/gpu-tests.log
w=$(mktemp -d); $b/kerntuned --listen 127.0.0.1:18090 --db $w/k.db > $o/daemon.log 2>&1 & d=$!
for i in $(seq 100); do $b/kerntune --server http://127.0.0.1:18090 devices >/dev/null 2>&1 && break; sleep 0.2; done
k="$b/kerntune --server http://127.0.0.1:18090"
{ $k submit gemm --shape m=4096,n=4096,k=4096 --dtype bf16 --budget 32 --wait; $k best gemm --shape m=4096,n=4096,k=4096 --dtype bf16; $k best gemm --shape m=4096,n=4096,k=4096 --dtype bf16 --json | head -40; } > $o/cli.log 2>&1
cat $o/cli.log | head -30
kill $d; wait $d
