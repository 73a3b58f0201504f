#!/usr/bin/env bash
# The test command, in tiers. GPU tests skip themselves on a machine without an NVIDIA driver and
# GPU.
#
#   scripts/test.sh            install dependencies, build, run every suite (unit, nvrtc: the
#                              NVRTC compile tests, integration, fuzz: the committed fuzz corpora
#                              replayed, gpu, Python and browser), then the kill -9 crash test
#                              alone. What CI runs (.ci/run).
#   scripts/test.sh --quick    build the unit tests and run the pure ones (label unit: no NVRTC,
#                              no daemon, no PostgreSQL); a few minutes on 2 cores. No install.
#   scripts/test.sh --fuzz     the default, then the libFuzzer targets built with clang +
#                              AddressSanitizer + UndefinedBehaviorSanitizer (build-fuzz/), their
#                              corpora replayed and each fuzzed for KERNTUNE_FUZZ_SECONDS (20).
#   scripts/test.sh --sanitize the default, then the daemon, CLI and integration tests built with
#                              ASan + UBSan (build-asan/) and the integration tests run there.
#
# Other arguments go to ctest in place of the default selection, e.g. -R '^Store' or -L nvrtc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

quick=0
sanitize=0
fuzz=0
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --sanitize) sanitize=1 ;;
    --fuzz) fuzz=1 ;;
    *) ctest_args+=("$arg") ;;
  esac
done
jobs=${KERNTUNE_JOBS:-$(nproc)}
test_jobs=${KERNTUNE_TEST_JOBS:-2}
fuzz_seconds=${KERNTUNE_FUZZ_SECONDS:-20}
build_dir=${KERNTUNE_BUILD_DIR:-$root/build}

run_ctest() {  # run_ctest BUILD_DIR ARGS...
  local dir=$1
  shift
  (cd "$dir" && ctest --output-on-failure -j "$test_jobs" --timeout 600 "$@")
}

if [ "$quick" -eq 1 ]; then
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} \
    >/dev/null
  cmake --build "$build_dir" -j "$jobs" --target unit_tests bench_tests kt-replay
  # The PostgreSQL half of the unit tests starts a database cluster: not quick.
  run_ctest "$build_dir" -L '^unit$' -E 'PostgreSQL' "${ctest_args[@]}"
  exit
fi

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

failed=()
step() {  # step NAME COMMAND...: runs it, timed; a failure is remembered, the next steps still run
  local name=$1 start=$SECONDS
  shift
  echo "test.sh: == $name"
  if "$@"; then
    echo "test.sh: == $name passed in $((SECONDS - start)) s"
  else
    echo "test.sh: == $name FAILED after $((SECONDS - start)) s"
    failed+=("$name")
  fi
}

if [ ${#ctest_args[@]} -eq 0 ]; then
  # The kill -9 test times restarts and compile progress: beside the other suites on a 2-core
  # machine it misses its waits, so it runs alone, after them.
  serial='^CrashConsistency\.'
  step "tests" run_ctest "$build_dir" -E "$serial"
  step "crash consistency (alone)" run_ctest "$build_dir" -R "$serial"
else
  step "tests" run_ctest "$build_dir" "${ctest_args[@]}"
fi

# Sanitized builds use clang (libFuzzer needs it); their own folders, so the main build is
# untouched. Only the targets each run needs are built. -O1 with line tables: symbolized reports,
# and no NDEBUG, so assertions stay on.
sanitized_build() {  # sanitized_build DIR CMAKE_OPTION TARGETS...
  local dir=$1 option=$2
  shift 2
  CC=clang CXX=clang++ cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "$option" >/dev/null &&
    cmake --build "$dir" -j "$jobs" --target "$@" -- -k 0
}

fuzz_targets=(http_request job_request family_upload family_manifest expression)
fuzz_all() {
  local dir=$root/build-fuzz
  sanitized_build "$dir" -DKERNTUNE_FUZZ=ON "${fuzz_targets[@]/%/_fuzz}" || return 1
  run_ctest "$dir" -L fuzz || return 1
  [ "$fuzz_seconds" -gt 0 ] || return 0
  local name status=0
  for name in "${fuzz_targets[@]}"; do
    # New inputs go to a scratch corpus; the committed one is read, never written.
    local scratch=$dir/fuzz-corpus/$name
    mkdir -p "$scratch" "$dir/fuzz-artifacts"
    echo "test.sh: fuzzing $name for $fuzz_seconds s"
    if ! "$dir/bin/${name}_fuzz" -max_total_time="$fuzz_seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$dir/fuzz-artifacts/$name-" "$scratch" \
      "$root/tests/fuzz/corpus/$name" >"$dir/fuzz-$name.log" 2>&1; then
      echo "test.sh: ${name}_fuzz found a failure; its input is in $dir/fuzz-artifacts/:" >&2
      tail -n 60 "$dir/fuzz-$name.log" >&2
      status=1
    else
      grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$dir/fuzz-$name.log" |
        sed "s/^/test.sh:   $name /"
    fi
  done
  return $status
}
if [ "$fuzz" -eq 1 ]; then step "libFuzzer + sanitizers (corpus replay + ${fuzz_seconds} s per target)" fuzz_all; fi

sanitized_integration() {
  local dir=$root/build-asan
  # kt_seed_store: the Python client's and the history page's tests seed their stores with it.
  sanitized_build "$dir" -DKERNTUNE_SANITIZE=ON integration_tests kerntuned kerntune \
    kerntune-worker kt_seed_store || return 1
  # Left out: the out-of-descriptors test. UBSan's vptr check itself needs a free descriptor (it
  # probes memory through a pipe), so at the limit it reports a valid Boost error category as an
  # "invalid vptr" and stops the daemon; the plain build runs that test.
  run_ctest "$dir" -L integration -E '^DaemonLimitsTest[.]OutOfDescriptors'
}
if [ "$sanitize" -eq 1 ]; then step "integration tests under ASan + UBSan" sanitized_integration; fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all passed"
