#!/usr/bin/env bash
# Installs kerntune's build and test dependencies from Debian/Ubuntu packages.
# Idempotent: does nothing (and needs no network) when everything is already installed.
set -euo pipefail

need_sudo() { if [ "$(id -u)" -ne 0 ]; then echo sudo; fi; }
SUDO=$(need_sudo)

# Boost.Beast/Asio/URL: Debian 12 ships 1.81 alongside the default 1.74 (which lacks Boost.URL);
# Ubuntu 24.04 ships 1.83. Pick the newest one the archive has.
pick_boost() {
  for v in 1.83 1.81; do
    if dpkg -s "libboost-url${v}-dev" >/dev/null 2>&1; then echo "$v"; return; fi
  done
  for v in 1.83 1.81; do
    if apt-cache show "libboost-url${v}-dev" >/dev/null 2>&1; then echo "$v"; return; fi
  done
}

base_packages=(
  build-essential cmake ninja-build pkg-config git
  libsqlite3-dev libsqlitecpp-dev   # store
  libpq-dev                         # the PostgreSQL store's client (libpq, loaded at run time)
  postgresql                        # server binaries for the PostgreSQL store's tests (throw-away cluster)
  libmuparser-dev                   # constraint and launch formulas in family manifests
  libcli11-dev                      # command lines of kerntuned / kerntune / the worker
  libspdlog-dev libfmt-dev          # logging
  nlohmann-json3-dev                # JSON: API bodies, manifests, worker protocol
  libgtest-dev                      # tests
  libvalijson-dev                   # tests: response bodies checked against docs/openapi.json
  libssl-dev                        # SHA-256 for the content-addressed compile cache
  zlib1g-dev                        # reads the gzip-compressed recorded spaces (kt-replay, the predictor)
  prometheus-cpp-dev                # GET /metrics: registry and text exposition (core library only)
  python3                           # scripts/gen_wgmma_ops.py and the test that checks its output
  clang libclang-rt-dev             # libFuzzer + ASan/UBSan runtimes: the test command's fuzz build
  python3-setuptools python3-pip python3-wheel  # builds and installs the Python client (client/python)
  chromium chromium-driver python3-selenium     # the history page's browser test (tests/browser)
  python3-torch                     # kerntune.torch's CPU tests: recording, routing, bundles
)

missing=()
for p in "${base_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
boost=$(pick_boost || true)
if [ -z "${boost}" ]; then
  $SUDO apt-get update -qq
  boost=$(pick_boost || true)
fi
if [ -z "${boost}" ]; then
  echo "install-deps: no libboost-url1.81-dev or 1.83-dev in the package archive (Boost >= 1.81 needed)" >&2
  exit 1
fi
for p in "libboost${boost}-dev" "libboost-url${boost}-dev"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# The CUDA toolkit is not in Debian's archive: it must already be installed (nvcc is not used,
# NVRTC, the driver API header and cuBLAS are).
cuda_root=${CUDA_HOME:-/usr/local/cuda}
for f in include/nvrtc.h include/cuda.h include/cublas_v2.h; do
  if [ ! -e "$cuda_root/$f" ]; then
    echo "install-deps: $cuda_root/$f not found; install the CUDA 13 toolkit (or set CUDA_HOME)" >&2
    exit 1
  fi
done
echo "install-deps: CUDA toolkit at $cuda_root"
