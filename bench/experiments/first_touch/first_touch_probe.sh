#!/usr/bin/env bash
# Does this machine pay for memory on first touch? The GPU machines' RAM "starts small and grows as
# it is used" (the device notes); if pages freed by one process cost as much to touch again in the
# next, every fresh allocation (an NVRTC compile allocates hundreds of MB) is slow there.
# Touches GIB GiB (default 8) in ROUNDS separate processes (default 3), one after another, and
# prints each round's seconds with MemTotal/MemFree before and after.
#   bash bench/experiments/first_touch/first_touch_probe.sh [GIB] [ROUNDS]
set -uo pipefail
gib=${1:-8}
rounds=${2:-3}
mem() { grep -E '^(MemTotal|MemFree):' /proc/meminfo | tr -s ' ' | tr '\n' ' '; }
echo "first-touch probe, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $gib GiB per round"
for r in $(seq "$rounds"); do
  before=$(mem)
  secs=$(python3 -c "
import time
t = time.perf_counter()
b = bytearray(b'\x01') * ($gib << 30)   # written, so every page is touched
print(f'{time.perf_counter() - t:.2f}')")
  echo "round $r: $secs s to write $gib GiB; before: $before; after: $(mem)"
done
